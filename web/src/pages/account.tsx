// Pages of one's account reached from a mail or the sign-in page (docs/api.md §19.16): asking for
// a password reset, choosing the new password with the mailed link, confirming a new address;
// and, inside the dashboard, the SMTP settings (how to send with an API key) and the team's usage.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { post, url } from '../api';
import {
  Card,
  Code,
  CopyButton,
  ErrorBox,
  Field,
  Form,
  NewPasswordFields,
  KeyValue,
  Loading,
  num,
  PageHeader,
  Section,
  Time,
  useAction,
  useGet,
  val,
} from '../ui';

function AuthCard({ title, children }: { title: string; children: ComponentChildren }) {
  document.title = `${title} · Posthorn`;
  return (
    <div class="auth-page">
      <main class="auth-card" id="main">
        <div class="brand big">
          <img src="/dashboard/assets/icon.svg" alt="" width="32" height="32" />
          <span>Posthorn</span>
        </div>
        <h1>{title}</h1>
        {children}
        <p class="muted small center">
          <a href="/dashboard/sign-in">Back to sign-in</a>
        </p>
      </main>
    </div>
  );
}

export function ForgotPasswordPage() {
  const [email, setEmail] = useState('');
  const [done, setDone] = useState(false);
  const action = useAction(async () => {
    await post('/auth/password-reset', { email });
    setDone(true);
  });
  return (
    <AuthCard title="Reset your password">
      {done ? (
        <p class="callout success" role="status">
          If an account uses {email}, a link to choose a new password is on its way. It works once, for an hour.
        </p>
      ) : (
        <Form action={action}>
          <p class="muted">We mail a link to choose a new password to your account's address.</p>
          <Field id="reset-email" label="Email">
            {/* biome-ignore lint/a11y/noAutofocus: the page is this one field. */}
            <input id="reset-email" type="email" autoComplete="username" required autoFocus value={email} onInput={(e) => setEmail(val(e))} />
          </Field>
          <button class="btn primary block" type="submit" disabled={action.busy}>
            Send the link
          </button>
        </Form>
      )}
    </AuthCard>
  );
}

export function ResetPasswordPage({ token }: { token: string }) {
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const [done, setDone] = useState(false);
  const action = useAction(async () => {
    if (password !== again) throw new Error('The two passwords differ.');
    await post(url('/auth/password-reset/:token', { token }), { password });
    setDone(true);
  });
  return (
    <AuthCard title="Choose a new password">
      {done ? (
        <p class="callout success" role="status">
          Your password is changed and every session was signed out. <a href="/dashboard/sign-in">Sign in</a> with the new one.
        </p>
      ) : (
        <Form action={action}>
          <NewPasswordFields password={password} setPassword={setPassword} again={again} setAgain={setAgain} />
          <button class="btn primary block" type="submit" disabled={action.busy}>
            Change password
          </button>
        </Form>
      )}
    </AuthCard>
  );
}

export function ConfirmEmailPage({ token }: { token: string }) {
  const [email, setEmail] = useState<string | null>(null);
  const action = useAction(async () => {
    const r = await post(url('/auth/email/confirm/:token', { token }));
    setEmail(r.email);
  });
  return (
    <AuthCard title="Confirm your new address">
      {email ? (
        <p class="callout success" role="status">
          Your account now uses {email}. Sign in with it from now on.
        </p>
      ) : (
        <>
          <ErrorBox error={action.error} />
          <p class="muted">Your Posthorn account will use the address this link was mailed to.</p>
          <button class="btn primary block" type="button" disabled={action.busy} onClick={() => action.run()}>
            Confirm the new address
          </button>
        </>
      )}
    </AuthCard>
  );
}

