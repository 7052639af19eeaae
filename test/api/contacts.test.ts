// Contacts (docs/api.md §12, §2 items 4, 5, 9): the official SDK (top-level and legacy audienceId
// forms) and plain HTTP for exact codes, raw-email paths, errors, pagination and team isolation.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { startPosthorn, type Running } from '../helpers/posthorn';

let p: Running;
beforeAll(async () => {
  p = await startPosthorn();
  // Contacts carry only defined properties (docs/api.md §12.7).
  const defs: [string, 'string' | 'number'][] = [
    ['company_name', 'string'],
    ['seats', 'number'],
    ['a', 'string'],
    ['b', 'number'],
    ['constructor', 'number'],
    ['toString', 'string'],
    ['plan', 'string'],
    ['tier', 'string'],
    ['k', 'string'],
    ['ok', 'number'],
    ['bad', 'string'],
    ['x', 'string'],
  ];
  for (const [key, type] of defs) expect((await p.api('POST', '/contact-properties', { body: { key, type } })).status).toBe(201);
});
afterAll(() => p.stop());

const team = () => p.creds.team_id;
const UNKNOWN = '0195608a-51e4-70ed-a079-d3bde8e25d94';
let seq = 0;
/** A fresh address per test, so tests never share contacts. */
const addr = (local = 'c') => `${local}${++seq}@contacts.test`;

/** Everything the contact routes can change for the team: contacts and both membership directions. */
async function snapshot() {
  const { store } = p.svc;
  const contacts = await store.contacts.all(team());
  const segments = await store.segments.all(team());
  return JSON.stringify({
    contacts,
    segments,
    bySegment: await Promise.all(segments.map((s) => store.memberships.contactsOf(team(), s.id))),
    byContact: await Promise.all(contacts.map((c) => store.memberships.segmentsOf(team(), c.id))),
  });
}

async function segment(name = 'seg') {
  const r = await p.api('POST', '/segments', { body: { name } });
  expect(r.status).toBe(201);
  return r.body.id as string;
}

async function contact(body: Record<string, unknown>) {
  const r = await p.api('POST', '/contacts', { body });
  expect(r.status).toBe(201);
  return r.body.id as string;
}

