// Sent emails: the list with filters (status, text, dates) and cursor paging; one email with its
// events, delivery attempts (MX host and address, TLS, replies), preview, text, source and
// attachments; cancel and reschedule a scheduled email; hold, release, retry and cancel a queued one.
import { useState } from 'preact/hooks';
import type { DomainSummary } from '../../../src/schemas/domains';
import { post, patch, url, page } from '../api';
import { navigate, setQuery, useLocation } from '../router';
import {
  Badge,
  BounceClassBadge,
  bytes,
  Card,
  Code,
  CopyButton,
  EmailBadge,
  Empty,
  ErrorBox,
  ExportButton,
  Field,
  FormDialog,
  KeyValue,
  Loading,
  notify,
  PagedTable,
  PageHeader,
  Section,
  Table,
  Tabs,
  Time,
  useAction,
  useGet,
  usePaged,
  val,
  type InputEvent,
  ask,
} from '../ui';
import { useLive } from '../live';
import { EmailPreview } from './preview';
import { InsightList, insightCounts, SpamScore } from './insights';
import { EMAIL_BADGES, EMAIL_STATUSES } from '../../../src/event-catalogue';
import { useCan } from '../role';

export function EmailsPage() {
  const member = useCan('member');
  const { query } = useLocation();
  const status = query.get('status') ?? '';
  const q = query.get('q') ?? '';
  const since = query.get('since') ?? '';
  const until = query.get('until') ?? '';
  const [text, setText] = useState(q);
  const [sending, setSending] = useState(false);
  const filters = {
    status,
    q,
    since: since ? new Date(`${since}T00:00:00`).toISOString() : null,
    until: until ? new Date(`${until}T23:59:59.999`).toISOString() : null,
  };
  const paged = usePaged('/emails', filters);
  useLive(['email'], paged.reload);
  const filtered = !!(status || q || since || until);
  return (
    <>
      <PageHeader
        need="member"
        title="Emails"
        description="Every email sent through the API, SMTP or a broadcast."
        actions={
          <>
            <ExportButton path={url('/emails/export', filters)} what="the emails" />
            <button type="button" class="btn primary" onClick={() => setSending(true)}>
              Send email
            </button>
          </>
        }
      />
      <search>
        <form
          class="filters"
          onSubmit={(e) => {
            e.preventDefault();
            setQuery({ q: text, after: null, before: null });
          }}
        >
          <label class="grow">
            <span class="sr-only">Search by recipient, sender or subject</span>
            <input type="search" placeholder="Search recipient, sender or subject" value={text} onInput={(e) => setText(val(e))} />
          </label>
          <label>
            <span class="sr-only">Status</span>
            <select value={status} onChange={(e) => setQuery({ status: val(e), after: null, before: null })}>
              <option value="">All statuses</option>
              {EMAIL_STATUSES.map((s) => (
                <option value={s}>{EMAIL_BADGES[s].label}</option>
              ))}
            </select>
          </label>
          <label class="date">
            <span>From</span>
            <input type="date" value={since} onChange={(e) => setQuery({ since: val(e), after: null, before: null })} />
          </label>
          <label class="date">
            <span>To</span>
            <input type="date" value={until} onChange={(e) => setQuery({ until: val(e), after: null, before: null })} />
          </label>
          <button class="btn" type="submit">
            Search
          </button>
        </form>
      </search>
      <PagedTable
        paged={paged}
        caption="Sent emails"
        href={(e) => page`/dashboard/emails/${e.id}`}
        empty={
          filtered ? (
            <Empty title="No email matches these filters." action={<a href="/dashboard/emails">Clear the filters</a>} />
          ) : (
            <Empty
              title="No emails yet."
              action={
                member && (
                  <button type="button" class="btn primary" onClick={() => setSending(true)}>
                    Send your first email
                  </button>
                )
              }
            >
              Send one from here, with the API (<code>POST /emails</code>) or over SMTP. A verified domain is needed first.
            </Empty>
          )
        }
        columns={[
          { label: 'To', render: (e) => <span class="truncate">{e.to.join(', ')}</span> },
          { label: 'Subject', render: (e) => <span class="truncate">{e.subject}</span> },
          { label: 'Status', render: (e) => <EmailBadge event={e.last_event} /> },
          { label: 'Sent', render: (e) => <Time iso={e.scheduled_at ?? e.created_at} /> },
        ]}
      />
      <SendDialog open={sending} onClose={() => setSending(false)} />
    </>
  );
}

