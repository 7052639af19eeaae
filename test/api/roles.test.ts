// Roles (docs/api.md §19.4): what owners, admins, members and viewers may do, with a session or
// with an API key, whose authority is its maker's (issue 34, finding 1).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startPosthorn, type Running } from '../helpers/posthorn';

let p: Running;
beforeAll(async () => {
  p = await startPosthorn();
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
  return { status: res.status, body: (await res.json()) as Record<string, unknown> & { name?: string } };
}

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