describe('create and read', () => {
  test('SDK create, get by id and by email; exact shapes', async () => {
    const email = addr('ann');
    const created = await p.resend.contacts.create({ email, firstName: 'Ann', unsubscribed: false, properties: { company_name: 'Acme Corp', seats: 3 } });
    expect(created.error).toBeNull();
    expect(created.data).toEqual({ object: 'contact', id: expect.any(String) });
    const id = created.data!.id;

    const byId = await p.resend.contacts.get(id);
    expect(byId.error).toBeNull();
    expect(byId.data).toEqual({
      object: 'contact',
      id,
      email,
      first_name: 'Ann',
      last_name: null,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      unsubscribed: false,
      properties: { company_name: { value: 'Acme Corp', type: 'string' }, seats: { value: 3, type: 'number' } },
    });
    const byEmail = await p.resend.contacts.get({ email });
    expect(byEmail.data).toEqual(byId.data);
    // Email lookups ignore case.
    expect((await p.api('GET', `/contacts/${email.toUpperCase()}`)).body.id).toBe(id);
  });

  test('POST /contacts answers 201; list items carry exactly the summary fields, newest first', async () => {
    const r = await p.api('POST', '/contacts', { body: { email: addr() } });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ object: 'contact', id: expect.any(String) });
    const newer = await contact({ email: addr(), last_name: 'Newer' });
    const list = await p.resend.contacts.list();
    expect(list.error).toBeNull();
    expect(list.data!.object).toBe('list');
    expect(list.data!.has_more).toBe(false);
    expect(list.data!.data[0]).toEqual({
      id: newer,
      email: expect.any(String),
      first_name: null,
      last_name: 'Newer',
      created_at: expect.any(String),
      unsubscribed: false,
    });
    expect(list.data!.data[1]!.id).toBe(r.body.id);
  });

  test('creating an existing email (any case) → 201 with the existing id; given fields overwrite, memberships add', async () => {
    const email = addr('Mixed');
    const s1 = await segment();
    const s2 = await segment();
    const id = await contact({ email, first_name: 'Ann', last_name: 'Lee', properties: { a: 'x' }, segments: [{ id: s1 }] });
    const again = await p.api('POST', '/contacts', {
      body: { email: email.toLowerCase(), last_name: null, unsubscribed: true, properties: { b: 2 }, segments: [s2] },
    });
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(id);
    const got = (await p.api('GET', `/contacts/${id}`)).body;
    expect(got).toMatchObject({ email, first_name: 'Ann', last_name: null, unsubscribed: true });
    expect(got.properties).toEqual({ a: { value: 'x', type: 'string' }, b: { value: 2, type: 'number' } });
    expect((await p.svc.store.memberships.segmentsOf(team(), id)).sort()).toEqual([s1, s2].sort());
    // One contact per address.
    expect((await p.svc.store.contacts.all(team())).filter((c) => c.email.toLowerCase() === email.toLowerCase())).toHaveLength(1);
  });

  test('property keys are ordinary keys; `__proto__` is no property and is refused rather than mangled', async () => {
    const r = await p.api('POST', '/contacts', { raw: `{"email":"${addr()}","properties":{"constructor":1,"toString":"s"}}` });
    expect(r.status).toBe(201);
    const props = (await p.api('GET', `/contacts/${r.body.id}`)).body.properties;
    expect(props).toEqual({ constructor: { value: 1, type: 'number' }, toString: { value: 's', type: 'string' } });
    const before = await snapshot();
    const bad = await p.api('PATCH', `/contacts/${r.body.id}`, { raw: '{"properties":{"__proto__":"x"}}' });
    expect(bad.body).toEqual({
      statusCode: 422,
      name: 'validation_error',
      message: 'Invalid `properties.__proto__` field: no contact property `__proto__` exists; create it with POST /contact-properties first.',
    });
    expect(await snapshot()).toBe(before);
  });

  test('concurrent creates of one address make one contact', async () => {
    const email = addr();
    const results = await Promise.all([email, email.toUpperCase(), email, email.toUpperCase()].map((e) => p.api('POST', '/contacts', { body: { email: e } })));
    expect(results.map((r) => r.status)).toEqual([201, 201, 201, 201]);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect((await p.svc.store.contacts.all(team())).filter((c) => c.email.toLowerCase() === email)).toHaveLength(1);
  });

  test('segments as [{id}] (SDK) or [id] (spec), plus audience_id, all become memberships', async () => {
    const [a, b, c] = [await segment(), await segment(), await segment()];
    const sdk = await p.resend.contacts.create({ email: addr(), segments: [{ id: a }] });
    expect(sdk.error).toBeNull();
    expect(await p.svc.store.memberships.segmentsOf(team(), sdk.data!.id)).toEqual([a]);
    const id = await contact({ email: addr(), segments: [b.toUpperCase()], audience_id: c });
    expect((await p.svc.store.memberships.segmentsOf(team(), id)).sort()).toEqual([b, c].sort());
  });

  test('unknown contact → 404; malformed path → 422 invalid_parameter', async () => {
    expect((await p.api('GET', `/contacts/${UNKNOWN}`)).body).toEqual({ statusCode: 404, name: 'not_found', message: 'Contact not found' });
    expect((await p.api('GET', '/contacts/nobody@contacts.test')).status).toBe(404);
    const bad = await p.api('GET', '/contacts/not-an-id');
    expect(bad.status).toBe(422);
    expect(bad.body.name).toBe('invalid_parameter');
    const sdk = await p.resend.contacts.get(UNKNOWN);
    expect(sdk.error).toMatchObject({ name: 'not_found', statusCode: 404 });
  });

  test('/contacts/imports is the list of imports, never an email or id (§2 item 15)', async () => {
    const r = await p.api('GET', '/contacts/imports');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ object: 'list', has_more: false, data: [] });
    expect((await p.api('PATCH', '/contacts/imports', { body: { first_name: 'x' } })).status).toBe(405);
  });
});

