// Settings: password, two-factor sign-in (TOTP), sessions, the team's sign-in switches, team
// members (roles) and invitations, and the way to the audit log.
import { useState } from 'preact/hooks';
import type { Member, Role, Session, TotpEnrolment } from '../../../src/schemas/accounts';
import { del, patch, post, url } from '../api';
import { givable, useCan } from '../role';
import { Badge, Card, CopyButton, ErrorBox, Field, Form, FormDialog, notify, PageHeader, Section, Table, Time, useAction, useGet, val, ask } from '../ui';

export function SettingsPage({ session }: { session: Session }) {
  const admin = useCan('admin');
  return (
    <>
      <PageHeader
        title="Settings"
        description={`Signed in as ${session.user.email} (${session.user.role}) in ${session.team.name}.`}
        actions={
          <>
            <a class="btn" href="/dashboard/settings/smtp">
              SMTP
            </a>
            <a class="btn" href="/dashboard/settings/usage">
              Usage
            </a>
            {admin && (
              <a class="btn" href="/dashboard/settings/audit-log">
                Audit log
              </a>
            )}
          </>
        }
      />
      <TeamName />
      <div class="grid2">
        <Password />
        <TwoFactor enabled={session.user.totp_enabled} />
      </div>
      <EmailAddress current={session.user.email} />
      <Sessions />
      <TeamSwitches />
      <Team session={session} />
    </>
  );
}

/** The team's sign-in switches (docs/api.md §19.4): shown to everyone, changed by owners. */
function TeamSwitches() {
  const team = useGet('/team');
  const owner = useCan('owner');
  const change = useAction(async (body: { require_totp?: boolean; require_oidc?: boolean }) => {
    await patch('/team', body);
    team.reload();
    notify('Team settings saved.');
  });
  const t = team.data;
  return (
    <Section title="Team sign-in">
      <ErrorBox error={team.error ?? change.error} />
      {t && (
        <Card>
          {!owner && <p class="muted small">Only an owner can change these.</p>}
          <label class="check">
            <input
              type="checkbox"
              checked={t.require_totp}
              disabled={!owner || change.busy}
              onChange={(e) => change.run({ require_totp: e.currentTarget.checked })}
              aria-describedby="sw-totp-hint"
            />{' '}
            Require two-factor sign-in for every member
          </label>
          <p id="sw-totp-hint" class="muted small">
            Members who sign in with a password must set up an authenticator app before they can continue.
          </p>
          <label class="check">
            <input
              type="checkbox"
              checked={t.require_oidc}
              disabled={!owner || change.busy || (!t.oidc_available && !t.require_oidc)}
              onChange={(e) => change.run({ require_oidc: e.currentTarget.checked })}
              aria-describedby="sw-oidc-hint"
            />{' '}
            Require sign-in with OpenID Connect
          </label>
          <p id="sw-oidc-hint" class="muted small">
            {t.oidc_available
              ? 'Members sign in through the identity provider only; password sign-ins are refused. API keys still work.'
              : 'OpenID Connect is not configured on this server (auth.oidc in the configuration).'}
          </p>
        </Card>
      )}
    </Section>
  );
}

/** The team's name (docs/api.md §19.4, `PATCH /team`): shown to everyone, changed by owners. */
function TeamName() {
  const team = useGet('/team');
  const owner = useCan('owner');
  const [name, setName] = useState<string | null>(null);
  const action = useAction(async () => {
    await patch('/team', { name: (name ?? '').trim() });
    team.reload();
    setName(null);
    notify('Team renamed.');
  });
  if (!team.data) return <ErrorBox error={team.error} />;
  const value = name ?? team.data.name;
  return (
    <Card>
      <h2 class="card-title">Team</h2>
      {owner ? (
        <Form action={action}>
          <Field id="team-name" label="Team name">
            <input id="team-name" required maxLength={100} value={value} onInput={(e) => setName(val(e))} />
          </Field>
          <button type="submit" class="btn" disabled={action.busy || name === null || !value.trim() || value.trim() === team.data.name}>
            Rename team
          </button>
        </Form>
      ) : (
        <p>
          {team.data.name} <span class="muted small">(only an owner can rename it)</span>
        </p>
      )}
    </Card>
  );
}

