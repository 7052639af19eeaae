// Getting started: the checklist Overview opens on until the team has sent its first email and seen
// it delivered (issue 35). Each step ticks itself from real state — a domain exists and is
// verified, a key exists, an email was sent, one was delivered — read through the same REST API as
// everything else; the last one is sent from here through POST /emails, as the SDKs send.
import { useState } from 'preact/hooks';
import { page, post, url } from '../api';
import { canSendFrom } from './emails';
import { Code, ErrorBox, Field, type InputEvent, Tabs, useAction, useGet, val } from '../ui';

/** Statuses an email reaches only once a mail server accepted it (src/event-catalogue.ts). */
const DELIVERED = 'delivered,opened,clicked,complained';

const dismissedKey = (team: string) => `posthorn.getting-started.dismissed.${team}`;

/** The checklist, or nothing once the team dismissed it (per browser: a preference, not team state). */
export function GettingStarted({ team, onSent }: { team: string; onSent?: () => void }) {
  const [dismissed, setDismissed] = useState(() => localStorage.getItem(dismissedKey(team)) === '1');
  const domains = useGet(dismissed ? null : '/domains');
  const keys = useGet(dismissed ? null : '/api-keys');
  const sent = useGet(dismissed ? null : url('/emails', { limit: 1 }));
  const delivered = useGet(dismissed ? null : url('/emails', { limit: 1, status: DELIVERED }));
  if (dismissed || !domains.data || !keys.data || !sent.data || !delivered.data) return null;
  const sending = domains.data.data.filter(canSendFrom);
  const first = sent.data.data[0];
  const done = {
    domain: sending.length > 0,
    key: keys.data.data.length > 0,
    sent: !!first,
    delivered: delivered.data.data.length > 0,
  };
  const all = done.domain && done.key && done.sent && done.delivered;
  const count = Object.values(done).filter(Boolean).length;
  // What the checklist sent changes the page around it too (Overview's counts and chart).
  const reload = () => {
    sent.reload();
    delivered.reload();
    onSent?.();
  };
  return (
    <section class="card getting-started" aria-labelledby="gs-title">
      <div class="row-between">
        <h2 id="gs-title" class="card-title">
          {all ? 'You are all set' : 'Get started'}
        </h2>
        <span class="muted small">{count} of 4 done</span>
      </div>
      <ol class="checklist">
        <Step n={1} done={done.domain} title="Add a domain">
          {sending.length ? (
            <p class="small">
              You send from <a href={page`/dashboard/domains/${sending[0].id}`}>{sending[0].name}</a>.
            </p>
          ) : domains.data.data.length ? (
            <p class="small">
              Publish the DNS records of <a href={page`/dashboard/domains/${domains.data.data[0].id}`}>{domains.data.data[0].name}</a> at your DNS host: its
              page checks them live and says which are still missing.
            </p>
          ) : (
            <p class="small">
              <a href="/dashboard/domains?add=1">Add the domain you send from</a>. Its page lists the DNS records to publish (DKIM, SPF, the return path) and
              verifies them as they appear.
            </p>
          )}
        </Step>
        <Step n={2} done={done.key} title="Create an API key">
          <p class="small">
            {done.key ? 'Use one of your keys' : <a href="/dashboard/api-keys">Create a key</a>} with any Resend SDK, plain HTTP, or SMTP:{' '}
            {done.key && <a href="/dashboard/api-keys">API keys</a>}
          </p>
          <Snippets from={sending[0]?.name} />
        </Step>
        <Step n={3} done={done.sent} title="Send your first email">
          {first ? (
            <p class="small">
              Sent: <a href={page`/dashboard/emails/${first.id}`}>{first.subject || '(no subject)'}</a>.
            </p>
          ) : sending.length ? (
            <FirstEmail domain={sending[0].name} onSent={reload} />
          ) : (
            <p class="small muted">Once a domain is verified, send one from here.</p>
          )}
        </Step>
        <Step n={4} done={done.delivered} title="See it delivered">
          {done.delivered ? (
            <p class="small">
              <a href={page`/dashboard/emails/${delivered.data.data[0].id}`}>Delivered</a>: its page shows every attempt, the receiving server's reply and the
              TLS it used.
            </p>
          ) : first ? (
            <p class="small">
              <a href={page`/dashboard/emails/${first.id}`}>Follow it on its page</a>: each delivery attempt and the receiving server's answer.{' '}
              <button type="button" class="btn small" onClick={reload}>
                Check again
              </button>
            </p>
          ) : (
            <p class="small muted">Its page shows every delivery attempt and the receiving server's reply.</p>
          )}
        </Step>
      </ol>
      {all && (
        <button
          type="button"
          class="btn"
          onClick={() => {
            localStorage.setItem(dismissedKey(team), '1');
            setDismissed(true);
          }}
        >
          Dismiss
        </button>
      )}
    </section>
  );
}