describe('bad input changes nothing', () => {
  test('create errors: missing/invalid fields, unknown segments, topics, bad JSON', async () => {
    const seg = await segment();
    const before = await snapshot();
    const cases: [unknown, number, string, string?][] = [
      [{}, 422, 'missing_required_field', 'Missing `email` field.'],
      [{ first_name: 'x' }, 422, 'missing_required_field', 'Missing `email` field.'],
      [{ email: 'not-an-address' }, 422, 'validation_error'],
      [{ email: 'a@b' }, 422, 'validation_error'],
      [{ email: 42 }, 422, 'validation_error'],
      [{ email: addr(), first_name: 7 }, 422, 'validation_error', 'The `first_name` field must be a string or null.'],
      [{ email: addr(), unsubscribed: 'yes' }, 422, 'validation_error', 'The `unsubscribed` field must be a boolean.'],
      [{ email: addr(), properties: { ok: 'x', bad: true } }, 422, 'validation_error'],
      [{ email: addr(), properties: { nope: null } }, 422, 'validation_error'],
      [{ email: addr(), properties: 'x' }, 422, 'validation_error', 'The `properties` field must be an object of property keys and values.'],
      [{ email: addr(), properties: [1] }, 422, 'validation_error', 'The `properties` field must be an object of property keys and values.'],
      [{ email: addr(), segments: seg }, 422, 'validation_error'],
      [{ email: addr(), segments: [7] }, 422, 'validation_error', 'The `segments[0]` field must be a segment id or an object with an `id`.'],
      [{ email: addr(), segments: [seg, { id: 7 }] }, 422, 'validation_error', 'The `segments[1]` field must be a segment id or an object with an `id`.'],
      [{ email: addr(), properties: { ok: 1, bad: { deep: 1 } } }, 422, 'validation_error', 'Invalid `properties.bad` field: must be a string.'],
      [{ email: addr(), segments: [{ id: seg }, { id: UNKNOWN }] }, 422, 'validation_error'],
      [{ email: addr(), segments: [seg, 'garbage'] }, 422, 'validation_error'],
      [{ email: addr(), segments: [{ id: seg }], audience_id: UNKNOWN }, 422, 'validation_error'],
      [{ email: addr(), topics: [{ id: UNKNOWN, subscription: 'opt_in' }] }, 422, 'validation_error'],
      [[{ email: addr() }], 400, 'validation_error'],
    ];
    for (const [body, status, name, message] of cases) {
      const r = await p.api('POST', '/contacts', { body });
      expect({ body, status: r.status, name: r.body.name }).toEqual({ body, status, name });
      expect(r.body.statusCode).toBe(status);
      if (message) expect(r.body.message).toBe(message);
    }
    const unknownSeg = await p.api('POST', '/contacts', { body: { email: addr(), segments: [{ id: seg }, { id: UNKNOWN }] } });
    expect(unknownSeg.body.message).toContain('`segments[1].id`');
    const unknownAud = await p.api('POST', '/contacts', { body: { email: addr(), audience_id: UNKNOWN } });
    expect(unknownAud.body.message).toContain('`audience_id`');
    expect((await p.api('POST', '/contacts', { raw: '{"email":' })).status).toBe(400);
    expect(await snapshot()).toBe(before);
  });

  test('a rejected create-on-existing leaves the stored contact as it was', async () => {
    const email = addr();
    await contact({ email, first_name: 'Keep' });
    const before = await snapshot();
    const r = await p.api('POST', '/contacts', { body: { email, first_name: 'Lost', segments: [UNKNOWN] } });
    expect(r.status).toBe(422);
    expect(await snapshot()).toBe(before);
  });
});

