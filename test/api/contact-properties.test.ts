// Contact properties (docs/api.md §12.7, §12.2–§12.4, §13.4): the official SDK's
// `contactProperties.*` against a running server, each with its bad input (the documented error,
// nothing changed in the store); contacts carrying `properties` on create, update and get through
// both route families; broadcasts using them as placeholders, with the property's fallback.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { simpleParser } from 'mailparser';
import { startMailWorld, type MailWorld } from '../helpers/world';
import { until } from '../helpers/wait';
import { MAX_PROPERTIES } from '../../src/contacts/properties';

let w: MailWorld;
const team = () => w.p.creds.team_id;
const UNKNOWN = '0195608a-51e4-70ed-a079-d3bde8e25d94';
let seq = 0;
const addr = (local = 'p') => `${local}${++seq}@dest.test`;

beforeAll(async () => {
  w = await startMailWorld();
});
afterAll(() => w.stop());

async function snapshot() {
  const { store } = w.p.svc;
  return JSON.stringify({ properties: await store.contactProperties.all(team()), contacts: await store.contacts.all(team()) });
}

async function property(key: string, type: 'string' | 'number', fallback?: string | number): Promise<string> {
  const r = await w.p.api('POST', '/contact-properties', { body: { key, type, ...(fallback === undefined ? {} : { fallback_value: fallback }) } });
  expect(r.status).toBe(201);
  return r.body.id;
}

