// The team's audit log (docs/api.md §19.11) and its sign-in switches (§19.4): who did what, when,
// from where, through which way in; kept like the request log, never changed.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { TOTP, Secret } from 'otpauth';
import { startPosthorn, type Running } from '../helpers/posthorn';

let p: Running;
beforeAll(async () => {
  // OpenID Connect configured (never reached: password sign-ins are what the switch refuses).
  p = await startPosthorn({ 'auth.oidc.issuer': 'http://127.0.0.1:9/', 'auth.oidc.client_id': 'posthorn', 'security.allow_private_networks': true });
});
afterAll(() => p.stop());

interface Signed {
  token: string;
  csrf: string;
  id: string;
}

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(p.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

async function signIn(email: string, password: string, code?: string) {
  const res = await post('/auth/sign-in', { email, password, ...(code ? { code } : {}) });
  const body = (await res.json()) as { csrf_token: string; user: { id: string }; team: Record<string, unknown>; name?: string };
  const token = /posthorn_session=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1] ?? '';
  return { status: res.status, body, session: { token, csrf: body.csrf_token, id: body.user?.id } as Signed };
}

async function join(email: string, role: string): Promise<Signed> {
  const inv = await p.api('POST', '/team/invites', { body: { email, role } });
  expect(inv.status).toBe(201);
  expect((await post(`/auth/invites/${inv.body.url.split('/').pop()}/accept`, { password: `${email}-pw` })).status).toBe(201);
  const s = await signIn(email, `${email}-pw`);
  expect(s.status).toBe(200);
  return s.session;
}