/** The signed-in user's address, changed through a link mailed to the new one (docs/api.md §19.16). */
function EmailAddress({ current }: { current: string }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [sent, setSent] = useState<string | null>(null);
  const action = useAction(async () => {
    const r = await post('/auth/email', { email, password });
    setSent(r.email);
    setEmail('');
    setPassword('');
  });
  return (
    <Card>
      <h2 class="card-title">Email address</h2>
      <p class="muted small">
        You sign in as <strong>{current}</strong>. A new address takes effect once you open the link mailed to it.
      </p>
      {sent && (
        <p class="callout success" role="status">
          We mailed a confirmation link to {sent}. It works once, for 24 hours.
        </p>
      )}
      <Form action={action}>
        <div class="grid2">
          <Field id="em-new" label="New email address">
            <input id="em-new" type="email" autoComplete="email" required value={email} onInput={(e) => setEmail(val(e))} />
          </Field>
          <Field id="em-password" label="Password, to confirm">
            <input id="em-password" type="password" autoComplete="current-password" required value={password} onInput={(e) => setPassword(val(e))} />
          </Field>
        </div>
        <button type="submit" class="btn" disabled={action.busy}>
          Send confirmation link
        </button>
      </Form>
    </Card>
  );
}

function Password() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const action = useAction(async () => {
    await post('/auth/password', { current_password: current, new_password: next });
    setCurrent('');
    setNext('');
    notify('Password changed. Your other sessions were signed out.');
  });
  return (
    <Card>
      <h2 class="card-title">Password</h2>
      <Form action={action}>
        <Field id="pw-current" label="Current password">
          <input id="pw-current" type="password" autoComplete="current-password" required value={current} onInput={(e) => setCurrent(val(e))} />
        </Field>
        <Field id="pw-new" label="New password" hint="At least 10 characters. Other sessions are signed out.">
          <input
            id="pw-new"
            type="password"
            autoComplete="new-password"
            minLength={10}
            required
            value={next}
            onInput={(e) => setNext(val(e))}
            aria-describedby="pw-new-hint"
          />
        </Field>
        <button type="submit" class="btn" disabled={action.busy}>
          Change password
        </button>
      </Form>
    </Card>
  );
}

/** `onSaved`: the recovery codes were put away after turning it on (the enrolment page goes on then). */
export function TwoFactor({ enabled: initial, onSaved }: { enabled: boolean; onSaved?: () => void }) {
  const [enabled, setEnabled] = useState(initial);
  const [enrolment, setEnrolment] = useState<TotpEnrolment | null>(null);
  const [code, setCode] = useState('');
  const [codes, setCodes] = useState<string[] | null>(null);
  const [password, setPassword] = useState('');
  const [disabling, setDisabling] = useState(false);
  const begin = useAction(async () => setEnrolment(await post('/auth/totp')));
  const confirm = useAction(async () => {
    const r = await post('/auth/totp/confirm', { code });
    setCodes(r.recovery_codes);
    setEnrolment(null);
    setEnabled(true);
    setCode('');
  });
  const disable = useAction(async () => {
    await del('/auth/totp', { password });
    setEnabled(false);
    setDisabling(false);
    setPassword('');
    notify('Two-factor sign-in is off.');
  });
  return (
    <Card>
      <h2 class="card-title">Two-factor sign-in {enabled ? <Badge value="verified" label="on" /> : <Badge value="none" label="off" />}</h2>
      <ErrorBox error={begin.error ?? confirm.error ?? disable.error} />
      {codes && (
        <div class="callout success" role="status">
          <p>
            <strong>Save these recovery codes.</strong> Each signs you in once if you lose your device. They are not shown again.
          </p>
          <ul class="codes" aria-label="Recovery codes">
            {codes.map((c) => (
              <li class="mono">{c}</li>
            ))}
          </ul>
          <CopyButton text={codes.join('\n')} label="Copy codes" />{' '}
          <button
            type="button"
            class="btn small"
            onClick={() => {
              setCodes(null);
              onSaved?.();
            }}
          >
            I saved them
          </button>
        </div>
      )}
      {!enabled && !enrolment && (
        <>
          <p class="muted">Ask for a code from an authenticator app (RFC 6238 TOTP) at every sign-in.</p>
          <button type="button" class="btn" disabled={begin.busy} onClick={() => begin.run()}>
            Set up an authenticator
          </button>
        </>
      )}
      {enrolment && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            confirm.run();
          }}
        >
          <p class="small">Scan the code with your authenticator app, or enter the key by hand.</p>
          <img
            class="qr"
            alt="QR code of the authenticator key"
            src={`data:image/svg+xml;utf8,${encodeURIComponent(enrolment.qr_svg)}`}
            width="180"
            height="180"
          />
          <p class="copy-cell">
            <code class="token" data-testid="totp-secret">
              {enrolment.secret}
            </code>{' '}
            <CopyButton text={enrolment.secret} />
          </p>
          <Field id="totp-code" label="Code from the app">
            <input
              id="totp-code"
              inputMode="numeric"
              autoComplete="one-time-code"
              required
              pattern="[0-9 ]{6,7}"
              value={code}
              onInput={(e) => setCode(val(e))}
            />
          </Field>
          <button type="submit" class="btn primary" disabled={confirm.busy}>
            Turn on
          </button>
        </form>
      )}
      {enabled && !disabling && (
        <>
          <p class="muted">A code from your authenticator app is needed at every sign-in.</p>
          <button type="button" class="btn danger ghost" onClick={() => setDisabling(true)}>
            Turn off
          </button>
        </>
      )}
      {enabled && disabling && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            disable.run();
          }}
        >
          <Field id="totp-off-pw" label="Your password">
            <input id="totp-off-pw" type="password" autoComplete="current-password" required value={password} onInput={(e) => setPassword(val(e))} />
          </Field>
          <button type="submit" class="btn danger">
            Turn off two-factor sign-in
          </button>
        </form>
      )}
    </Card>
  );
}

