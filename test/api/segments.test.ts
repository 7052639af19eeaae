// Segments and audiences (docs/api.md §11, §2 item 5): one collection, two route families, through
// the official SDK (`segments`, and `audiences`, its alias) and plain HTTP for the `/audiences` family,
// exact codes and errors; segment contact lists with pagination; team isolation.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { startPosthorn, type Running } from '../helpers/posthorn';

let p: Running;
beforeAll(async () => {
  p = await startPosthorn();
});
afterAll(() => p.stop());

const team = () => p.creds.team_id;
const UNKNOWN = '0195607d-1a02-7128-a24b-e40ad23f0824';
let seq = 0;
const addr = () => `s${++seq}@segments.test`;

const segments = async () => JSON.stringify(await p.svc.store.segments.all(team()));

async function contactIn(segmentId: string) {
  const r = await p.api('POST', '/contacts', { body: { email: addr(), segments: [segmentId] } });
  expect(r.status).toBe(201);
  return r.body.id as string;
}

describe('segments through the SDK', () => {
  test('create, get, list, update, remove', async () => {
    const created = await p.resend.segments.create({ name: 'Newsletter' });
    expect(created.error).toBeNull();
    expect(created.data).toEqual({ object: 'segment', id: expect.any(String), name: 'Newsletter' });
    const id = created.data!.id;

    const got = await p.resend.segments.get(id);
    expect(got.data).toEqual({
      object: 'segment',
      id,
      name: 'Newsletter',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });

    const list = await p.resend.segments.list();
    expect(list.error).toBeNull();
    expect(list.data).toMatchObject({ object: 'list', has_more: false });
    expect(list.data!.data[0]).toEqual({ id, name: 'Newsletter', created_at: got.data!.created_at });

    const upd = await p.resend.segments.update(id, { name: 'Weekly' });
    expect(upd.error).toBeNull();
    expect(upd.data).toEqual({ object: 'segment', id } as never);
    expect((await p.svc.store.segments.get(team(), id))!.name).toBe('Weekly');

    const rm = await p.resend.segments.remove(id);
    expect(rm.data).toEqual({ object: 'segment', id, deleted: true });
    expect(await p.svc.store.segments.get(team(), id)).toBeUndefined();
  });

  test('resend.audiences is the same client (SDK 6.4+) and works alike', async () => {
    const created = await p.resend.audiences.create({ name: 'Alias' });
    expect(created.data?.object).toBe('segment');
    expect((await p.resend.audiences.get(created.data!.id)).data?.name).toBe('Alias');
  });

  test('exact status codes: 201 on create, 200 otherwise', async () => {
    const c = await p.api('POST', '/segments', { body: { name: 'codes' } });
    expect(c.status).toBe(201);
    expect((await p.api('GET', `/segments/${c.body.id}`)).status).toBe(200);
    expect((await p.api('PATCH', `/segments/${c.body.id}`, { body: { name: 'x' } })).status).toBe(200);
    expect((await p.api('DELETE', `/segments/${c.body.id}`)).status).toBe(200);
  });
});

describe('the /audiences family (SDK ≤ 6.3)', () => {
  test('same records, `object: "audience"` and "Audience not found"', async () => {
    const created = await p.api('POST', '/audiences', { body: { name: 'Old' } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ object: 'audience', id: expect.any(String), name: 'Old' });
    const id = created.body.id;
    const viaSegments = await p.api('GET', `/segments/${id}`);
    expect(viaSegments.body).toMatchObject({ object: 'segment', id, name: 'Old' });

    const seg = (await p.api('POST', '/segments', { body: { name: 'New' } })).body.id;
    const viaAudiences = await p.api('GET', `/audiences/${seg}`);
    expect(viaAudiences.status).toBe(200);
    expect(viaAudiences.body).toEqual({ object: 'audience', id: seg, name: 'New', created_at: expect.any(String) });

    const list = await p.api('GET', '/audiences');
    expect(list.body.object).toBe('list');
    expect(list.body.data.map((a: { id: string }) => a.id)).toEqual(expect.arrayContaining([id, seg]));
    expect(Object.keys(list.body.data[0]).sort()).toEqual(['created_at', 'id', 'name']);

    expect((await p.api('GET', `/audiences/${UNKNOWN}`)).body).toEqual({ statusCode: 404, name: 'not_found', message: 'Audience not found' });
    expect((await p.api('GET', `/segments/${UNKNOWN}`)).body).toEqual({ statusCode: 404, name: 'not_found', message: 'Segment not found' });

    const del = await p.api('DELETE', `/audiences/${id}`);
    expect(del.body).toEqual({ object: 'audience', id, deleted: true });
    expect(await p.svc.store.segments.get(team(), id)).toBeUndefined();
  });

  test('renaming exists only as PATCH /segments/{id}', async () => {
    const id = (await p.api('POST', '/audiences', { body: { name: 'A' } })).body.id;
    const r = await p.api('PATCH', `/audiences/${id}`, { body: { name: 'B' } });
    expect(r.status).toBe(405);
    expect(r.body.name).toBe('method_not_allowed');
  });
});