async function as(s: Signed, method: string, path: string, body?: unknown) {
  const res = await fetch(p.url + path, {
    method,
    headers: { cookie: `posthorn_session=${s.token}`, 'x-csrf-token': s.csrf, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> & { name?: string } };
}

const code = (secret: string) => new TOTP({ secret: Secret.fromBase32(secret), period: 30, digits: 6, algorithm: 'SHA1' }).generate();

type Entry = {
  action: string;
  actor: { type: string; id: string | null; label: string | null };
  via: string;
  ip: string | null;
  target: { type: string; id: string | null } | null;
  details: Record<string, unknown> | null;
};
const entries = async (query = '') => (await p.api('GET', `/audit-log${query}`)).body.data as Entry[];

describe('the audit log', () => {
  test('records administrative actions: who, how, from where, on what', async () => {
    // Through the API, with the bootstrap key.
    const key = await p.api('POST', '/api-keys', { body: { name: 'ci', role: 'member' } });
    const domain = await p.api('POST', '/domains', { body: { name: 'audit-log-domain.test' } });
    expect(domain.status).toBe(201);
    expect((await p.api('DELETE', `/domains/${domain.body.id}`)).status).toBe(200);
    const hook = await p.api('POST', '/webhooks', { body: { endpoint: 'http://127.0.0.1:9/audit', events: ['email.sent'] } });
    expect(hook.body).toMatchObject({ object: 'webhook' });
    // Through the dashboard, as an admin.
    const admin = await join('audit-admin@dest.test', 'admin');
    const viewer = await join('audit-viewer@dest.test', 'viewer');
    expect((await as(admin, 'PATCH', `/team/members/${viewer.id}`, { role: 'member' })).status).toBe(200);
    expect((await as(admin, 'DELETE', `/api-keys/${key.body.id}`)).status).toBe(200);
    // A failed sign-in to an account, and one to an address with no account (no team to record it in).
    expect((await signIn('audit-admin@dest.test', 'wrong-password')).status).toBe(401);
    expect((await signIn('nobody@dest.test', 'wrong-password')).status).toBe(401);

    const log = await entries('?limit=100');
    const find = (action: string, pred: (e: Entry) => boolean = () => true) => log.find((e) => e.action === action && pred(e));
    const bootstrap = (await p.svc.store.apiKeys.all(p.creds.team_id)).find((k) => k.name === 'Default key')!;
    expect(find('api_key.created')).toEqual({
      object: 'audit_log_entry',
      id: expect.any(String),
      created_at: expect.stringMatching(/Z$/),
      action: 'api_key.created',
      actor: { type: 'key', id: bootstrap.id, label: 'Default key' },
      via: 'api',
      ip: '127.0.0.1',
      target: { type: 'api_key', id: key.body.id },
      details: { name: 'ci', role: 'member' },
    } as never);
    expect(find('domain.created')).toMatchObject({ target: { type: 'domain', id: domain.body.id }, details: { name: 'audit-log-domain.test' } });
    expect(find('domain.deleted')).toMatchObject({ target: { type: 'domain', id: domain.body.id }, details: null });
    expect(find('webhook.created')).toMatchObject({ target: { type: 'webhook', id: hook.body.id }, details: { endpoint: 'http://127.0.0.1:9/audit' } });
    expect(find('member.invited', (e) => e.details?.email === 'audit-admin@dest.test')).toMatchObject({ details: { role: 'admin' } });
    expect(find('member.joined', (e) => e.actor.label === 'audit-viewer@dest.test')).toMatchObject({ via: 'dashboard', details: { method: 'invite' } });
    expect(find('member.role_changed')).toMatchObject({
      actor: { type: 'user', id: admin.id, label: 'audit-admin@dest.test' },
      via: 'dashboard',
      ip: '127.0.0.1',
      target: { type: 'user', id: viewer.id },
      details: { role: 'member' },
    });
    expect(find('api_key.deleted')).toMatchObject({ actor: { type: 'user', id: admin.id }, target: { type: 'api_key', id: key.body.id } });
    expect(find('auth.signed_in', (e) => e.actor.id === admin.id)).toMatchObject({ via: 'dashboard', ip: '127.0.0.1', details: { method: 'password' } });
    expect(find('auth.sign_in_failed')).toMatchObject({
      actor: { type: 'user', id: admin.id },
      details: { method: 'password', reason: 'invalid_credentials' },
    });
    expect(JSON.stringify(log)).not.toContain('nobody@dest.test');
    // Newest first.
    expect(log[0]!.action).toBe('auth.sign_in_failed');
  });

  test('paged like every list, filtered by action or group; a bad action is refused', async () => {
    const first = (await p.api('GET', '/audit-log?limit=2')).body;
    expect(first).toMatchObject({ object: 'list', has_more: true });
    expect(first.data).toHaveLength(2);
    const next = (await p.api('GET', `/audit-log?limit=2&after=${first.data[1].id}`)).body;
    expect(next.data[0].id < first.data[1].id).toBe(true);
    expect((await entries('?action=member.')).every((e) => e.action.startsWith('member.'))).toBe(true);
    expect((await entries('?action=domain.created')).map((e) => e.action)).toEqual(['domain.created']);
    expect((await p.api('GET', '/audit-log?action=nothing')).status).toBe(422);
  });

  test('admins and owners read it; nobody changes it', async () => {
    const member = await join('audit-member@dest.test', 'member');
    expect((await as(member, 'GET', '/audit-log')).body.name).toBe('restricted_role');
    const id = ((await p.api('GET', '/audit-log')).body.data[0] as { id: string }).id;
    for (const method of ['PATCH', 'DELETE', 'PUT']) expect([404, 405]).toContain((await p.api(method, `/audit-log/${id}`, { body: {} })).status);
    expect([404, 405]).toContain((await p.api('DELETE', '/audit-log')).status);
  });

  test('kept for retention.days, like the request log', async () => {
    const before = (await p.svc.store.auditLog.all(p.creds.team_id)).length;
    expect(before).toBeGreaterThan(0);
    await p.svc.store.sweep(Date.now() + 29 * 86_400_000);
    expect((await p.svc.store.auditLog.all(p.creds.team_id)).length).toBe(before);
    await p.svc.store.sweep(Date.now() + 31 * 86_400_000);
    expect((await p.svc.store.auditLog.all(p.creds.team_id)).length).toBe(0);
  });
});

describe('the team’s sign-in switches (docs/api.md §19.4)', () => {
  test('settings: read by anyone of the team, changed by an owner (recorded); OIDC only when configured', async () => {
    const team = await p.api('GET', '/team');
    expect(team.body).toEqual({ object: 'team', id: p.creds.team_id, name: 'Default team', require_totp: false, require_oidc: false, oidc_available: true });
    const admin = await join('switch-admin@dest.test', 'admin');
    expect((await as(admin, 'PATCH', '/team', { require_totp: true })).body.name).toBe('restricted_role');
    const renamed = await p.api('PATCH', '/team', { body: { name: 'Acme' } });
    expect(renamed.body).toMatchObject({ name: 'Acme', require_totp: false });
    expect((await entries('?action=team.settings_changed'))[0]).toMatchObject({ target: { type: 'team', id: p.creds.team_id }, details: { name: 'Acme' } });
    expect((await p.api('PATCH', '/team', { body: { require_totp: 'yes' } })).body).toEqual({
      statusCode: 422,
      name: 'validation_error',
      message: 'The `require_totp` field must be a boolean.',
    });
    const other = await startPosthorn();
    try {
      const r = await other.api('PATCH', '/team', { body: { require_oidc: true } });
      expect([r.status, r.body.name]).toEqual([422, 'validation_error']);
    } finally {
      await other.stop();
    }
  });

  test('require TOTP: a member without it may only enrol, then works; open sessions too', async () => {
    const member = await join('totp-member@dest.test', 'member');
    expect((await as(member, 'GET', '/domains')).status).toBe(200);
    expect((await p.api('PATCH', '/team', { body: { require_totp: true } })).status).toBe(200);
    try {
      const held = await as(member, 'GET', '/domains');
      expect(held.status).toBe(403);
      expect(held.body).toEqual({ statusCode: 403, name: 'totp_enrolment_required', message: expect.stringContaining('two-factor') });
      // A new sign-in works, and says what the team asks.
      const again = await signIn('totp-member@dest.test', 'totp-member@dest.test-pw');
      expect(again.status).toBe(200);
      expect(again.body.team).toMatchObject({ require_totp: true, require_oidc: false });
      const s = again.session;
      expect((await as(s, 'GET', '/domains')).body.name).toBe('totp_enrolment_required');
      // The enrolment's routes are open to it.
      const enrol = await as(s, 'POST', '/auth/totp', {});
      expect(enrol.status).toBe(201);
      expect((await as(s, 'POST', '/auth/totp/confirm', { code: code(enrol.body.secret as string) })).status).toBe(200);
      expect((await as(s, 'GET', '/domains')).status).toBe(200);
      expect((await as(member, 'GET', '/domains')).status).toBe(200);
      expect((await entries('?action=auth.totp_enabled'))[0]).toMatchObject({ actor: { label: 'totp-member@dest.test' }, details: null });
    } finally {
      await p.api('PATCH', '/team', { body: { require_totp: false } });
    }
  });

  test('require OpenID Connect: password sign-ins and password sessions are refused; a key turns it off', async () => {
    const member = await join('oidc-member@dest.test', 'member');
    expect((await p.api('PATCH', '/team', { body: { require_oidc: true } })).status).toBe(200);
    try {
      const held = await as(member, 'GET', '/domains');
      expect([held.status, held.body.name]).toEqual([403, 'oidc_required']);
      const again = await signIn('oidc-member@dest.test', 'oidc-member@dest.test-pw');
      expect([again.status, again.body.name]).toEqual([403, 'oidc_required']);
      expect(again.session.token).toBe('');
      // A wrong password still says only that.
      expect((await signIn('oidc-member@dest.test', 'wrong-password')).body.name).toBe('invalid_credentials');
      expect((await entries('?action=auth.sign_in_failed'))[1]).toMatchObject({ details: { method: 'password', reason: 'oidc_required' } });
      // Keys are not sessions: the API still works, and can turn the switch off.
      expect((await p.api('GET', '/domains')).status).toBe(200);
    } finally {
      expect((await p.api('PATCH', '/team', { body: { require_oidc: false } })).status).toBe(200);
    }
    expect((await as(member, 'GET', '/domains')).status).toBe(200);
  });
});