/** Can the team send from this domain now? A verified domain that lost a record keeps sending while it is re-checked (temporary_failure). */
export const canSendFrom = (d: DomainSummary) => ['verified', 'partially_verified', 'temporary_failure'].includes(d.status);

function SendDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const domains = useGet(open ? '/domains' : null);
  const verified = (domains.data?.data ?? []).filter(canSendFrom);
  const [form, setForm] = useState({ from: '', to: '', subject: '', html: '', scheduled_at: '' });
  const set = (k: keyof typeof form) => (e: InputEvent) => setForm({ ...form, [k]: val(e) });
  const action = useAction(async () => {
    const res = await post('/emails', {
      from: form.from,
      to: form.to
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
      subject: form.subject,
      html: form.html,
      ...(form.scheduled_at ? { scheduled_at: form.scheduled_at } : {}),
    });
    notify('Email accepted.');
    onClose();
    navigate(page`/dashboard/emails/${res.id}`);
  });
  return (
    <FormDialog open={open} title="Send an email" wide onClose={onClose} action={action} submit={form.scheduled_at ? 'Schedule' : 'Send'}>
      {domains.data && !verified.length && (
        <p class="callout">
          No verified domain yet: <a href="/dashboard/domains">add and verify one</a> first.
        </p>
      )}
      <Field id="send-from" label="From" hint={verified.length ? `An address at ${verified.map((d) => d.name).join(', ')}` : undefined}>
        <input id="send-from" required placeholder={`Acme <hello@${verified[0]?.name ?? 'example.com'}>`} value={form.from} onInput={set('from')} />
      </Field>
      <Field id="send-to" label="To" hint="Separate several addresses with commas.">
        <input id="send-to" required value={form.to} onInput={set('to')} />
      </Field>
      <Field id="send-subject" label="Subject">
        <input id="send-subject" required value={form.subject} onInput={set('subject')} />
      </Field>
      <Field id="send-html" label="HTML body">
        <textarea id="send-html" rows={6} required value={form.html} onInput={set('html')} placeholder="<p>Hello from Posthorn</p>" />
      </Field>
      <Field id="send-when" label="Schedule (optional)" hint='An ISO 8601 time or words such as "in 1 hour".'>
        <input id="send-when" value={form.scheduled_at} onInput={set('scheduled_at')} />
      </Field>
    </FormDialog>
  );
}