/** SMTP settings: the host, ports and user name, and snippets that use an API key as the password. */
export function SmtpSettingsPage() {
  const smtp = useGet('/smtp-settings');
  const s = smtp.data;
  const port = s ? (s.tls_ports[0] ?? s.starttls_ports[0] ?? 465) : 465;
  const secure = !!s && s.tls_ports.includes(port);
  const nodemailer = s
    ? `import nodemailer from 'nodemailer';

const transport = nodemailer.createTransport({
  host: '${s.host}',
  port: ${port},
  secure: ${secure},
  auth: { user: '${s.username}', pass: process.env.POSTHORN_API_KEY },
});`
    : '';
  const swaks = s
    ? `swaks --server ${s.host}:${port} ${secure ? '--tls-on-connect' : '--tls'} \\
  --auth-user ${s.username} --auth-password "$POSTHORN_API_KEY" \\
  --from you@your-domain.example --to someone@example.com`
    : '';
  return (
    <>
      <PageHeader title="SMTP" description="Send through Posthorn from any application that speaks SMTP: the password is an API key." />
      <ErrorBox error={smtp.error} />
      {!s && !smtp.error && <Loading />}
      {s && (
        <>
          <Card>
            <KeyValue
              rows={[
                [
                  'Host',
                  <span class="copy-cell">
                    <code>{s.host}</code> <CopyButton text={s.host} />
                  </span>,
                ],
                ['Port (TLS)', s.tls_ports.length ? s.tls_ports.join(', ') : <span class="muted">none configured (smtp.tls_ports)</span>],
                ['Port (STARTTLS)', s.starttls_ports.length ? s.starttls_ports.join(', ') : <span class="muted">none configured (smtp.starttls_ports)</span>],
                [
                  'Username',
                  <span class="copy-cell">
                    <code>{s.username}</code> <CopyButton text={s.username} />
                  </span>,
                ],
                [
                  'Password',
                  <span class="copy-cell">
                    An API key of this team, full access or sending access only.{' '}
                    <a class="btn small" href="/dashboard/api-keys">
                      API keys
                    </a>
                  </span>,
                ],
              ]}
            />
          </Card>
          <Section title="Nodemailer" actions={<CopyButton text={nodemailer} label="Copy snippet" />}>
            <Code label="Nodemailer snippet">{nodemailer}</Code>
          </Section>
          <Section title="swaks (command line)" actions={<CopyButton text={swaks} label="Copy command" />}>
            <Code label="swaks command">{swaks}</Code>
          </Section>
        </>
      )}
    </>
  );
}

/** The team's usage (GET /usage): emails today and this month, contacts, domains. */
export function UsagePage() {
  const usage = useGet('/usage');
  const u = usage.data;
  return (
    <>
      <PageHeader title="Usage" description="What this team has used of this server. Counts reset at midnight and on the 1st (UTC)." />
      <ErrorBox error={usage.error} />
      {!u && !usage.error && <Loading />}
      {u && (
        <>
          <div class="stats">
            <Stat
              label="Emails today"
              value={num(u.emails.daily.used)}
              sub={u.emails.daily.limit ? `of ${num(u.emails.daily.limit)} a day` : 'no daily limit'}
            />
            <Stat
              label="Emails this month"
              value={num(u.emails.monthly.used)}
              sub={`${num(u.emails.monthly.sent)} sent, ${num(u.emails.monthly.received)} received`}
            />
            <Stat label="Contacts" value={num(u.contacts.used)} />
            <Stat label="Domains" value={num(u.domains.used)} />
          </div>
          <Card>
            <KeyValue
              rows={[
                ['Sent today', num(u.emails.daily.sent)],
                ['Received today', num(u.emails.daily.received)],
                ['Segments', num(u.segments.used)],
                ['Broadcasts', num(u.broadcasts.used)],
                ['API request limit', `${num(u.rate_limit.limit)} requests per ${u.rate_limit.duration}`],
                ['Daily count resets', <Time iso={u.emails.daily.resets_at} exact />],
                ['Monthly count resets', <Time iso={u.emails.monthly.resets_at} exact />],
              ]}
            />
          </Card>
        </>
      )}
    </>
  );
}

function Stat({ label, value, sub }: { label: string; value: string; sub?: string }) {
  return (
    <div class="stat">
      <span class="stat-label">{label}</span>
      <span class="stat-value">{value}</span>
      {sub && <span class="stat-sub muted">{sub}</span>}
    </div>
  );
}
