// OAuth grants (docs/api.md §22) through `resend.oauthGrants`: Posthorn issues none — a dashboard
// sign-in (a session, not an OAuth grant) leaves the list empty — so the list is Resend's empty
// list and a revoke is Resend's 404; bad pagination and malformed ids get the documented 422s.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { startPosthorn, type Running } from '../helpers/posthorn';
import { newId } from '../../src/ids';

let p: Running;

beforeAll(async () => {
  p = await startPosthorn();
});
afterAll(() => p.stop());

describe('resend.oauthGrants', () => {
  test('list: the empty list, with or without pagination, also after a dashboard sign-in', async () => {
    const empty = { object: 'list', has_more: false, data: [] };
    expect(await p.resend.oauthGrants.list()).toMatchObject({ data: empty, error: null });
    expect((await p.resend.oauthGrants.list({ limit: 5, after: newId() })).data).toEqual(empty as never);
    const signIn = await fetch(`${p.url}/auth/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: p.creds.admin_email, password: p.creds.admin_password }),
    });
    expect(signIn.status).toBe(200);
    const { csrf_token } = (await signIn.json()) as { csrf_token: string };
    const cookie = /posthorn_session=[^;]+/.exec(signIn.headers.get('set-cookie')!)![0];
    const asSession = await fetch(`${p.url}/oauth/grants`, { headers: { cookie, 'x-csrf-token': csrf_token } });
    expect(await asSession.json()).toEqual(empty);
    expect((await p.resend.oauthGrants.list()).data).toEqual(empty as never);
  });

  test('list: bad pagination → 422 validation_error', async () => {
    for (const q of ['limit=0', 'limit=101', 'limit=x', 'after=nope', `after=${newId()}&before=${newId()}`]) {
      const r = await p.api('GET', `/oauth/grants?${q}`);
      expect([q, r.status, r.body.name]).toEqual([q, 422, 'validation_error']);
    }
    expect((await p.resend.oauthGrants.list({ limit: 0 })).error).toMatchObject({ statusCode: 422, name: 'validation_error' });
  });

  test('revoke: an unknown grant → 404 not_found; a malformed id → 422 invalid_parameter', async () => {
    expect(await p.resend.oauthGrants.revoke(newId())).toMatchObject({
      data: null,
      error: { statusCode: 404, name: 'not_found', message: 'OAuth grant not found' },
    });
    expect((await p.resend.oauthGrants.revoke('not-a-grant')).error).toMatchObject({ statusCode: 422, name: 'invalid_parameter' });
    expect((await p.api('GET', `/oauth/grants/${newId()}`)).body).toMatchObject({ statusCode: 405, name: 'method_not_allowed' });
  });

  test('a sending-only key may do neither', async () => {
    const key = await p.resend.apiKeys.create({ name: 'sender', permission: 'sending_access' });
    const sender = p.client(key.data!.token);
    expect((await sender.oauthGrants.list()).error).toMatchObject({ statusCode: 401, name: 'restricted_api_key' });
    expect((await sender.oauthGrants.revoke(newId())).error).toMatchObject({ statusCode: 401, name: 'restricted_api_key' });
  });
});