export function EmailPage({ id }: { id: string }) {
  const email = useGet(url('/emails/:id', { id }));
  const events = useGet(url('/emails/:id/events', { id, limit: 100 }));
  // Sent → Delivered without a reload: the live stream tells of every event of this email.
  useLive(
    ['email'],
    () => {
      email.reload();
      events.reload();
    },
    id,
  );
  const [tab, setTab] = useState('preview');
  const [rescheduling, setRescheduling] = useState(false);
  const act = (action: 'cancel' | 'hold' | 'release' | 'retry', done: string) =>
    useAction(async () => {
      await post(url(`/emails/:id/${action}`, { id }));
      notify(done);
      email.reload();
      events.reload();
    });
  const cancel = act('cancel', 'The email was canceled.');
  const hold = act('hold', 'The email is held: it is not tried until you release it.');
  const release = act('release', 'The email was released.');
  const retry = act('retry', 'The email will be tried again now.');
  if (email.error) return <ErrorBox error={email.error} />;
  if (!email.data) return <Loading />;
  const e = email.data;
  return (
    <>
      <PageHeader
        need="member"
        back={{ href: '/dashboard/emails', label: 'Emails' }}
        title={e.subject || '(no subject)'}
        description={
          <>
            <EmailBadge event={e.last_event} /> <span class="muted">to {e.to.join(', ')}</span>
          </>
        }
        actions={
          e.last_event === 'scheduled' ? (
            <>
              <button type="button" class="btn" onClick={() => setRescheduling(true)}>
                Reschedule
              </button>
              <button
                type="button"
                class="btn danger"
                disabled={cancel.busy}
                onClick={async () => (await ask('Cancel this scheduled email?', { confirm: 'Cancel the email' })) && cancel.run()}
              >
                Cancel send
              </button>
            </>
          ) : (
            e.queue && (
              <>
                {e.queue.held === 'email' ? (
                  <button type="button" class="btn" disabled={release.busy} onClick={() => release.run()}>
                    Release
                  </button>
                ) : e.queue.held === 'destination' ? null : (
                  <>
                    <button type="button" class="btn" disabled={retry.busy} onClick={() => retry.run()}>
                      Retry now
                    </button>
                    <button type="button" class="btn" disabled={hold.busy} onClick={() => hold.run()}>
                      Hold
                    </button>
                  </>
                )}
                <button
                  type="button"
                  class="btn danger"
                  disabled={cancel.busy}
                  onClick={async () => (await ask(`Cancel delivery to ${e.queue!.recipients.join(', ')}?`, { confirm: 'Cancel delivery' })) && cancel.run()}
                >
                  Cancel delivery
                </button>
              </>
            )
          )
        }
      />
      <ErrorBox error={cancel.error ?? hold.error ?? release.error ?? retry.error} />
      {e.queue && (
        <p class="muted small">
          {e.queue.held === 'email'
            ? 'Held: '
            : e.queue.held === 'destination'
              ? 'Held with its destination (release it on the overview): '
              : 'Waiting in the delivery queue: '}
          {e.queue.recipients.join(', ')}
        </p>
      )}
      <div class="detail-grid">
        <div class="detail-main">
          <Card>
            <Tabs
              label="Email content"
              current={tab}
              onChange={setTab}
              tabs={[
                { id: 'preview', label: 'Preview' },
                { id: 'text', label: 'Plain text' },
                { id: 'source', label: 'Source' },
                { id: 'attachments', label: 'Attachments' },
              ]}
            />
            <div role="tabpanel" aria-labelledby={`tab-${tab}`} class="tab-panel">
              {tab === 'preview' && (e.html ? <EmailPreview html={e.html} /> : <p class="muted">This email has no HTML part.</p>)}
              {tab === 'text' &&
                (e.text ? <Code wrap>{e.text}</Code> : <p class="muted">No plain-text part was given; mail clients show one derived from the HTML.</p>)}
              {tab === 'source' && <RawSource id={id} />}
              {tab === 'attachments' && <Attachments id={id} />}
            </div>
          </Card>
          <Section title="Delivery attempts">
            {!e.attempts.length ? (
              e.last_event === 'suppressed' ? (
                <Suppressed to={e.to} />
              ) : (
                <p class="muted">No attempt yet{e.last_event === 'scheduled' ? ': the email is scheduled.' : '.'}</p>
              )
            ) : (
              <Table
                caption="Delivery attempts"
                rows={e.attempts.map((a, i) => ({ ...a, id: String(i) })).reverse()}
                columns={[
                  { label: 'When', render: (a) => <Time iso={a.at} exact /> },
                  {
                    label: 'Server',
                    render: (a) => (
                      <>
                        <span class="mono">
                          {a.host ?? `${a.domain} (no connection)`}
                          {a.ip && <span class="muted small"> [{a.ip}]</span>}
                        </span>
                        {/* Resend's test addresses: answered by Posthorn itself, nothing sent (docs/api.md §7.11). */}
                        {a.simulated && (
                          <>
                            {' '}
                            <Badge value="simulated" />
                            <div class="small muted">Sandbox address: no DNS lookup, no connection</div>
                          </>
                        )}
                      </>
                    ),
                  },
                  {
                    label: 'TLS',
                    render: (a) => (
                      <>
                        {a.tls === null ? (
                          '—'
                        ) : a.tls ? (
                          <>
                            <Badge value="verified" label={a.tls_version ?? 'TLS'} />
                            {a.tls_cipher && <div class="mono small muted">{a.tls_cipher}</div>}
                          </>
                        ) : (
                          <Badge value="delivery_delayed" label="plain" />
                        )}
                        {/* The destination's MTA-STS policy, also when it refused the attempt (docs/mail.md §3.2). */}
                        {a.mta_sts && <div class="small muted">MTA-STS {a.mta_sts}</div>}
                      </>
                    ),
                  },
                  {
                    label: 'Reply',
                    render: (a) => (
                      <ul class="plain attempt-replies">
                        {a.results.map((r) => (
                          <li>
                            <span class={`code-pill c${String(r.code)[0]}`}>{r.enhanced_code ? `${r.code} ${r.enhanced_code}` : r.code}</span>{' '}
                            {r.class && (
                              <>
                                <BounceClassBadge value={r.class} />{' '}
                              </>
                            )}
                            <span class="mono small attempt-reply">{r.reply.replace(/^\d{3}[ -]/, '').replace(/^\d\.\d{1,3}\.\d{1,3}\s+/, '')}</span>{' '}
                            <span class="muted small">({r.recipient})</span>
                          </li>
                        ))}
                      </ul>
                    ),
                  },
                  { label: 'Took', render: (a) => `${a.duration_ms} ms`, class: 'num' },
                ]}
              />
            )}
          </Section>
          <EmailInsights id={id} />
        </div>
        <aside class="detail-side">
          <Card>
            <KeyValue
              rows={[
                ['From', e.from],
                ['To', e.to.join(', ')],
                ['Cc', e.cc?.length ? e.cc.join(', ') : null],
                ['Bcc', e.bcc?.length ? e.bcc.join(', ') : null],
                ['Reply to', e.reply_to?.length ? e.reply_to.join(', ') : null],
                ['Created', <Time iso={e.created_at} exact />],
                ['Scheduled for', e.scheduled_at ? <Time iso={e.scheduled_at} exact /> : null],
                [
                  'Email id',
                  <span class="mono small">
                    {e.id} <CopyButton text={e.id} />
                  </span>,
                ],
                ['Message-ID', <span class="mono small break">{e.message_id}</span>],
                ['Tags', e.tags?.length ? e.tags.map((t) => <span class="tag">{`${t.name}: ${t.value}`}</span>) : null],
              ]}
            />
          </Card>
          <Card>
            <h2 class="card-title">Events</h2>
            {events.data && !events.data.data.length && <p class="muted">No events yet.</p>}
            <ol class="timeline">
              {(events.data?.data ?? []).map((ev) => (
                <li>
                  <EmailBadge event={ev.type} />
                  {ev.automated && <span class="muted small"> automated ({ev.automated})</span>}
                  <div class="small muted">
                    <Time iso={ev.created_at} exact />
                    {ev.data.to && ev.type !== 'email.sent' ? ` · ${ev.data.to.join(', ')}` : ''}
                  </div>
                  {ev.data.bounce && <div class="small mono">{ev.data.bounce.message}</div>}
                  {ev.data.click?.link && <div class="small mono break">{ev.data.click.link}</div>}
                </li>
              ))}
            </ol>
          </Card>
        </aside>
      </div>
      <RescheduleDialog
        open={rescheduling}
        id={id}
        onClose={() => setRescheduling(false)}
        onDone={() => {
          email.reload();
          events.reload();
        }}
      />
    </>
  );
}