function Sessions() {
  const list = useGet('/auth/sessions');
  const end = useAction(async (id: string) => {
    await del(url('/auth/sessions/:id', { id }));
    list.reload();
  });
  const everywhere = useAction(async () => {
    await del('/auth/sessions');
    location.assign('/dashboard/sign-in');
  });
  return (
    <Section
      title="Sessions"
      actions={
        <button
          type="button"
          class="btn danger ghost"
          onClick={async () => (await ask('Sign out on every device, this one included?', { confirm: 'Sign out' })) && everywhere.run()}
        >
          Sign out everywhere
        </button>
      }
    >
      <ErrorBox error={list.error ?? end.error ?? everywhere.error} />
      {list.data && (
        <Table
          caption="Your sessions"
          rows={list.data.data}
          columns={[
            { label: 'Browser', render: (s) => <span class="small">{browser(s.user_agent)}</span> },
            { label: 'Address', render: (s) => <span class="mono small">{s.ip ?? '—'}</span> },
            {
              label: 'Signed in',
              render: (s) => (
                <>
                  <Time iso={s.created_at} /> <span class="muted small">({s.method})</span>
                </>
              ),
            },
            { label: 'Last active', render: (s) => (s.current ? <Badge value="verified" label="this browser" /> : <Time iso={s.last_seen_at} />) },
            {
              label: 'Actions',
              render: (s) =>
                s.current ? (
                  ''
                ) : (
                  <button type="button" class="btn small ghost" onClick={() => end.run(s.id)}>
                    End session
                  </button>
                ),
            },
          ]}
        />
      )}
    </Section>
  );
}

function browser(ua: string | null): string {
  if (!ua) return 'Unknown';
  const name = /Edg\//.test(ua)
    ? 'Edge'
    : /Chrome\//.test(ua)
      ? 'Chrome'
      : /Firefox\//.test(ua)
        ? 'Firefox'
        : /Safari\//.test(ua)
          ? 'Safari'
          : ua.split(' ')[0];
  const os = /Windows/.test(ua)
    ? 'Windows'
    : /Mac OS X/.test(ua)
      ? 'macOS'
      : /Android/.test(ua)
        ? 'Android'
        : /iPhone|iPad/.test(ua)
          ? 'iOS'
          : /Linux/.test(ua)
            ? 'Linux'
            : '';
  return os ? `${name} on ${os}` : name;
}

