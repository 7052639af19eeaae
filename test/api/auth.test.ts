// Authentication and authorisation (docs/api.md §1.2), team isolation, sending_access keys.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { startPosthorn, type Running } from '../helpers/posthorn';

let p: Running;
beforeAll(async () => {
  p = await startPosthorn();
});
afterAll(() => p.stop());

describe('API keys authentication', () => {
  test('no header, empty token or another scheme → 401 missing_api_key (also on unknown paths)', async () => {
    for (const headers of [{}, { authorization: 'Bearer ' }, { authorization: `Basic ${p.apiKey}` }] as Record<string, string>[]) {
      const r = await p.api('GET', '/domains', { key: null, headers });
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ statusCode: 401, name: 'missing_api_key', message: expect.any(String) });
    }
    const unknown = await p.api('GET', '/no-such-route', { key: null });
    expect(unknown.status).toBe(401);
  });

  test('the scheme is case-insensitive', async () => {
    const r = await p.api('GET', '/api-keys', { key: null, headers: { authorization: `bearer ${p.apiKey}` } });
    expect(r.status).toBe(200);
  });

  test('unknown or malformed key → 403 invalid_api_key', async () => {
    for (const key of ['re_123', 're_AAAAAAAA_BBBBBBBBBBBBBBBBBBBBBBBB', 'nonsense']) {
      const r = await p.api('GET', '/domains', { key });
      expect(r.status).toBe(403);
      expect(r.body).toEqual({ statusCode: 403, name: 'invalid_api_key', message: 'API key is invalid' });
    }
  });

  test('a deleted key fails immediately, and a key may delete itself', async () => {
    const { data } = await p.resend.apiKeys.create({ name: 'temp' });
    const self = p.client(data!.token);
    expect((await self.apiKeys.list()).error).toBeNull();
    const del = await self.apiKeys.remove(data!.id);
    expect(del.error).toBeNull();
    const after = await p.api('GET', '/api-keys', { key: data!.token });
    expect(after.status).toBe(403);
    expect(after.body.name).toBe('invalid_api_key');
  });

  test('sending_access keys may only send: everything else is 401 restricted_api_key', async () => {
    const { data } = await p.resend.apiKeys.create({ name: 'sender', permission: 'sending_access' });
    const r = await p.api('GET', '/domains', { key: data!.token });
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ statusCode: 401, name: 'restricted_api_key', message: 'This API key is restricted to only send emails.' });
    expect(r.headers.get('ratelimit-limit')).toBe('1000'); // an authenticated response all the same
    const sdk = await p.client(data!.token).apiKeys.list();
    expect(sdk.error?.name).toBe('restricted_api_key');
    // A base URL ending in a slash reaches `/emails/`: still a send.
    expect((await p.api('POST', '/emails/', { key: data!.token, body: {} })).status).toBe(422);
    // POST /emails is let through authentication (what happens next is the sending core's business).
    const send = await p.api('POST', '/emails', { key: data!.token, body: {} });
    expect(send.status).not.toBe(401);
    expect(send.status).not.toBe(403);
  });

  test("teams cannot see or touch each other's data", async () => {
    const other = await p.newTeam();
    const them = p.client(other.api_key);
    const mine = await p.resend.apiKeys.create({ name: 'mine' });
    const theirs = await them.apiKeys.list();
    expect(theirs.data!.data.map((k) => k.id)).not.toContain(mine.data!.id);
    const del = await p.api('DELETE', `/api-keys/${mine.data!.id}`, { key: other.api_key });
    expect(del.status).toBe(404);
    expect((await p.resend.apiKeys.list()).data!.data.map((k) => k.id)).toContain(mine.data!.id);
  });
});

describe('API keys resource', () => {
  test('create, list (everything without limit), rename, delete with the SDK', async () => {
    const created = await p.resend.apiKeys.create({ name: 'ci' });
    expect(created.data).toEqual({ object: 'api_key', id: expect.any(String), token: expect.stringMatching(/^re_[A-Za-z0-9]{8}_[A-Za-z0-9]{24}$/) } as never);
    const list = await p.resend.apiKeys.list();
    expect(list.data!.object).toBe('list');
    expect(list.data!.has_more).toBe(false);
    const item = list.data!.data.find((k) => k.id === created.data!.id)!;
    expect(item).toEqual({ id: created.data!.id, name: 'ci', created_at: expect.stringMatching(/Z$/), last_used_at: null } as never);
    const renamed = await p.api('PATCH', `/api-keys/${created.data!.id}`, { body: { name: 'renamed' } });
    expect(renamed.body).toEqual({ object: 'api_key', id: created.data!.id });
    const gone = await p.resend.apiKeys.remove(created.data!.id);
    expect(gone.data).toEqual({ object: 'api_key', id: created.data!.id, deleted: true } as never);
    expect((await p.api('DELETE', `/api-keys/${created.data!.id}`)).body).toEqual({ statusCode: 404, name: 'not_found', message: 'API key not found' });
  });

  test('the token is stored only as a hash, and last_used_at is recorded on use', async () => {
    const { data } = await p.resend.apiKeys.create({ name: 'hash' });
    const rec = (await p.svc.store.apiKeys.get(p.creds.team_id, data!.id))!;
    expect(JSON.stringify(rec)).not.toContain(data!.token);
    await p.client(data!.token).apiKeys.list();
    await p.svc.store.settled();
    expect((await p.svc.store.apiKeys.get(p.creds.team_id, data!.id))!.last_used_at).toMatch(/Z$/);
  });

  test('validation: missing name, long name, bad permission, domain_id rules', async () => {
    const before = (await p.svc.store.apiKeys.all(p.creds.team_id)).length;
    const cases: [unknown, number, string][] = [
      [{}, 422, 'missing_required_field'],
      [{ name: 'x'.repeat(51) }, 422, 'validation_error'],
      [{ name: 'x', permission: 'admin' }, 422, 'invalid_access'],
      [{ name: 'x', permission: 'full_access', domain_id: '0195606f-e220-752e-89a7-834df2a74de4' }, 422, 'validation_error'],
      [{ name: 'x', permission: 'sending_access', domain_id: '0195606f-e220-752e-89a7-834df2a74de4' }, 422, 'validation_error'],
      [{ name: 12 }, 422, 'validation_error'],
    ];
    for (const [body, status, name] of cases) {
      const r = await p.api('POST', '/api-keys', { body });
      expect([r.status, r.body.name]).toEqual([status, name]);
      expect(r.body.statusCode).toBe(status);
    }
    expect((await p.api('POST', '/api-keys', { body: {} })).body.message).toBe('Missing `name` field.');
    expect((await p.svc.store.apiKeys.all(p.creds.team_id)).length).toBe(before);
  });

  test('an empty name is accepted', async () => {
    const r = await p.api('POST', '/api-keys', { body: { name: '' } });
    expect(r.status).toBe(201);
  });
});
