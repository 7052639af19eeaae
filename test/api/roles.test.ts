// Roles (docs/api.md §19.4): what owners, admins, members and viewers may do, with a session or
// with an API key, whose authority is its maker's (issue 34, finding 1).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startPosthorn, type Running } from '../helpers/posthorn';
import { buildApp } from '../../src/api/app';
import { RequestLog } from '../../src/api/platform/requestlog';
import { requiredRole } from '../../src/api/platform/route-table';
import { ROLES, atLeast } from '../../src/accounts/roles';
import type { Role } from '../../src/store';

let p: Running;
beforeAll(async () => {
  // About 1,300 requests in a few sessions: past the per-session request limit (docs/api.md §19.2) they would answer 429, not the role's verdict.
  p = await startPosthorn({ 'limits.session_requests_per_second': 100_000 });
});
afterAll(() => p.stop());

interface Signed {
  token: string;
  csrf: string;
}

/** Invite `email` with `role` (as the bootstrap key), accept, and sign in: the new member's session. */
async function join(email: string, role: string): Promise<Signed> {
  const inv = await p.api('POST', '/team/invites', { body: { email, role } });
  expect(inv.status).toBe(201);
  const password = `${email}-password`;
  const accepted = await fetch(`${p.url}/auth/invites/${inv.body.url.split('/').pop()}/accept`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ password }),
  });
  expect(accepted.status).toBe(201);
  const res = await fetch(`${p.url}/auth/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { csrf_token: string };
  return { token: /posthorn_session=([^;]+)/.exec(res.headers.get('set-cookie')!)![1]!, csrf: body.csrf_token };
}

/** A request with a session (cookie and CSRF header). */
async function asSession(s: Signed, method: string, path: string, body?: unknown) {
  const res = await fetch(p.url + path, {
    method,
    headers: { cookie: `posthorn_session=${s.token}`, 'x-csrf-token': s.csrf, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: res.status, body: parsed as Record<string, unknown> & { name?: string } };
}

/** A key of `role` made by the bootstrap (owner) key. */
async function keyOf(role: Role, permission = 'full_access'): Promise<string> {
  const r = await p.api('POST', '/api-keys', { body: { name: `${role} key`, permission, role } });
  expect(r.status).toBe(201);
  return r.body.token;
}

/** A concrete path for a declared one: every parameter a fresh UUID (an address for `id_or_email`, a domain for `destination`). */
const concrete = (path: string) =>
  path.replace(/:([a-z_]+)/g, (_, name: string) =>
    name === 'id_or_email' ? 'nobody@dest.test' : name === 'destination' ? 'roles.dest.test' : name === 'token' ? 'x' : crypto.randomUUID(),
  );

describe('keys carry the authority of whoever made them (issue 34, finding 1)', () => {
  test('a member’s full_access key cannot invite an owner: the chain of the red team is refused', async () => {
    const member = await join('chain-member@dest.test', 'member');
    const made = await asSession(member, 'POST', '/api-keys', { name: 'mine', permission: 'full_access' });
    expect(made.status).toBe(201);
    const invite = await p.api('POST', '/team/invites', { key: made.body.token as string, body: { email: 'chain-owner@dest.test', role: 'owner' } });
    expect(invite.status).toBe(403);
    expect(invite.body).toEqual({ statusCode: 403, name: 'restricted_role', message: expect.any(String) });
    const pending = (await p.api('GET', '/team/invites')).body.data as { email: string }[];
    expect(pending.map((i) => i.email)).not.toContain('chain-owner@dest.test');
  });
});

describe('each route’s least role holds, for keys and for sessions (docs/api.md §19.4)', () => {
  test('the defaults: reads need a viewer, changes a member; team administration declares more', () => {
    const { table } = buildApp({ ...p.svc, requestLog: new RequestLog(p.svc.store) });
    const need = (m: string, path: string) => requiredRole(table.find(m, path)!);
    expect(need('GET', '/emails')).toBe('viewer');
    expect(need('POST', '/emails')).toBe('member');
    expect(need('POST', '/api-keys')).toBe('member');
    expect(need('POST', '/team/invites')).toBe('admin');
    expect(need('PATCH', '/team/members/:id')).toBe('admin');
    expect(need('GET', '/audit-log')).toBe('admin');
    expect(need('PATCH', '/team')).toBe('owner');
    expect(need('GET', '/health')).toBeNull();
    expect(need('POST', '/auth/totp')).toBeNull();
  });

  test('for every role, every route is allowed or refused as declared (API keys and sessions)', async () => {
    const { table } = buildApp({ ...p.svc, requestLog: new RequestLog(p.svc.store) });
    const routes = table.routes.filter((r) => requiredRole(r) !== null);
    expect(routes.length).toBeGreaterThan(100);
    const sessions: Partial<Record<Role, Signed>> = {};
    for (const role of ROLES) sessions[role] = await join(`table-${role}@dest.test`, role);
    const wrong: string[] = [];
    for (const role of ROLES) {
      const key = await keyOf(role);
      for (const r of routes) {
        const path = concrete(r.path);
        const body = r.method === 'GET' ? undefined : {};
        const allowed = atLeast(role, requiredRole(r)!);
        for (const [how, res] of [
          ['key', await p.api(r.method, path, { key, body })],
          ['session', await asSession(sessions[role]!, r.method, path, body)],
        ] as const) {
          const refused = res.status === 403 && res.body?.name === 'restricted_role';
          if (refused === allowed) wrong.push(`${role} ${how}: ${r.method} ${r.path} → ${res.status} ${res.body?.name ?? ''}`);
          if (refused)
            expect(res.body).toEqual({ statusCode: 403, name: 'restricted_role', message: expect.stringContaining(`needs the ${requiredRole(r)} role`) });
        }
      }
    }
    expect(wrong).toEqual([]);
  }, 120_000);

  test('a sending_access key still only sends', async () => {
    const key = await keyOf('member', 'sending_access');
    expect((await p.api('GET', '/domains', { key })).body.name).toBe('restricted_api_key');
    expect((await p.api('POST', '/emails', { key, body: {} })).status).toBe(422);
  });
});

describe('what a role may give, change and remove', () => {
  test('a key cannot carry more than its maker: a member’s session asks for an owner key → 403; a viewer key makes nothing', async () => {
    const member = await join('keys-member@dest.test', 'member');
    const more = await asSession(member, 'POST', '/api-keys', { name: 'more', role: 'owner' });
    expect(more.status).toBe(403);
    expect(more.body.name).toBe('restricted_role');
    const less = await asSession(member, 'POST', '/api-keys', { name: 'read only', role: 'viewer' });
    expect(less.status).toBe(201);
    const viewerKey = less.body.token as string;
    expect((await p.api('GET', '/emails', { key: viewerKey })).status).toBe(200);
    expect((await p.api('POST', '/api-keys', { key: viewerKey, body: { name: 'x' } })).body.name).toBe('restricted_role');
    // A member's key made by a key: the same ceiling, all the way down.
    const memberKey = (await asSession(member, 'POST', '/api-keys', { name: 'm' })).body.token as string;
    const child = await p.api('POST', '/api-keys', { key: memberKey, body: { name: 'child', role: 'admin' } });
    expect(child.body.name).toBe('restricted_role');
    const rec = (await p.svc.store.apiKeys.all(p.creds.team_id)).find((k) => k.name === 'm')!;
    expect(rec.role).toBe('member');
    expect(rec.made_by?.user_id).toEqual(expect.any(String));
    // Nor does a member delete a key above their role (the owner's bootstrap key).
    const ownerKey = (await p.svc.store.apiKeys.all(p.creds.team_id)).find((k) => k.name === 'Default key')!;
    const del = await asSession(member, 'DELETE', `/api-keys/${ownerKey.id}`);
    expect(del.status).toBe(403);
    expect(del.body.name).toBe('restricted_role');
  });

  test('an admin invites up to admin, changes roles up to admin, and cannot touch an owner', async () => {
    const admin = await join('roles-admin@dest.test', 'admin');
    expect((await asSession(admin, 'POST', '/team/invites', { email: 'new-owner@dest.test', role: 'owner' })).body.name).toBe('restricted_role');
    expect((await asSession(admin, 'POST', '/team/invites', { email: 'new-admin@dest.test', role: 'admin' })).status).toBe(201);
    await join('promote-me@dest.test', 'viewer');
    const members = (await p.api('GET', '/team/members')).body.data as { id: string; email: string; role: string }[];
    const target = members.find((m) => m.email === 'promote-me@dest.test')!;
    const owner = members.find((m) => m.email === p.creds.admin_email)!;
    expect(target.role).toBe('viewer');
    const up = await asSession(admin, 'PATCH', `/team/members/${target.id}`, { role: 'admin' });
    expect(up.status).toBe(200);
    expect(up.body).toMatchObject({ object: 'member', id: target.id, role: 'admin' });
    expect((await asSession(admin, 'PATCH', `/team/members/${target.id}`, { role: 'owner' })).body.name).toBe('restricted_role');
    expect((await asSession(admin, 'PATCH', `/team/members/${owner.id}`, { role: 'member' })).body.name).toBe('restricted_role');
    expect((await asSession(admin, 'DELETE', `/team/members/${owner.id}`)).body.name).toBe('restricted_role');
    expect((await asSession(admin, 'PATCH', `/team/members/${target.id}`, { role: 'boss' })).body).toEqual({
      statusCode: 422,
      name: 'validation_error',
      message: 'Invalid `role` field: use "owner", "admin", "member" or "viewer".',
    });
    // The last owner stays one (a team of its own: this one has several owners by now).
    const other = await p.newTeam();
    const alone = (await p.api('GET', '/team/members', { key: other.api_key })).body.data[0];
    const last = await p.api('PATCH', `/team/members/${alone.id}`, { key: other.api_key, body: { role: 'admin' } });
    expect(last.body).toEqual({ statusCode: 422, name: 'validation_error', message: 'A team keeps at least one owner.' });
    // The admin role is stored apart from the owner's old spelling (`admin` before 0.2).
    expect((await p.svc.store.users.get(p.creds.team_id, target.id))!.role).toBe('team_admin');
  });

  test('a role change holds at once for the member’s open session', async () => {
    const s = await join('demoted@dest.test', 'member');
    expect((await asSession(s, 'POST', '/segments', { name: 'ok' })).status).toBe(201);
    const id = ((await p.api('GET', '/team/members')).body.data as { id: string; email: string }[]).find((m) => m.email === 'demoted@dest.test')!.id;
    expect((await p.api('PATCH', `/team/members/${id}`, { body: { role: 'viewer' } })).status).toBe(200);
    expect((await asSession(s, 'POST', '/segments', { name: 'no' })).body.name).toBe('restricted_role');
    expect((await asSession(s, 'GET', '/segments')).status).toBe(200);
  });

  test('a removed member’s keys stop working; a lowered member’s keys are lowered (audit-logged)', async () => {
    const s = await join('keymaker@dest.test', 'admin');
    const made = await asSession(s, 'POST', '/api-keys', { name: 'admin’s key' });
    expect(made.status).toBe(201);
    const token = made.body.token as string;
    // A key made with that key: it follows the same maker.
    const child = await fetch(`${p.url}/api-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'grandchild' }),
    });
    expect(child.status).toBe(201);
    const childToken = ((await child.json()) as { token: string }).token;
    const withKey = (t: string, method: string, path: string, body?: unknown) =>
      fetch(p.url + path, {
        method,
        headers: { authorization: `Bearer ${t}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    expect((await withKey(token, 'POST', '/team/invites', { email: 'via-key@dest.test', role: 'member' })).status).toBe(201);

    const id = ((await p.api('GET', '/team/members')).body.data as { id: string; email: string }[]).find((m) => m.email === 'keymaker@dest.test')!.id;
    // Lowered to member: the keys no longer administer the team, but still work as a member.
    expect((await p.api('PATCH', `/team/members/${id}`, { body: { role: 'member' } })).status).toBe(200);
    const refused = await withKey(token, 'POST', '/team/invites', { email: 'via-key2@dest.test', role: 'member' });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { name: string }).name).toBe('restricted_role');
    expect((await withKey(childToken, 'POST', '/team/invites', { email: 'via-key3@dest.test' })).status).toBe(403);
    expect((await withKey(token, 'POST', '/segments', { name: 'still a member' })).status).toBe(201);
    // Raised again: the keys stay lowered (a key never gains authority after it is made).
    expect((await p.api('PATCH', `/team/members/${id}`, { body: { role: 'admin' } })).status).toBe(200);
    expect((await withKey(token, 'POST', '/team/invites', { email: 'via-key4@dest.test' })).status).toBe(403);

    // Removed: both keys stop working at once.
    expect((await p.api('DELETE', `/team/members/${id}`)).status).toBe(200);
    for (const t of [token, childToken]) {
      const r = await withKey(t, 'GET', '/segments');
      expect(r.status).toBe(403);
      expect(((await r.json()) as { name: string }).name).toBe('invalid_api_key');
    }
    const log = (await p.api('GET', '/audit-log?action=api_key.&limit=100')).body.data as { action: string; details: { maker?: string } | null }[];
    expect(log.filter((e) => e.action === 'api_key.revoked' && e.details?.maker === id)).toHaveLength(2);
    expect(log.filter((e) => e.action === 'api_key.role_lowered' && e.details?.maker === id)).toHaveLength(2);
  });

  test('a user stored before 0.2 as `admin` is an owner', async () => {
    const users = await p.svc.store.users.all(p.creds.team_id);
    const owner = users.find((u) => u.email === p.creds.admin_email)!;
    await p.svc.store.write(async (tx) => tx.users.put({ ...owner, role: 'admin' }));
    const members = (await p.api('GET', '/team/members')).body.data as { email: string; role: string }[];
    expect(members.find((m) => m.email === p.creds.admin_email)!.role).toBe('owner');
    await p.svc.store.write(async (tx) => tx.users.put({ ...owner, role: 'owner' }));
  });
});