function Team({ session }: { session: Session }) {
  const admin = useCan('admin');
  const mine = session.user.role;
  const members = useGet('/team/members');
  const invites = useGet('/team/invites');
  const [inviting, setInviting] = useState(false);
  const [link, setLink] = useState<{ url: string; mailed: string | null } | null>(null);
  const remove = useAction(async (id: string) => {
    await del(url('/team/members/:id', { id }));
    members.reload();
  });
  const setRole = useAction(async (id: string, role: string) => {
    await patch(url('/team/members/:id', { id }), { role });
    members.reload();
    notify('Role changed.');
  });
  const withdraw = useAction(async (id: string) => {
    await del(url('/team/invites/:id', { id }));
    invites.reload();
  });
  /** Members above one's own role are not one's to change (docs/api.md §19.4). */
  const mayManage = (m: Member) => admin && m.id !== session.user.id && givable(mine).includes(m.role);
  return (
    <Section
      title="Team members"
      need="admin"
      actions={
        <button type="button" class="btn primary" onClick={() => setInviting(true)}>
          Invite member
        </button>
      }
    >
      <ErrorBox error={members.error ?? remove.error ?? withdraw.error ?? setRole.error} />
      {link && (
        <div class="callout success" role="status">
          <p>
            {link.mailed ? (
              <>
                <strong>Invitation mailed to {link.mailed}.</strong> You can also send them this link. It is valid for 7 days and works once.
              </>
            ) : (
              <>
                <strong>Send this link to the new member.</strong> It is valid for 7 days and works once.
              </>
            )}
          </p>
          <p class="copy-cell">
            <code class="token break" data-testid="invite-link">
              {link.url}
            </code>{' '}
            <CopyButton text={link.url} />
          </p>
        </div>
      )}
      {members.data && (
        <Table
          caption="Team members"
          rows={members.data.data}
          columns={[
            { label: 'Email', render: (m) => m.email },
            {
              label: 'Role',
              render: (m) =>
                mayManage(m) ? (
                  <select
                    class="role-select"
                    aria-label={`Role of ${m.email}`}
                    value={m.role}
                    disabled={setRole.busy}
                    onChange={(e) => setRole.run(m.id, val(e))}
                  >
                    {givable(mine).map((r) => (
                      <option value={r}>{ROLE_LABEL[r]}</option>
                    ))}
                  </select>
                ) : (
                  <Badge value={m.role} />
                ),
            },
            { label: 'Two-factor', render: (m) => (m.totp_enabled ? <Badge value="verified" label="on" /> : <Badge value="none" label="off" />) },
            { label: 'Joined', render: (m) => <Time iso={m.created_at} /> },
            {
              label: 'Actions',
              render: (m) =>
                mayManage(m) ? (
                  <button
                    type="button"
                    class="btn small danger ghost"
                    aria-label={`Remove ${m.email}`}
                    onClick={async () => (await ask(`Remove ${m.email} from the team?`, { confirm: 'Remove' })) && remove.run(m.id)}
                  >
                    Remove
                  </button>
                ) : (
                  ''
                ),
            },
          ]}
        />
      )}
      {!!invites.data?.data.length && (
        <>
          <h3>Pending invitations</h3>
          <Table
            caption="Pending invitations"
            rows={invites.data.data}
            columns={[
              { label: 'Email', render: (i) => i.email },
              { label: 'Role', render: (i) => <Badge value={i.role} /> },
              { label: 'Expires', render: (i) => <Time iso={i.expires_at} /> },
              {
                label: 'Actions',
                render: (i) =>
                  admin ? (
                    <button type="button" class="btn small ghost" onClick={() => withdraw.run(i.id)}>
                      Withdraw
                    </button>
                  ) : (
                    ''
                  ),
              },
            ]}
          />
        </>
      )}
      <InviteDialog
        open={inviting}
        roles={givable(mine)}
        onClose={() => setInviting(false)}
        onInvited={(url, mailed) => {
          setLink({ url, mailed });
          invites.reload();
        }}
      />
    </Section>
  );
}

const ROLE_LABEL: Record<Role, string> = { viewer: 'Viewer', member: 'Member', admin: 'Admin', owner: 'Owner' };

function InviteDialog({
  open,
  roles,
  onClose,
  onInvited,
}: {
  open: boolean;
  roles: Role[];
  onClose: () => void;
  onInvited: (url: string, mailedTo: string | null) => void;
}) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState('member');
  const action = useAction(async () => {
    const r = await post('/team/invites', { email, role });
    setEmail('');
    onInvited(r.url, r.mailed ? r.email : null);
    onClose();
  });
  return (
    <FormDialog open={open} title="Invite a team member" onClose={onClose} action={action} submit="Invite">
      <Field id="inv-email" label="Email">
        <input id="inv-email" type="email" required value={email} onInput={(e) => setEmail(val(e))} />
      </Field>
      <Field
        id="inv-role"
        label="Role"
        hint="Viewers only read. Members send and edit. Admins also manage members and keys. Owners also manage owners and team sign-in."
      >
        <select id="inv-role" value={role} onChange={(e) => setRole(val(e))} aria-describedby="inv-role-hint">
          {roles.map((r) => (
            <option value={r}>{ROLE_LABEL[r]}</option>
          ))}
        </select>
      </Field>
    </FormDialog>
  );
}