describe('update', () => {
  test('SDK update by id and by email; null clears; properties merge; contact stays one record', async () => {
    const email = addr();
    const id = await contact({ email, first_name: 'Ann', last_name: 'Lee', properties: { plan: 'free', seats: 1 } });
    const r = await p.resend.contacts.update({ id, firstName: 'Anne', properties: { seats: 5 } });
    expect(r.error).toBeNull();
    expect(r.data).toEqual({ object: 'contact', id });
    const byEmail = await p.resend.contacts.update({ email, lastName: null, unsubscribed: true });
    expect(byEmail.data).toEqual({ object: 'contact', id });
    const got = (await p.api('GET', `/contacts/${id}`)).body;
    expect(got).toMatchObject({ first_name: 'Anne', last_name: null, unsubscribed: true });
    expect(got.properties).toEqual({ plan: { value: 'free', type: 'string' }, seats: { value: 5, type: 'number' } });
  });

  test('PATCH may change the email (case too); an email of another contact → 422, nothing changes', async () => {
    const first = addr();
    const id = await contact({ email: first });
    const other = addr();
    await contact({ email: other });
    const renamed = addr();
    const ok = await p.api('PATCH', `/contacts/${first}`, { body: { email: renamed } });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ object: 'contact', id });
    expect((await p.api('GET', `/contacts/${renamed}`)).body.id).toBe(id);
    expect((await p.api('GET', `/contacts/${first}`)).status).toBe(404);
    expect((await p.api('PATCH', `/contacts/${id}`, { body: { email: renamed.toUpperCase() } })).status).toBe(200);
    expect((await p.svc.store.contacts.get(team(), id))!.email).toBe(renamed.toUpperCase());

    const before = await snapshot();
    const taken = await p.api('PATCH', `/contacts/${id}`, { body: { email: other.toUpperCase(), first_name: 'X' } });
    expect(taken.status).toBe(422);
    expect(taken.body.name).toBe('validation_error');
    expect(taken.body.message).toContain('`email`');
    for (const body of [{ email: 'nope' }, { first_name: 1 }, { properties: { x: [] } }, { unsubscribed: null }]) {
      const r = await p.api('PATCH', `/contacts/${id}`, { body });
      expect(r.status).toBe(422);
      expect(r.body.name).toBe('validation_error');
    }
    expect(await snapshot()).toBe(before);
  });

  test('unknown contact → 404 "Contact not found"; malformed path → 422', async () => {
    const r = await p.api('PATCH', `/contacts/${UNKNOWN}`, { body: { first_name: 'x' } });
    expect(r.body).toEqual({ statusCode: 404, name: 'not_found', message: 'Contact not found' });
    expect((await p.api('PATCH', '/contacts/nobody@contacts.test', { body: {} })).status).toBe(404);
    expect((await p.api('PATCH', '/contacts/123', { body: {} })).body.name).toBe('invalid_parameter');
  });
});

describe('raw emails in paths (§2 item 4)', () => {
  test('literal +, %40 and %2B all reach the same contact; escapes are decoded only once', async () => {
    const email = `a+b${++seq}@contacts.test`;
    const id = await contact({ email });
    const [local, domain] = email.split('@');
    for (const path of [email, `${local}%40${domain}`, `${local!.replace('+', '%2B')}%40${domain}`, encodeURIComponent(email)]) {
      const r = await p.api('GET', `/contacts/${path}`);
      expect({ path, status: r.status, id: r.body.id }).toEqual({ path, status: 200, id });
    }
    // `%252B` decodes once to a literal `%2B`, which is not this contact.
    expect((await p.api('GET', `/contacts/${local!.replace('+', '%252B')}@${domain}`)).status).toBe(404);
    // A plus is never a space.
    expect((await p.api('GET', `/contacts/${local!.replace('+', '%20')}@${domain}`)).status).toBe(404);
    const sdk = await p.resend.contacts.get({ email });
    expect(sdk.data?.id).toBe(id);
    expect((await p.resend.contacts.update({ email, firstName: 'Plus' })).error).toBeNull();
    expect((await p.svc.store.contacts.get(team(), id))!.first_name).toBe('Plus');
  });
});

describe('delete', () => {
  test('by id or email: contact and memberships go; `contact` is the id', async () => {
    const seg = await segment();
    const email = addr();
    const id = await contact({ email, segments: [seg] });
    const r = await p.resend.contacts.remove({ email });
    expect(r.error).toBeNull();
    expect(r.data).toEqual({ object: 'contact', contact: id, deleted: true });
    expect(await p.svc.store.contacts.get(team(), id)).toBeUndefined();
    expect(await p.svc.store.memberships.contactsOf(team(), seg)).toEqual([]);
    expect(await p.svc.store.memberships.segmentsOf(team(), id)).toEqual([]);
    expect(await p.svc.store.segments.get(team(), seg)).toBeDefined();

    const id2 = await contact({ email: addr() });
    const byId = await p.api('DELETE', `/contacts/${id2}`);
    expect(byId.status).toBe(200);
    expect(byId.body).toEqual({ object: 'contact', contact: id2, deleted: true });
  });

  test('unknown id or email → 200 deleted:true echoing the path value', async () => {
    const upper = UNKNOWN.toUpperCase();
    expect((await p.api('DELETE', `/contacts/${upper}`)).body).toEqual({ object: 'contact', contact: upper, deleted: true });
    const r = await p.api('DELETE', '/contacts/Nobody%2Bx@contacts.test');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ object: 'contact', contact: 'Nobody+x@contacts.test', deleted: true });
    expect((await p.api('DELETE', '/contacts/neither')).body.name).toBe('invalid_parameter');
  });
});