describe('contact properties (SDK)', () => {
  test('create, get, list, update, remove; the SDK maps created_at and fallback_value', async () => {
    const created = await w.p.resend.contactProperties.create({ key: 'company_name', type: 'string', fallbackValue: 'Acme Corp' });
    expect(created.error).toBeNull();
    expect(created.data).toEqual({ object: 'contact_property', id: expect.any(String) });
    const id = created.data!.id;
    // Plain HTTP: Resend's names.
    const raw = await w.p.api('GET', `/contact-properties/${id}`);
    expect(raw.body).toEqual({
      object: 'contact_property',
      id,
      key: 'company_name',
      type: 'string',
      fallback_value: 'Acme Corp',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    // The SDK renames them.
    const got = await w.p.resend.contactProperties.get(id);
    expect(got.error).toBeNull();
    expect(got.data).toEqual({
      object: 'contact_property',
      id,
      key: 'company_name',
      type: 'string',
      fallbackValue: 'Acme Corp',
      createdAt: raw.body.created_at,
    });

    const seats = await w.p.resend.contactProperties.create({ key: 'seats', type: 'number', fallbackValue: 1 });
    const list = await w.p.resend.contactProperties.list();
    expect(list.error).toBeNull();
    expect(list.data!.has_more).toBe(false);
    expect(list.data!.data.map((p) => [p.key, p.fallbackValue])).toEqual([
      ['seats', 1],
      ['company_name', 'Acme Corp'],
    ]);
    expect((await w.p.resend.contactProperties.list({ limit: 1 })).data).toMatchObject({ has_more: true, data: [{ key: 'seats' }] });

    const upd = await w.p.resend.contactProperties.update({ id, fallbackValue: 'Nobody' });
    expect(upd.error).toBeNull();
    expect(upd.data).toEqual({ object: 'contact_property', id });
    expect((await w.p.resend.contactProperties.get(id)).data!.fallbackValue).toBe('Nobody');
    expect((await w.p.resend.contactProperties.update({ id: seats.data!.id, fallbackValue: null })).error).toBeNull();
    expect((await w.p.resend.contactProperties.get(seats.data!.id)).data!.fallbackValue).toBeNull();

    const removed = await w.p.resend.contactProperties.remove(seats.data!.id);
    expect(removed.error).toBeNull();
    expect(removed.data).toEqual({ object: 'contact_property', id: seats.data!.id, deleted: true });
    expect((await w.p.resend.contactProperties.get(seats.data!.id)).error).toMatchObject({
      statusCode: 404,
      name: 'not_found',
      message: 'Contact property not found',
    });
  });

  test('bad input: the documented error, nothing changes', async () => {
    const id = await property('plan', 'string', 'free');
    const before = await snapshot();
    const create: [unknown, string, string][] = [
      [{ type: 'string' }, 'missing_required_field', 'Missing `key` field.'],
      [{ key: 'x' }, 'missing_required_field', 'Missing `type` field.'],
      [{ key: 'has space', type: 'string' }, 'validation_error', 'Invalid `key` field: must be 1 to 50 letters, digits or underscores.'],
      [{ key: 'k'.repeat(51), type: 'string' }, 'validation_error', 'Invalid `key` field: must be 1 to 50 letters, digits or underscores.'],
      [{ key: '', type: 'string' }, 'validation_error', 'Invalid `key` field: must be 1 to 50 letters, digits or underscores.'],
      [{ key: 'first_name', type: 'string' }, 'validation_error', 'Invalid `key` field: `first_name` is a contact field of its own.'],
      [{ key: 'x', type: 'boolean' }, 'validation_error', 'Invalid `type` field: must be `string` or `number`.'],
      [{ key: 'x', type: 'number', fallback_value: '3' }, 'validation_error', 'Invalid `fallback_value` field: must be a number.'],
      [{ key: 'x', type: 'string', fallback_value: 3 }, 'validation_error', 'Invalid `fallback_value` field: must be a string.'],
      [{ key: 'x', type: 'string', fallback_value: 'v'.repeat(2001) }, 'validation_error', 'Invalid `fallback_value` field: must be at most 2000 characters.'],
      [{ key: 'plan', type: 'string' }, 'validation_error', 'Invalid `key` field: a contact property `plan` already exists.'],
    ];
    for (const [body, name, message] of create)
      expect({ body, res: (await w.p.api('POST', '/contact-properties', { body })).body }).toEqual({ body, res: { statusCode: 422, name, message } });
    expect((await w.p.resend.contactProperties.create({ key: 'n', type: 'number', fallbackValue: 'one' as never })).error).toMatchObject({
      statusCode: 422,
      name: 'validation_error',
    });

    const update: [string, unknown, number, string][] = [
      [id, { fallback_value: 5 }, 422, 'Invalid `fallback_value` field: must be a string.'],
      [id, { type: 'number' }, 422, 'Invalid `type` field: cannot be changed after the property is created.'],
      [id, { key: 'other' }, 422, 'Invalid `key` field: cannot be changed after the property is created.'],
      [UNKNOWN, { fallback_value: 'x' }, 404, 'Contact property not found'],
      ['nope', { fallback_value: 'x' }, 422, 'The `id` must be a valid UUID.'],
    ];
    for (const [pid, body, status, message] of update) {
      const r = await w.p.api('PATCH', `/contact-properties/${pid}`, { body });
      expect({ pid, status: r.status, message: r.body.message }).toEqual({ pid, status, message });
    }
    expect((await w.p.resend.contactProperties.update({ id: UNKNOWN, fallbackValue: 'x' })).error).toMatchObject({ statusCode: 404 });
    expect((await w.p.resend.contactProperties.remove(UNKNOWN)).error).toMatchObject({ statusCode: 404, name: 'not_found' });
    expect((await w.p.resend.contactProperties.get('nope')).error).toMatchObject({ statusCode: 422, name: 'invalid_parameter' });
    expect(await snapshot()).toBe(before);
  });

  test(`a team defines at most ${MAX_PROPERTIES} properties; other teams see none of them`, async () => {
    const other = await w.p.newTeam();
    const theirs = w.p.client(other.api_key);
    for (let i = 0; i < MAX_PROPERTIES; i++) expect((await theirs.contactProperties.create({ key: `p${i}`, type: 'string' })).error).toBeNull();
    const over = await theirs.contactProperties.create({ key: 'one_more', type: 'string' });
    expect(over.error).toEqual({ statusCode: 422, name: 'validation_error', message: `A team can define at most ${MAX_PROPERTIES} contact properties.` });
    const mine = (await w.p.resend.contactProperties.list()).data!.data;
    expect(mine.some((p) => p.key.startsWith('p') && /^p\d+$/.test(p.key))).toBe(false);
    const theirId = (await theirs.contactProperties.list({ limit: 1 })).data!.data[0].id;
    expect((await w.p.resend.contactProperties.get(theirId)).error).toMatchObject({ statusCode: 404 });
  });
});

describe('properties on contacts', () => {
  beforeAll(async () => {
    await property('city', 'string');
    await property('age', 'number', 30);
  });

  test('create, update and get carry them, in both route families; null clears a value', async () => {
    const email = addr();
    const created = await w.p.resend.contacts.create({ email, properties: { city: 'Lyon', age: 41 } });
    expect(created.error).toBeNull();
    const id = created.data!.id;
    expect((await w.p.resend.contacts.get(id)).data!.properties).toEqual({ city: { value: 'Lyon', type: 'string' }, age: { value: 41, type: 'number' } });

    expect((await w.p.resend.contacts.update({ email, properties: { age: 42 } })).error).toBeNull();
    expect((await w.p.resend.contacts.get({ email })).data!.properties).toEqual({
      city: { value: 'Lyon', type: 'string' },
      age: { value: 42, type: 'number' },
    });
    expect((await w.p.resend.contacts.update({ id, properties: { city: null } })).error).toBeNull();
    expect((await w.p.resend.contacts.get(id)).data!.properties).toEqual({ age: { value: 42, type: 'number' } });

    // The legacy audience routes (SDK with `audienceId`).
    const aud = (await w.p.resend.segments.create({ name: 'Legacy' })).data!.id;
    const legacyEmail = addr('legacy');
    const legacy = await w.p.resend.contacts.create({ audienceId: aud, email: legacyEmail, properties: { city: 'Oslo' } });
    expect(legacy.error).toBeNull();
    expect((await w.p.resend.contacts.update({ audienceId: aud, email: legacyEmail, properties: { age: 7 } })).error).toBeNull();
    expect((await w.p.resend.contacts.get({ audienceId: aud, email: legacyEmail })).data!.properties).toEqual({
      city: { value: 'Oslo', type: 'string' },
      age: { value: 7, type: 'number' },
    });
  });

  test('unknown keys and wrong types are refused on every route; nothing changes', async () => {
    const email = addr();
    const id = (await w.p.resend.contacts.create({ email, properties: { city: 'Rome' } })).data!.id;
    const aud = (await w.p.resend.segments.create({ name: 'Aud' })).data!.id;
    await w.p.resend.contacts.segments.add({ contactId: id, segmentId: aud });
    const before = await snapshot();
    const bodies: [Record<string, unknown>, string][] = [
      [
        { properties: { nickname: 'x' } },
        'Invalid `properties.nickname` field: no contact property `nickname` exists; create it with POST /contact-properties first.',
      ],
      [{ properties: { age: '41' } }, 'Invalid `properties.age` field: must be a number.'],
      [{ properties: { age: Number.MAX_VALUE * 0 + 1, city: 3 } }, 'Invalid `properties.city` field: must be a string.'],
      [{ properties: { city: true } }, 'Invalid `properties.city` field: must be a string.'],
      [{ properties: { city: 'c'.repeat(2001) } }, 'Invalid `properties.city` field: must be at most 2000 characters.'],
      [{ properties: 'city=Rome' }, 'The `properties` field must be an object of property keys and values.'],
    ];
    for (const [body, message] of bodies) {
      const expected = { statusCode: 422, name: 'validation_error', message };
      expect({ body, res: (await w.p.api('POST', '/contacts', { body: { email: addr(), ...body } })).body }).toEqual({ body, res: expected });
      expect({ body, res: (await w.p.api('PATCH', `/contacts/${id}`, { body })).body }).toEqual({ body, res: expected });
      expect({ body, res: (await w.p.api('POST', `/audiences/${aud}/contacts`, { body: { email: addr(), ...body } })).body }).toEqual({ body, res: expected });
      expect({ body, res: (await w.p.api('PATCH', `/audiences/${aud}/contacts/${email}`, { body })).body }).toEqual({ body, res: expected });
    }
    expect((await w.p.resend.contacts.update({ id, properties: { city: false } })).error).toMatchObject({ statusCode: 422 });
    expect(await snapshot()).toBe(before);
  });

  test("a deleted property's values are no longer shown, nor shown again when the key is defined anew", async () => {
    const tmp = await property('temp', 'string');
    const id = (await w.p.resend.contacts.create({ email: addr(), properties: { temp: 'old' } })).data!.id;
    expect((await w.p.resend.contacts.get(id)).data!.properties).toHaveProperty('temp');
    await w.p.resend.contactProperties.remove(tmp);
    expect((await w.p.resend.contacts.get(id)).data!.properties).not.toHaveProperty('temp');
    await property('temp', 'string');
    expect((await w.p.resend.contacts.get(id)).data!.properties).not.toHaveProperty('temp');
    expect((await w.p.resend.contacts.update({ id, properties: { temp: 'new' } })).error).toBeNull();
    expect((await w.p.resend.contacts.get(id)).data!.properties.temp).toEqual({ value: 'new', type: 'string' });
  });
});

describe('placeholders in broadcasts', () => {
  test("a contact's value, else the placeholder's fallback, else the property's fallback value", async () => {
    await property('tier', 'string', 'Bronze & co');
    const seg = (await w.p.resend.segments.create({ name: 'Tiers' })).data!.id;
    const gold = addr('gold');
    const plain = addr('plain');
    await w.p.resend.contacts.create({ email: gold, properties: { tier: 'Gold', age: 50 }, segments: [{ id: seg }] });
    await w.p.resend.contacts.create({ email: plain, segments: [{ id: seg }] });
    const b = await w.p.resend.broadcasts.create({
      segmentId: seg,
      from: 'news@example.test',
      subject: 'Your {{{contact.tier}}} plan',
      text: 'tier={{{contact.tier}}} inline={{{contact.tier|none}}} age={{{contact.age}}}',
      html: '<p>{{{contact.tier}}}</p>',
      send: true,
    });
    expect(b.error).toBeNull();
    await until(() => w.sink.to(gold).length > 0 && w.sink.to(plain).length > 0, 'both emails at the sink', 15_000);
    const goldMsg = await simpleParser(w.sink.to(gold)[0].raw);
    const plainMsg = await simpleParser(w.sink.to(plain)[0].raw);
    expect(goldMsg.subject).toBe('Your Gold plan');
    expect(goldMsg.text).toContain('tier=Gold inline=Gold age=50');
    expect(plainMsg.subject).toBe('Your Bronze & co plan');
    // `age` has a fallback value of 30 (defined above); the placeholder's own fallback wins over the property's.
    expect(plainMsg.text).toContain('tier=Bronze & co inline=none age=30');
    expect(plainMsg.html).toContain('<p>Bronze &amp; co</p>');
  });
});