/** The email's deliverability insights, made when first asked for (GET /emails/{id}/insights); "Check again" makes them anew. */
function EmailInsights({ id }: { id: string }) {
  const [refresh, setRefresh] = useState(false);
  const insights = useGet(url('/emails/:id/insights', { id, refresh: refresh ? 'true' : null }));
  const again = () => (refresh ? insights.reload() : setRefresh(true));
  const d = insights.data;
  return (
    <Section
      title="Insights"
      actions={
        <button type="button" class="btn small" disabled={insights.loading} onClick={again}>
          Check again
        </button>
      }
    >
      {insights.error && <ErrorBox error={insights.error} />}
      {!d && !insights.error && <Loading />}
      {d && (
        <Card>
          <div class="row-between">
            <p class="small">
              <strong>{insightCounts(d.insights)}</strong>
            </p>
            <p class="small muted">
              Checked <Time iso={d.computed_at} />
            </p>
          </div>
          <SpamScore spam={d.spam} insights={d.insights} />
          <InsightList insights={d.insights} spam={d.spam} />
        </Card>
      )}
    </Section>
  );
}

function RescheduleDialog({ open, id, onClose, onDone }: { open: boolean; id: string; onClose: () => void; onDone: () => void }) {
  const [when, setWhen] = useState('');
  const action = useAction(async () => {
    const at = /^\d{4}-\d\d-\d\dT\d\d:\d\d$/.test(when) ? new Date(when).toISOString() : when;
    await patch(url('/emails/:id', { id }), { scheduled_at: at });
    notify('The email was rescheduled.');
    onDone();
    onClose();
  });
  return (
    <FormDialog open={open} title="Reschedule" onClose={onClose} action={action} submit="Reschedule">
      <Field id="resched" label="Send at">
        <input id="resched" type="datetime-local" required value={when} onInput={(e) => setWhen(val(e))} />
      </Field>
    </FormDialog>
  );
}