describe('list pagination and segment filter', () => {
  test('limit/after/before/has_more on /contacts and /contacts?segment_id=', async () => {
    const seg = await segment();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.unshift(await contact({ email: addr('page'), segments: [seg] }));
    await contact({ email: addr('outside') }); // newest overall, but not in the segment

    const first = await p.resend.contacts.list({ segmentId: seg, limit: 2 });
    expect(first.error).toBeNull();
    expect(first.data!.has_more).toBe(true);
    expect(first.data!.data.map((c) => c.id)).toEqual(ids.slice(0, 2));
    const next = await p.api('GET', `/contacts?segment_id=${seg}&limit=2&after=${ids[1]}`);
    expect(next.body.data.map((c: { id: string }) => c.id)).toEqual(ids.slice(2, 4));
    expect(next.body.has_more).toBe(true);
    const last = await p.api('GET', `/contacts?limit=2&after=${ids[3]}&segment_id=${seg}`);
    expect(last.body).toMatchObject({ object: 'list', has_more: false });
    expect(last.body.data.map((c: { id: string }) => c.id)).toEqual([ids[4]]);
    const back = await p.api('GET', `/contacts?segment_id=${seg}&limit=2&before=${ids[2]}`);
    expect(back.body.data.map((c: { id: string }) => c.id)).toEqual(ids.slice(0, 2));
    expect(back.body.has_more).toBe(false);
    // No limit → the whole segment.
    const all = await p.api('GET', `/contacts?segment_id=${seg}`);
    expect(all.body.data.map((c: { id: string }) => c.id)).toEqual(ids);
    expect(all.body.has_more).toBe(false);

    // The unfiltered list pages over every contact of the team.
    const top = await p.api('GET', `/contacts?limit=1&after=${ids[0]}`);
    expect(top.body.data.map((c: { id: string }) => c.id)).toEqual([ids[1]]);
    expect(top.body.has_more).toBe(true);
  });

  test('bad pagination or segment filter → 422; unknown segment → 404', async () => {
    for (const q of ['limit=0', 'limit=101', 'limit=x', `after=${UNKNOWN}&before=${UNKNOWN}`, 'after=nope']) {
      const r = await p.api('GET', `/contacts?${q}`);
      expect({ q, status: r.status, name: r.body.name }).toEqual({ q, status: 422, name: 'validation_error' });
    }
    expect((await p.api('GET', '/contacts?segment_id=nope')).body.name).toBe('invalid_parameter');
    expect((await p.api('GET', `/contacts?segment_id=${UNKNOWN}`)).body).toEqual({ statusCode: 404, name: 'not_found', message: 'Segment not found' });
  });
});

