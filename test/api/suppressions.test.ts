// Suppressions (docs/api.md §16): the six routes, the origin filter, id-or-email paths,
// batches, pagination and team isolation; plus the module used by bounce handling.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { startPosthorn, type Running } from '../helpers/posthorn';
import { invalidAddressMessage } from '../../src/sending/address';
import { newId } from '../../src/ids';
import { suppress, isSuppressed } from '../../src/suppressions';

let p: Running;
let team: string;

const snapshot = async (t = team) => JSON.stringify(await p.svc.store.suppressions.all(t));
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

beforeAll(async () => {
  p = await startPosthorn();
  team = p.creds.team_id;
});
afterAll(() => p.stop());

describe('add, get, remove', () => {
  test('the SDK adds a manual entry and reads it back by id and by email', async () => {
    const { data, error } = await p.resend.suppressions.add({ email: 'gone@example.test' });
    expect(error).toBeNull();
    expect(data).toEqual({ object: 'suppression', id: expect.any(String) });
    const entry = {
      object: 'suppression',
      id: data!.id,
      email: 'gone@example.test',
      origin: 'manual',
      source_id: null,
      created_at: expect.stringMatching(ISO_MS),
      // Posthorn: a bounce's class and reply (docs/api.md §16); null for a manual entry.
      class: null,
      reply: null,
    };
    expect((await p.resend.suppressions.get(data!.id)).data).toEqual(entry as never);
    expect((await p.resend.suppressions.get('gone@example.test')).data).toEqual(entry as never);
    // Case-insensitive match; the SDK percent-encodes, plain clients may not.
    const raw = await p.api('GET', '/suppressions/Gone@Example.TEST');
    expect(raw.status).toBe(200);
    expect(raw.body.id).toBe(data!.id);
    expect((await p.api('GET', '/suppressions/gone%40example.test')).body.id).toBe(data!.id);
  });

  test('POST answers 201 (plain HTTP), and 201 with the existing id when already suppressed', async () => {
    const first = await p.api('POST', '/suppressions', { body: { email: 'twice@example.test' } });
    expect(first.status).toBe(201);
    const before = await snapshot();
    const again = await p.api('POST', '/suppressions', { body: { email: '  TWICE@example.test ' } });
    expect(again.status).toBe(201);
    expect(again.body).toEqual({ object: 'suppression', id: first.body.id });
    expect(await snapshot()).toBe(before);
  });

  test('plus signs in paths stay plus signs, encoded or not', async () => {
    const { data } = await p.resend.suppressions.add({ email: 'a+tag@example.test' });
    expect((await p.api('GET', '/suppressions/a+tag@example.test')).body.id).toBe(data!.id);
    expect((await p.api('GET', '/suppressions/a%2Btag%40example.test')).body.id).toBe(data!.id);
    expect((await p.api('GET', '/suppressions/a tag@example.test'.replace(' ', '%20'))).status).toBe(404);
  });

  test('remove by id or by email; the address is then no longer suppressed', async () => {
    const a = (await p.resend.suppressions.add({ email: 'rm1@example.test' })).data!;
    const b = (await p.resend.suppressions.add({ email: 'rm+2@example.test' })).data!;
    const byId = await p.resend.suppressions.remove(a.id);
    expect(byId.error).toBeNull();
    expect(byId.data).toEqual({ object: 'suppression', id: a.id, deleted: true });
    const byEmail = await p.resend.suppressions.remove('RM+2@example.test');
    expect(byEmail.data).toEqual({ object: 'suppression', id: b.id, deleted: true });
    expect(await isSuppressed(p.svc.store, team, 'rm1@example.test')).toBe(false);
    expect(await isSuppressed(p.svc.store, team, 'rm+2@example.test')).toBe(false);
    const gone = await p.api('DELETE', `/suppressions/${a.id}`);
    expect(gone.body).toEqual({ statusCode: 404, name: 'not_found', message: 'Suppression not found' });
  });

  test('bad input and unknown entries are refused and change nothing', async () => {
    const before = await snapshot();
    const posts: [unknown, number, string, string][] = [
      [{}, 422, 'missing_required_field', 'Missing `email` field.'],
      [{ email: 5 }, 422, 'validation_error', 'The `email` field must be a string.'],
      [{ email: 'a@b' }, 422, 'validation_error', invalidAddressMessage('email')],
      [{ email: 'Ann <ann@example.test>' }, 422, 'validation_error', invalidAddressMessage('email')],
      [{ email: 'ann smith@example.test' }, 422, 'validation_error', invalidAddressMessage('email')],
    ];
    for (const [body, code, name, message] of posts) {
      const r = await p.api('POST', '/suppressions', { body });
      expect({ body, res: r.body }).toEqual({ body, res: { statusCode: code, name, message } });
    }
    expect((await p.api('POST', '/suppressions', { raw: '["x"]' })).status).toBe(400);
    for (const method of ['GET', 'DELETE']) {
      expect((await p.api(method, `/suppressions/${newId()}`)).body).toEqual({ statusCode: 404, name: 'not_found', message: 'Suppression not found' });
      expect((await p.api(method, '/suppressions/nobody@example.test')).body.message).toBe('Suppression not found');
      const bad = await p.api(method, '/suppressions/not-an-id');
      expect(bad.status).toBe(422);
      expect(bad.body.name).toBe('invalid_parameter');
    }
    expect(await snapshot()).toBe(before);
  });
});