function Step({ n, done, title, children }: { n: number; done: boolean; title: string; children: preact.ComponentChildren }) {
  return (
    <li class={done ? 'done' : ''}>
      <span class="step-mark" aria-hidden="true">
        {done ? '✓' : n}
      </span>
      <div>
        <h3>
          {title}
          <span class="sr-only">{done ? ' (done)' : ' (to do)'}</span>
        </h3>
        {children}
      </div>
    </li>
  );
}

/**
 * Copy-ready ways in, aimed at this install: the `resend` SDK with `baseUrl`, curl, and SMTP (user
 * `resend`, the key as password; ports are config.example.toml's defaults, `smtp.starttls_ports`
 * and `smtp.tls_ports`).
 */
function Snippets({ from }: { from?: string }) {
  const [tab, setTab] = useState('node');
  const base = location.origin;
  const sender = `onboarding@${from ?? 'your-domain.com'}`;
  const text = {
    node: `// npm install resend   (or set RESEND_BASE_URL=${base} and leave baseUrl out)
import { Resend } from 'resend';

const resend = new Resend('re_your_api_key', { baseUrl: '${base}' });

await resend.emails.send({
  from: '${sender}',
  to: 'delivered@resend.dev',
  subject: 'Hello from Posthorn',
  html: '<p>It works!</p>',
});`,
    curl: `curl -X POST '${base}/emails' \\
  -H 'Authorization: Bearer re_your_api_key' \\
  -H 'Content-Type: application/json' \\
  -d '{"from": "${sender}", "to": "delivered@resend.dev", "subject": "Hello from Posthorn", "html": "<p>It works!</p>"}'`,
    smtp: `Host:     ${location.hostname}
Port:     587 (STARTTLS) or 465 (TLS)
Username: resend
Password: re_your_api_key`,
  }[tab]!;
  return (
    <div class="snippets">
      <Tabs
        label="How to send"
        current={tab}
        onChange={setTab}
        tabs={[
          { id: 'node', label: 'Node.js' },
          { id: 'curl', label: 'curl' },
          { id: 'smtp', label: 'SMTP' },
        ]}
      />
      <div role="tabpanel" aria-labelledby={`tab-${tab}`}>
        <Code copy label={`${tab === 'node' ? 'Node.js' : tab === 'curl' ? 'curl' : 'SMTP'} example`}>
          {text}
        </Code>
      </div>
    </div>
  );
}

/** A first email from a verified domain, by default to the sandbox address that is always delivered (README "Sandbox addresses"). */
function FirstEmail({ domain, onSent }: { domain: string; onSent: () => void }) {
  const [form, setForm] = useState({ from: `Posthorn <onboarding@${domain}>`, to: 'delivered@resend.dev' });
  const set = (k: keyof typeof form) => (e: InputEvent) => setForm({ ...form, [k]: val(e) });
  const send = useAction(async () => {
    await post('/emails', {
      from: form.from,
      to: [form.to],
      subject: 'Hello from Posthorn',
      html: '<p>Your first email through Posthorn. It works!</p>',
    });
    onSent();
  });
  return (
    <form
      class="first-email"
      onSubmit={(e) => {
        e.preventDefault();
        send.run();
      }}
    >
      <ErrorBox error={send.error} />
      <div class="form-row">
        <Field id="gs-from" label="From">
          <input id="gs-from" required value={form.from} onInput={set('from')} />
        </Field>
        <Field
          id="gs-to"
          label="To"
          hint="delivered@resend.dev is a test address: with delivery.sandbox on (the default) it is always delivered and nothing leaves."
        >
          <input id="gs-to" type="email" required value={form.to} onInput={set('to')} />
        </Field>
      </div>
      <button type="submit" class="btn primary" disabled={send.busy}>
        Send test email
      </button>
    </form>
  );
}