describe('contact segments (§12.6)', () => {
  test('SDK add, list, remove by id and email; repeats are no-ops', async () => {
    const [a, b] = [await segment('A'), await segment('B')];
    const email = addr();
    const id = await contact({ email });

    const add = await p.resend.contacts.segments.add({ email, segmentId: a });
    expect(add.error).toBeNull();
    expect(add.data).toEqual({ object: 'contact_segment', id: a, contact_id: id, segment_id: a } as never);
    const raw = await p.api('POST', `/contacts/${id}/segments/${b}`);
    expect(raw.status).toBe(200);
    expect((await p.api('POST', `/contacts/${id}/segments/${b}`)).body).toEqual({ object: 'contact_segment', id: b, contact_id: id, segment_id: b });

    const list = await p.resend.contacts.segments.list({ contactId: id });
    expect(list.error).toBeNull();
    expect(list.data).toEqual({
      object: 'list',
      has_more: false,
      data: [
        { id: b, name: 'B', created_at: expect.any(String) },
        { id: a, name: 'A', created_at: expect.any(String) },
      ],
    } as never);

    const rm = await p.resend.contacts.segments.remove({ contactId: id, segmentId: a });
    expect(rm.error).toBeNull();
    expect(rm.data).toEqual({ object: 'contact_segment', id, audienceId: a, contact_id: id, segment_id: a, deleted: true } as never);
    const again = await p.api('DELETE', `/contacts/${email}/segments/${a}`);
    expect(again.status).toBe(200);
    expect(again.body.deleted).toBe(true);
    expect(await p.svc.store.memberships.segmentsOf(team(), id)).toEqual([b]);
  });

  test('the segments list defaults to 20 and pages', async () => {
    const id = await contact({ email: addr() });
    const segs: string[] = [];
    for (let i = 0; i < 22; i++) {
      const s = await segment(`s${i}`);
      segs.unshift(s);
      await p.api('POST', `/contacts/${id}/segments/${s}`);
    }
    const page = await p.api('GET', `/contacts/${id}/segments`);
    expect(page.body.data).toHaveLength(20);
    expect(page.body.has_more).toBe(true);
    const rest = await p.api('GET', `/contacts/${id}/segments?after=${segs[19]}`);
    expect(rest.body.data.map((s: { id: string }) => s.id)).toEqual(segs.slice(20));
    expect(rest.body.has_more).toBe(false);
    expect((await p.api('GET', `/contacts/${id}/segments?limit=500`)).status).toBe(422);
  });

  test('unknown contact or segment → 404, nothing changes', async () => {
    const seg = await segment();
    const id = await contact({ email: addr() });
    const before = await snapshot();
    expect((await p.api('POST', `/contacts/${UNKNOWN}/segments/${seg}`)).body.message).toBe('Contact not found');
    expect((await p.api('POST', `/contacts/${id}/segments/${UNKNOWN}`)).body).toEqual({ statusCode: 404, name: 'not_found', message: 'Segment not found' });
    expect((await p.api('DELETE', `/contacts/${id}/segments/${UNKNOWN}`)).status).toBe(404);
    expect((await p.api('GET', `/contacts/nobody@contacts.test/segments`)).status).toBe(404);
    expect((await p.api('POST', `/contacts/${id}/segments/nope`)).body.name).toBe('invalid_parameter');
    expect(await snapshot()).toBe(before);
  });
});