function RawSource({ id }: { id: string }) {
  const raw = useGet(url('/emails/:id/raw', { id }));
  if (raw.error) return <ErrorBox error={raw.error} />;
  if (raw.data === undefined) return <Loading />;
  const text = raw.data.length > 200_000 ? `${raw.data.slice(0, 200_000)}\n… (${bytes(raw.data.length)} in all)` : raw.data;
  return (
    <>
      <div class="row-actions">
        <CopyButton text={raw.data} label="Copy source" />
      </div>
      <Code>{text}</Code>
    </>
  );
}

function Attachments({ id }: { id: string }) {
  const list = useGet(url('/emails/:id/attachments', { id }));
  if (list.error) return <ErrorBox error={list.error} />;
  if (!list.data) return <Loading />;
  if (!list.data.data.length) return <p class="muted">No attachments.</p>;
  return (
    <ul class="files">
      {list.data.data.map((a) => (
        <li>
          <a href={a.download_url} download={a.filename ?? 'attachment'}>
            {a.filename ?? '(unnamed)'}
          </a>{' '}
          <span class="muted small">
            {a.content_type} · {bytes(a.size)}
          </span>
        </li>
      ))}
    </ul>
  );
}

/**
 * Why a suppressed email was never tried: each recipient's entry on the suppression list (its
 * origin, the bounce class and the reply that put it there, the email that caused it; docs/api.md §16).
 */
function Suppressed({ to }: { to: string[] }) {
  return (
    <Card>
      <p>Not sent: {to.length === 1 ? 'the recipient is' : 'its recipients are'} on your suppression list.</p>
      <ul class="plain suppressed-why">
        {to.map((address) => (
          <SuppressionWhy address={address} />
        ))}
      </ul>
      <p class="muted small">
        Remove an address from the list in <a href="/dashboard/audiences?tab=suppressions">Audiences → Suppressions</a> to send to it again.
      </p>
    </Card>
  );
}

const ORIGIN_WHY = {
  bounce: 'a message to it bounced permanently',
  complaint: 'its owner reported a message as spam',
  manual: 'it was added by hand',
} as const;

function SuppressionWhy({ address }: { address: string }) {
  // The address as written in `to` may carry a display name: the list is keyed by the bare address.
  const bare = address.match(/<([^>]+)>\s*$/)?.[1] ?? address;
  const s = useGet(url('/suppressions/:id_or_email', { id_or_email: bare }));
  if (s.error) return <li class="small">{bare}: not on the list (any more).</li>;
  if (!s.data) return <li class="muted small">{bare}…</li>;
  const x = s.data;
  return (
    <li>
      <strong>{x.email}</strong> since <Time iso={x.created_at} exact />: {ORIGIN_WHY[x.origin]}
      {x.source_id && (
        <>
          {' '}
          (<a href={page`/dashboard/emails/${x.source_id}`}>this email</a>)
        </>
      )}
      .
      {(x.class || x.reply) && (
        <div class="suppression-reply">
          {x.class && (
            <span>
              <BounceClassBadge value={x.class} />
            </span>
          )}
          {x.reply && <span class="mono small break">{x.reply}</span>}
        </div>
      )}
    </li>
  );
}