describe('errors; bad input changes nothing', () => {
  test('missing or wrong name → 422', async () => {
    const before = await segments();
    for (const path of ['/segments', '/audiences']) {
      const missing = await p.api('POST', path, { body: {} });
      expect(missing.status).toBe(422);
      expect(missing.body).toEqual({ statusCode: 422, name: 'missing_required_field', message: 'Missing `name` field.' });
      expect((await p.api('POST', path)).body.name).toBe('missing_required_field');
      const wrong = await p.api('POST', path, { body: { name: 5 } });
      expect(wrong.body).toEqual({ statusCode: 422, name: 'validation_error', message: 'The `name` field must be a string.' });
      expect((await p.api('POST', path, { raw: '{' })).status).toBe(400);
    }
    const id = (await p.api('POST', '/segments', { body: { name: 'keep' } })).body.id;
    const kept = await segments();
    expect((await p.api('PATCH', `/segments/${id}`, { body: {} })).body.name).toBe('missing_required_field');
    expect((await p.api('PATCH', `/segments/${id}`, { body: { name: null } })).body.name).toBe('validation_error');
    expect(await segments()).toBe(kept);
    await p.api('DELETE', `/segments/${id}`);
    expect(await segments()).toBe(before);
  });

  test('malformed ids → 422 invalid_parameter; unknown → 404 on GET/PATCH, 200 deleted:true on DELETE', async () => {
    for (const [method, path] of [
      ['GET', '/segments/abc'],
      ['GET', '/audiences/abc'],
      ['PATCH', '/segments/abc'],
      ['DELETE', '/segments/abc'],
      ['GET', '/segments/abc/contacts'],
    ]) {
      const r = await p.api(method!, path!, { body: method === 'PATCH' ? { name: 'x' } : undefined });
      expect({ path, status: r.status, name: r.body.name }).toEqual({ path, status: 422, name: 'invalid_parameter' });
    }
    expect((await p.api('PATCH', `/segments/${UNKNOWN}`, { body: { name: 'x' } })).body).toEqual({
      statusCode: 404,
      name: 'not_found',
      message: 'Segment not found',
    });
    expect((await p.api('DELETE', `/segments/${UNKNOWN}`)).body).toEqual({ object: 'segment', id: UNKNOWN, deleted: true });
    expect((await p.api('DELETE', `/audiences/${UNKNOWN}`)).body).toEqual({ object: 'audience', id: UNKNOWN, deleted: true });
    expect((await p.resend.segments.remove(UNKNOWN)).error).toBeNull();
  });

  test('/segments/metrics is not an id: 404 until metrics exist', async () => {
    expect((await p.api('GET', '/segments/metrics')).body).toEqual({ statusCode: 404, name: 'not_found', message: 'Route not found' });
  });
});