describe('legacy audience routes (§2 item 5)', () => {
  test('SDK with audienceId: create, get, update, remove (membership only)', async () => {
    const aud = (await p.api('POST', '/audiences', { body: { name: 'Legacy' } })).body.id as string;
    const email = addr('legacy');
    const created = await p.resend.contacts.create({ audienceId: aud, email, firstName: 'Leg', properties: { tier: 'gold' } });
    expect(created.error).toBeNull();
    const id = created.data!.id;
    expect(await p.svc.store.memberships.segmentsOf(team(), id)).toEqual([aud]);

    const got = await p.resend.contacts.get({ audienceId: aud, email });
    expect(got.data).toMatchObject({ object: 'contact', id, email, first_name: 'Leg', properties: { tier: { value: 'gold', type: 'string' } } });
    expect((await p.resend.contacts.get({ audienceId: aud, id })).data?.id).toBe(id);

    const upd = await p.resend.contacts.update({ audienceId: aud, id, lastName: 'Acy', unsubscribed: true });
    expect(upd.data).toEqual({ object: 'contact', id });
    expect(await p.svc.store.contacts.get(team(), id)).toMatchObject({ last_name: 'Acy', unsubscribed: true });

    const list = await p.api('GET', `/audiences/${aud}/contacts`);
    expect(list.body.data.map((c: { id: string }) => c.id)).toEqual([id]);

    const rm = await p.resend.contacts.remove({ audienceId: aud, email });
    expect(rm.error).toBeNull();
    expect(rm.data).toEqual({ object: 'contact', contact: email, deleted: true });
    // Only the membership went.
    expect(await p.svc.store.contacts.get(team(), id)).toBeDefined();
    expect(await p.svc.store.memberships.segmentsOf(team(), id)).toEqual([]);
    expect((await p.resend.contacts.get({ audienceId: aud, id })).error?.message).toBe('Contact not found');
  });

  test('legacy create of an existing email adds the membership and keeps the id (201)', async () => {
    const [a, b] = [await segment(), await segment()];
    const email = addr();
    const id = await contact({ email, segments: [a] });
    const r = await p.api('POST', `/audiences/${b}/contacts`, { body: { email: email.toUpperCase(), first_name: 'Two' } });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ object: 'contact', id });
    expect((await p.svc.store.memberships.segmentsOf(team(), id)).sort()).toEqual([a, b].sort());
    expect((await p.api('GET', `/audiences/${a}/contacts/${id}`)).body.first_name).toBe('Two');
  });

  test('legacy PATCH changes names, unsubscribed and properties, never the email; changes are global', async () => {
    const aud = await segment();
    const email = addr();
    const id = await contact({ email, segments: [aud], properties: { k: 'v' } });
    const r = await p.resend.contacts.update({ audienceId: aud, email, firstName: 'G', properties: { k: 'changed' } });
    expect(r.error).toBeNull();
    const plain = await p.api('PATCH', `/audiences/${aud}/contacts/${email}`, { body: { email: addr(), unsubscribed: true } });
    expect(plain.status).toBe(200);
    const c = (await p.api('GET', `/contacts/${id}`)).body;
    expect(c).toMatchObject({ first_name: 'G', email, unsubscribed: true, properties: { k: { value: 'changed', type: 'string' } } });
    const before = await snapshot();
    const bad = await p.api('PATCH', `/audiences/${aud}/contacts/${email}`, { body: { properties: { k: 5 } } });
    expect(bad.body).toEqual({ statusCode: 422, name: 'validation_error', message: 'Invalid `properties.k` field: must be a string.' });
    expect(await snapshot()).toBe(before);
  });

  test('unknown audience → 404 "Audience not found"; non-member → "Contact not found"; DELETE always 200', async () => {
    const aud = await segment();
    const outsider = addr();
    const id = await contact({ email: outsider });
    const before = await snapshot();
    const create = await p.api('POST', `/audiences/${UNKNOWN}/contacts`, { body: { email: addr() } });
    expect(create.body).toEqual({ statusCode: 404, name: 'not_found', message: 'Audience not found' });
    // Field validation comes before the path lookup (§3.3).
    expect((await p.api('POST', `/audiences/${UNKNOWN}/contacts`, { body: {} })).body.name).toBe('missing_required_field');
    expect((await p.api('GET', `/audiences/${UNKNOWN}/contacts/${id}`)).body.message).toBe('Audience not found');
    expect((await p.api('PATCH', `/audiences/${UNKNOWN}/contacts/${id}`, { body: { first_name: 'x' } })).body.message).toBe('Audience not found');
    expect((await p.api('GET', `/audiences/${aud}/contacts/${outsider}`)).body.message).toBe('Contact not found');
    expect((await p.api('PATCH', `/audiences/${aud}/contacts/${id}`, { body: { first_name: 'x' } })).body.message).toBe('Contact not found');
    expect((await p.api('GET', `/audiences/nope/contacts/${id}`)).body.name).toBe('invalid_parameter');

    const del = await p.api('DELETE', `/audiences/${UNKNOWN}/contacts/${outsider}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ object: 'contact', contact: outsider, deleted: true });
    const upper = UNKNOWN.toUpperCase();
    expect((await p.api('DELETE', `/audiences/${aud}/contacts/${upper}`)).body).toEqual({ object: 'contact', contact: upper, deleted: true });
    expect(await snapshot()).toBe(before);
  });
});

describe('team isolation', () => {
  test("another team cannot see, change or delete this team's contacts", async () => {
    const seg = await segment();
    const email = addr();
    const id = await contact({ email, first_name: 'Mine', segments: [seg] });
    const other = await p.newTeam();
    const them = p.client(other.api_key);
    const key = other.api_key;

    expect((await them.contacts.get(id)).error?.name).toBe('not_found');
    expect((await them.contacts.get({ email })).error?.name).toBe('not_found');
    expect((await them.contacts.list()).data?.data).toEqual([]);
    expect((await p.api('GET', `/contacts?segment_id=${seg}`, { key })).status).toBe(404);
    expect((await p.api('PATCH', `/contacts/${id}`, { key, body: { first_name: 'Theirs' } })).status).toBe(404);
    expect((await p.api('POST', `/contacts/${id}/segments/${seg}`, { key })).status).toBe(404);
    expect((await p.api('GET', `/audiences/${seg}/contacts/${id}`, { key })).body.message).toBe('Audience not found');
    const del = await them.contacts.remove(id);
    expect(del.data).toEqual({ object: 'contact', contact: id, deleted: true });
    await p.api('DELETE', `/audiences/${seg}/contacts/${id}`, { key });

    // The same address is a separate contact in the other team.
    const theirs = await them.contacts.create({ email });
    expect(theirs.data!.id).not.toBe(id);
    // Nothing of ours changed.
    expect(await p.svc.store.contacts.get(team(), id)).toMatchObject({ first_name: 'Mine', email });
    expect(await p.svc.store.memberships.segmentsOf(team(), id)).toEqual([seg]);
  });
});