describe('batches', () => {
  test('batch add: 201, one entry per input in order, existing ids reused', async () => {
    const existing = (await p.resend.suppressions.add({ email: 'b0@example.test' })).data!;
    const { data, error } = await p.resend.suppressions.batch.add({ emails: ['b1@example.test', 'B0@example.test', 'b2@example.test', 'b1@example.test'] });
    expect(error).toBeNull();
    expect(data!.data).toHaveLength(4);
    expect(data!.data.every((d) => d.object === 'suppression')).toBe(true);
    const ids = data!.data.map((d) => d.id);
    expect(ids[1]).toBe(existing.id);
    expect(ids[3]).toBe(ids[0]);
    expect(new Set(ids).size).toBe(3);
    const raw = await p.api('POST', '/suppressions/batch/add', { body: { emails: ['b3@example.test'] } });
    expect(raw.status).toBe(201);
    expect(raw.body).toEqual({ data: [{ object: 'suppression', id: expect.any(String) }] });
  });

  test('batch add refuses empty, oversized or invalid batches as a whole', async () => {
    const before = await snapshot();
    const many = Array.from({ length: 101 }, (_, i) => `m${i}@example.test`);
    const cases: [unknown, number, string, string][] = [
      [{}, 422, 'missing_required_field', 'Missing `emails` field.'],
      [{ emails: [] }, 422, 'validation_error', 'The `emails` field must contain between 1 and 100 items.'],
      [{ emails: many }, 422, 'validation_error', 'The `emails` field must contain between 1 and 100 items.'],
      [{ emails: ['ok@example.test', 'bad'] }, 422, 'validation_error', invalidAddressMessage('emails[1]')],
      [{ emails: ['ok@example.test', 3] }, 422, 'validation_error', 'The `emails[1]` field must be a string.'],
      [{ emails: 'ok@example.test' }, 422, 'validation_error', 'The `emails` field must be an array of strings.'],
    ];
    for (const [body, code, name, message] of cases) {
      const r = await p.api('POST', '/suppressions/batch/add', { body });
      expect({ body, res: r.body }).toEqual({ body, res: { statusCode: code, name, message } });
    }
    expect(await snapshot()).toBe(before);
    const hundred = await p.api('POST', '/suppressions/batch/add', { body: { emails: many.slice(0, 100) } });
    expect(hundred.status).toBe(201);
    expect(hundred.body.data).toHaveLength(100);
  });

  test('batch remove by emails or ids reports only what it removed', async () => {
    const added = (await p.resend.suppressions.batch.add({ emails: ['r1@example.test', 'r2@example.test', 'r3@example.test'] })).data!.data;
    const byEmail = await p.resend.suppressions.batch.remove({ emails: ['R1@example.test', 'nobody@example.test', 'r1@example.test'] });
    expect(byEmail.error).toBeNull();
    expect(byEmail.data).toEqual({ data: [{ object: 'suppression', id: added[0]!.id, deleted: true }] });
    const byId = await p.api('POST', '/suppressions/batch/remove', { body: { ids: [added[1]!.id, newId(), added[2]!.id.toUpperCase()] } });
    expect(byId.status).toBe(200);
    expect(byId.body).toEqual({
      data: [
        { object: 'suppression', id: added[1]!.id, deleted: true },
        { object: 'suppression', id: added[2]!.id, deleted: true },
      ],
    });
    const none = await p.api('POST', '/suppressions/batch/remove', { body: { ids: [added[0]!.id] } });
    expect(none.body).toEqual({ data: [] });
  });

  test('batch remove refuses bad requests and changes nothing', async () => {
    await p.resend.suppressions.add({ email: 'keep@example.test' });
    const before = await snapshot();
    const cases: [unknown, number, string, string][] = [
      [{}, 422, 'missing_required_field', 'Missing `emails` or `ids` field.'],
      [{ emails: ['keep@example.test'], ids: [newId()] }, 422, 'validation_error', 'You can only use either `emails` or `ids`, not both.'],
      [{ emails: [] }, 422, 'validation_error', 'The `emails` field must contain between 1 and 100 items.'],
      [{ ids: Array.from({ length: 101 }, () => newId()) }, 422, 'validation_error', 'The `ids` field must contain between 1 and 100 items.'],
      [{ ids: ['nope'] }, 422, 'validation_error', 'Invalid `ids[0]` field: must be a valid UUID.'],
      [{ emails: [1] }, 422, 'validation_error', 'The `emails[0]` field must be a string.'],
    ];
    for (const [body, code, name, message] of cases) {
      const r = await p.api('POST', '/suppressions/batch/remove', { body });
      expect({ body, res: r.body }).toEqual({ body, res: { statusCode: code, name, message } });
    }
    expect(await snapshot()).toBe(before);
  });
});