describe('segment contacts', () => {
  test('deleting a segment removes its memberships only; contacts stay', async () => {
    const [a, b] = [(await p.resend.segments.create({ name: 'a' })).data!.id, (await p.resend.segments.create({ name: 'b' })).data!.id];
    const c = await contactIn(a);
    await p.api('POST', `/contacts/${c}/segments/${b}`);
    await p.resend.segments.remove(a);
    expect(await p.svc.store.contacts.get(team(), c)).toBeDefined();
    expect(await p.svc.store.memberships.segmentsOf(team(), c)).toEqual([b]);
    expect(await p.svc.store.memberships.contactsOf(team(), a)).toEqual([]);
    // The deleted segment is gone from both families.
    expect((await p.api('GET', `/segments/${a}/contacts`)).status).toBe(404);
  });

  test('SDK contacts.list({segmentId}) and both family paths; pagination; no limit → everything', async () => {
    const seg = (await p.resend.segments.create({ name: 'paged' })).data!.id;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.unshift(await contactIn(seg));
    await p.api('POST', '/contacts', { body: { email: addr() } }); // not a member

    const all = await p.resend.contacts.list({ segmentId: seg });
    expect(all.error).toBeNull();
    expect(all.data!.has_more).toBe(false);
    expect(all.data!.data.map((c) => c.id)).toEqual(ids);
    expect(Object.keys(all.data!.data[0]!).sort()).toEqual(['created_at', 'email', 'first_name', 'id', 'last_name', 'unsubscribed']);
    const legacy = await p.resend.contacts.list({ audienceId: seg, limit: 3 });
    expect(legacy.data!.data.map((c) => c.id)).toEqual(ids.slice(0, 3));
    expect(legacy.data!.has_more).toBe(true);

    for (const base of ['/segments', '/audiences']) {
      const page1 = await p.api('GET', `${base}/${seg}/contacts?limit=2`);
      expect(page1.status).toBe(200);
      expect(page1.body).toMatchObject({ object: 'list', has_more: true });
      expect(page1.body.data.map((c: { id: string }) => c.id)).toEqual(ids.slice(0, 2));
      const page3 = await p.api('GET', `${base}/${seg}/contacts?after=${ids[3]}&limit=2`);
      expect(page3.body.data.map((c: { id: string }) => c.id)).toEqual([ids[4]]);
      expect(page3.body.has_more).toBe(false);
      const back = await p.api('GET', `${base}/${seg}/contacts?before=${ids[4]}&limit=2`);
      expect(back.body.data.map((c: { id: string }) => c.id)).toEqual(ids.slice(2, 4));
      expect(back.body.has_more).toBe(true);
      const bad = await p.api('GET', `${base}/${seg}/contacts?limit=0`);
      expect(bad.body).toEqual({ statusCode: 422, name: 'validation_error', message: 'The pagination limit must be a number between 1 and 100.' });
    }
    expect((await p.api('GET', `/segments/${UNKNOWN}/contacts`)).body.message).toBe('Segment not found');
    expect((await p.api('GET', `/audiences/${UNKNOWN}/contacts`)).body.message).toBe('Audience not found');
    // A deleted contact leaves the list.
    await p.api('DELETE', `/contacts/${ids[0]}`);
    expect((await p.api('GET', `/segments/${seg}/contacts`)).body.data.map((c: { id: string }) => c.id)).toEqual(ids.slice(1));
  });

  test('segment list pagination', async () => {
    const fresh = await p.newTeam();
    const them = p.client(fresh.api_key);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.unshift((await them.segments.create({ name: `n${i}` })).data!.id);
    const page = await them.segments.list({ limit: 2 });
    expect(page.data!.data.map((s) => s.id)).toEqual(ids.slice(0, 2));
    expect(page.data!.has_more).toBe(true);
    const next = await them.segments.list({ limit: 2, after: ids[1] });
    expect(next.data!.data.map((s) => s.id)).toEqual([ids[2]]);
    expect(next.data!.has_more).toBe(false);
    expect((await p.api('GET', '/segments?limit=abc', { key: fresh.api_key })).status).toBe(422);
  });
});

describe('team isolation', () => {
  test("another team cannot see, rename, list or delete this team's segments", async () => {
    const seg = (await p.resend.segments.create({ name: 'private' })).data!.id;
    const member = await contactIn(seg);
    const other = await p.newTeam();
    const them = p.client(other.api_key);
    const key = other.api_key;

    expect((await them.segments.get(seg)).error?.name).toBe('not_found');
    expect((await them.segments.list()).data?.data).toEqual([]);
    expect((await them.segments.update(seg, { name: 'stolen' })).error?.name).toBe('not_found');
    expect((await p.api('GET', `/audiences/${seg}`, { key })).status).toBe(404);
    expect((await p.api('GET', `/segments/${seg}/contacts`, { key })).status).toBe(404);
    expect((await them.contacts.list({ segmentId: seg })).error?.name).toBe('not_found');
    // DELETE answers as for any unknown id, and removes nothing.
    expect((await them.segments.remove(seg)).data).toEqual({ object: 'segment', id: seg, deleted: true });
    expect((await p.api('DELETE', `/audiences/${seg}`, { key })).status).toBe(200);

    expect((await p.svc.store.segments.get(team(), seg))?.name).toBe('private');
    expect(await p.svc.store.memberships.contactsOf(team(), seg)).toEqual([member]);
  });
});