describe('list', () => {
  test('newest first, default 20, cursors both ways, origin filter', async () => {
    const fresh = await startPosthorn();
    try {
      const ft = fresh.creds.team_id;
      const store = fresh.svc.store;
      // 30 entries: every third a bounce, every fifth a complaint (as bounce handling would add them).
      const ids: string[] = [];
      const origins: string[] = [];
      for (let i = 0; i < 30; i++) {
        const origin = i % 3 === 0 ? 'bounce' : i % 5 === 0 ? 'complaint' : 'manual';
        const src = origin === 'manual' ? null : newId();
        const rec = await store.write((tx) => suppress(fresh.svc.events, tx, ft, `l${i}@example.test`, origin, src));
        ids.unshift(rec.id);
        origins.unshift(origin);
      }
      const def = await fresh.resend.suppressions.list();
      expect(def.error).toBeNull();
      expect(def.data!.has_more).toBe(true);
      expect(def.data!.data.map((s) => s.id)).toEqual(ids.slice(0, 20));
      expect(Object.keys(def.data!.data[0]!).sort()).toEqual(['class', 'created_at', 'email', 'id', 'origin', 'reply', 'source_id']);
      const rest = await fresh.resend.suppressions.list({ after: ids[19] });
      expect(rest.data!.has_more).toBe(false);
      expect(rest.data!.data.map((s) => s.id)).toEqual(ids.slice(20));
      const back = await fresh.api('GET', `/suppressions?limit=5&before=${ids[10]}`);
      expect(back.body).toEqual({ object: 'list', has_more: true, data: expect.any(Array) });
      expect(back.body.data.map((s: { id: string }) => s.id)).toEqual(ids.slice(5, 10));

      const bounces = ids.filter((_, i) => origins[i] === 'bounce');
      const b = await fresh.resend.suppressions.list({ origin: 'bounce', limit: 4 });
      expect(b.data!.data.map((s) => s.id)).toEqual(bounces.slice(0, 4));
      expect(b.data!.has_more).toBe(true);
      expect(b.data!.data.every((s) => s.origin === 'bounce' && s.source_id !== null)).toBe(true);
      const b2 = await fresh.api('GET', `/suppressions?origin=bounce&limit=100&after=${bounces[3]}`);
      expect(b2.body.data.map((s: { id: string }) => s.id)).toEqual(bounces.slice(4));
      expect(b2.body.has_more).toBe(false);
      const complaints = await fresh.api('GET', '/suppressions?origin=complaint');
      expect(complaints.body.data.map((s: { id: string }) => s.id)).toEqual(ids.filter((_, i) => origins[i] === 'complaint'));

      for (const q of ['origin=spam', 'origin=', 'origin=Bounce', 'limit=0', 'limit=abc', 'before=nope', `after=${ids[0]}&before=${ids[1]}`]) {
        const r = await fresh.api('GET', `/suppressions?${q}`);
        expect({ q, status: r.status, name: r.body.name }).toEqual({ q, status: 422, name: 'validation_error' });
      }
      expect((await fresh.api('GET', '/suppressions?origin=spam')).body.message).toBe('The `origin` parameter must be one of bounce, complaint, manual.');
    } finally {
      await fresh.stop();
    }
  });
});

describe('module', () => {
  test('suppress keeps the first entry; isSuppressed ignores case', async () => {
    const store = p.svc.store;
    const emailId = newId();
    const first = await store.write((tx) => suppress(p.svc.events, tx, team, 'Bounced@Example.test', 'bounce', emailId));
    const second = await store.write((tx) => suppress(p.svc.events, tx, team, 'bounced@example.test', 'complaint', newId()));
    expect(second).toEqual(first);
    expect(first).toMatchObject({ email: 'Bounced@Example.test', origin: 'bounce', source_id: emailId });
    expect(await isSuppressed(store, team, 'BOUNCED@example.TEST')).toBe(true);
    expect(await isSuppressed(store, newId(), 'bounced@example.test')).toBe(false);
  });
});

describe('teams', () => {
  test('another team has its own list', async () => {
    const mine = (await p.resend.suppressions.add({ email: 'shared@example.test' })).data!;
    const other = await p.newTeam();
    const sdk = p.client(other.api_key);
    expect((await sdk.suppressions.list()).data!.data).toEqual([]);
    expect((await sdk.suppressions.get(mine.id)).error?.name).toBe('not_found');
    expect((await sdk.suppressions.get('shared@example.test')).error?.name).toBe('not_found');
    expect((await sdk.suppressions.remove(mine.id)).error?.name).toBe('not_found');
    expect((await sdk.suppressions.batch.remove({ ids: [mine.id] })).data).toEqual({ data: [] });
    // The same address suppressed by the other team is a separate entry.
    const theirs = (await sdk.suppressions.add({ email: 'shared@example.test' })).data!;
    expect(theirs.id).not.toBe(mine.id);
    expect((await p.resend.suppressions.get('shared@example.test')).data!.id).toBe(mine.id);
  });
});
