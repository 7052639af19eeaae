// Templates (docs/api.md §20) through the official SDK against a running Posthorn: every method of
// `resend.templates` with its bad input (the documented error, nothing changed in the store), the
// draft and published states, and sending with `template` on POST /emails and in batches — values
// HTML-escaped in html, as given in subject and text, fallbacks, the documented 422s — delivered to
// a loopback MTA.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { simpleParser } from 'mailparser';
import type { Running } from '../helpers/posthorn';
import type { Sink } from '../helpers/sink';
import { waitForEmail, eventsOf, storedEmails } from '../helpers/emails';
import { startMailWorld, type MailWorld } from '../helpers/world';

let world: MailWorld;
let p: Running;
let sink: Sink;
let seq = 0;
const alias = (label = 'tpl') => `${label}-${process.pid}-${seq++}`;

beforeAll(async () => {
  world = await startMailWorld();
  ({ p, sink } = world);
});
afterAll(() => world.stop());

const team = () => p.creds.team_id;
const stored = () => p.svc.store.templates.all(team());
const emailCount = async () => (await storedEmails(p.svc, team())).length;
const UNKNOWN = '0195608a-51e4-70ed-a079-d3bde8e25d94';

/** A template created and published through the SDK (create().publish()). */
async function published(opts: Record<string, unknown> = {}) {
  const { data, error } = await p.resend.templates
    .create({
      name: 'Order confirmation',
      alias: alias(),
      from: 'Acme Store <store@example.test>',
      subject: 'Order {{{ORDER}}} for {{{NAME}}}',
      html: '<p>Hi {{{NAME}}}, your {{{PRODUCT}}} costs {{{PRICE}}}.</p>',
      text: 'Hi {{{NAME}}}, your {{{PRODUCT}}} costs {{{PRICE}}}.',
      variables: [
        { key: 'NAME', type: 'string' },
        { key: 'ORDER', type: 'number' },
        { key: 'PRODUCT', type: 'string', fallbackValue: 'item' },
        { key: 'PRICE', type: 'number', fallbackValue: 25 },
      ],
      ...opts,
    } as never)
    .publish();
  expect(error).toBeNull();
  return (await p.svc.store.templates.get(team(), data!.id))!;
}

describe('resend.templates: create, get, list, update, remove', () => {
  test('create → a draft; get by id and by alias shows the latest version', async () => {
    const a = alias('welcome');
    const { data, error } = await p.resend.templates.create({
      name: 'Welcome',
      alias: a,
      from: 'Acme <hello@example.test>',
      subject: 'Welcome, {{{NAME}}}',
      replyTo: 'help@example.test',
      html: '<h1>Hi {{{NAME}}}</h1>',
      variables: [{ key: 'NAME', type: 'string', fallbackValue: 'there' }],
    });
    expect(error).toBeNull();
    expect(data).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), object: 'template' } as never);
    const id = data!.id;
    // Plain HTTP: 201.
    expect((await p.api('POST', '/templates', { body: { name: 'x', html: '<p>x</p>' } })).status).toBe(201);

    const got = await p.resend.templates.get(id);
    expect(got.error).toBeNull();
    expect(got.data).toEqual({
      object: 'template',
      id,
      current_version_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      alias: a,
      name: 'Welcome',
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
      status: 'draft',
      published_at: null,
      from: 'Acme <hello@example.test>',
      subject: 'Welcome, {{{NAME}}}',
      reply_to: ['help@example.test'],
      html: '<h1>Hi {{{NAME}}}</h1>',
      text: null,
      variables: [
        { id: expect.any(String), key: 'NAME', type: 'string', fallback_value: 'there', created_at: expect.any(String), updated_at: expect.any(String) },
      ],
      has_unpublished_versions: false,
    } as never);
    expect((await p.resend.templates.get(a)).data).toEqual(got.data);
  });

  test('list: newest first, 20 by default, cursors; items without content', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await p.resend.templates.create({ name: `L${i}`, html: '<p>l</p>' })).data!.id);
    const page = await p.resend.templates.list({ limit: 2 });
    expect(page.error).toBeNull();
    expect(page.data!.has_more).toBe(true);
    expect(page.data!.data.map((t) => t.id)).toEqual([ids[2], ids[1]]);
    expect(page.data!.data[0]).toEqual({
      id: ids[2],
      name: 'L2',
      status: 'draft',
      published_at: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      alias: null,
      has_unpublished_versions: false,
    } as never);
    const next = await p.resend.templates.list({ limit: 2, after: ids[1] });
    expect(next.data!.data[0].id).toBe(ids[0]);
    const before = await p.resend.templates.list({ before: ids[0], limit: 1 });
    expect(before.data!.data.map((t) => t.id)).toEqual([ids[1]]);
    const all = await p.resend.templates.list();
    expect(all.data!.data.length).toBeLessThanOrEqual(20);
    // Bad pagination: 422, as every list (docs/api.md §4).
    expect((await p.api('GET', '/templates?limit=0')).body).toMatchObject({ statusCode: 422, name: 'validation_error' });
    expect((await p.api('GET', '/templates?after=nope')).body).toMatchObject({ statusCode: 422, name: 'validation_error' });
  });

  test('update by id or alias: partial; null clears; the alias can change', async () => {
    const a = alias();
    const id = (await p.resend.templates.create({ name: 'Before', alias: a, subject: 'S', text: 'T', html: '<p>1</p>' })).data!.id;
    const up = await p.resend.templates.update(a, { name: 'After', html: '<p>2</p>' });
    expect(up.error).toBeNull();
    expect(up.data).toEqual({ id, object: 'template' } as never);
    let t = (await p.resend.templates.get(id)).data!;
    expect(t).toMatchObject({ name: 'After', html: '<p>2</p>', subject: 'S', text: 'T', alias: a });
    const b = alias();
    expect((await p.api('PATCH', `/templates/${id}`, { body: { subject: null, alias: b } })).status).toBe(200);
    t = (await p.resend.templates.get(b)).data!;
    expect(t).toMatchObject({ subject: null, alias: b });
    expect((await p.resend.templates.get(a)).error).toMatchObject({ statusCode: 404, name: 'not_found' });
  });

  test('remove by id or alias → {object, id, deleted}; gone afterwards', async () => {
    const a = alias();
    const id = (await p.resend.templates.create({ name: 'Gone', alias: a, html: '<p>x</p>' })).data!.id;
    const rm = await p.resend.templates.remove(a);
    expect(rm.error).toBeNull();
    expect(rm.data).toEqual({ object: 'template', id, deleted: true } as never);
    expect(await p.svc.store.templates.get(team(), id)).toBeUndefined();
    expect((await p.resend.templates.get(id)).error).toMatchObject({ statusCode: 404, name: 'not_found', message: 'Template not found' });
    // The alias is free again.
    expect((await p.resend.templates.create({ name: 'Again', alias: a, html: '<p>x</p>' })).error).toBeNull();
  });

  test('another team sees none of them', async () => {
    const a = alias();
    const id = (await p.resend.templates.create({ name: 'Mine', alias: a, html: '<p>x</p>' })).data!.id;
    const other = p.client((await p.newTeam()).api_key);
    for (const ref of [id, a]) {
      expect((await other.templates.get(ref)).error).toMatchObject({ statusCode: 404 });
      expect((await other.templates.remove(ref)).error).toMatchObject({ statusCode: 404 });
      expect((await other.templates.publish(ref)).error).toMatchObject({ statusCode: 404 });
    }
    expect((await other.templates.list()).data!.data).toEqual([]);
    // Aliases are per team: the other team may use the same one.
    expect((await other.templates.create({ name: 'Theirs', alias: a, html: '<p>y</p>' })).error).toBeNull();
  });
});

describe('bad input: the documented error, nothing stored or changed', () => {
  const tooMany = Array.from({ length: 51 }, (_, i) => ({ key: `V${i}`, type: 'string' }));
  const cases: [string, Record<string, unknown>, number, string, string][] = [
    ['no name', { html: '<p>x</p>' }, 422, 'missing_required_field', 'Missing `name` field.'],
    ['no html', { name: 'n' }, 422, 'missing_required_field', 'Missing `html` field.'],
    ['empty html', { name: 'n', html: ' ' }, 422, 'validation_error', 'Invalid `html` field: must not be empty.'],
    ['html not Mustache', { name: 'n', html: '<p>{{#X}}</p>' }, 422, 'validation_error', 'Invalid `html` field: it is not a valid template'],
    ['a partial', { name: 'n', html: '{{> footer}}' }, 422, 'validation_error', 'partials'],
    ['subject not Mustache', { name: 'n', html: 'x', subject: '{{{A}}' }, 422, 'validation_error', 'Invalid `subject` field'],
    ['bad from', { name: 'n', html: 'x', from: 'not an address' }, 422, 'validation_error', 'Invalid `from` field. The email address needs to follow'],
    ['bad reply_to', { name: 'n', html: 'x', reply_to: ['ok@example.test', 'nope'] }, 422, 'validation_error', 'Invalid `reply_to` field.'],
    ['alias that is a UUID', { name: 'n', html: 'x', alias: UNKNOWN }, 422, 'validation_error', 'Invalid `alias` field'],
    ['alias with a slash', { name: 'n', html: 'x', alias: 'a/b' }, 422, 'validation_error', 'Invalid `alias` field'],
    ['51 variables', { name: 'n', html: 'x', variables: tooMany }, 422, 'validation_error', 'at most 50 variables'],
    ['reserved key', { name: 'n', html: 'x', variables: [{ key: 'FIRST_NAME', type: 'string' }] }, 422, 'validation_error', 'reserved'],
    ['reserved key `contact`', { name: 'n', html: 'x', variables: [{ key: 'contact', type: 'string' }] }, 422, 'validation_error', 'reserved'],
    ['key with a dash', { name: 'n', html: 'x', variables: [{ key: 'A-B', type: 'string' }] }, 422, 'validation_error', 'Invalid `variables[0].key` field'],
    [
      'key of 51 characters',
      { name: 'n', html: 'x', variables: [{ key: 'K'.repeat(51), type: 'string' }] },
      422,
      'validation_error',
      'Invalid `variables[0].key` field',
    ],
    [
      'key twice',
      {
        name: 'n',
        html: 'x',
        variables: [
          { key: 'A', type: 'string' },
          { key: 'A', type: 'number' },
        ],
      },
      422,
      'validation_error',
      'declared twice',
    ],
    ['no type', { name: 'n', html: 'x', variables: [{ key: 'A' }] }, 422, 'missing_required_field', 'Missing `variables[0].type` field.'],
    ['unknown type', { name: 'n', html: 'x', variables: [{ key: 'A', type: 'boolean' }] }, 422, 'validation_error', 'Invalid `variables[0].type` field'],
    [
      'fallback of the wrong type',
      { name: 'n', html: 'x', variables: [{ key: 'A', type: 'number', fallback_value: 'ten' }] },
      422,
      'validation_error',
      'Invalid `variables[0].fallback_value` field',
    ],
    [
      'fallback of 2,001 characters',
      { name: 'n', html: 'x', variables: [{ key: 'A', type: 'string', fallback_value: 'x'.repeat(2001) }] },
      422,
      'validation_error',
      'at most 2000',
    ],
    ['fallback beyond 2^53 − 1', { name: 'n', html: 'x', variables: [{ key: 'A', type: 'number', fallback_value: 2 ** 53 }] }, 422, 'validation_error', '2^53'],
  ];
  for (const [what, body, status, name, message] of cases)
    test(`create: ${what}`, async () => {
      const before = await stored();
      const r = await p.api('POST', '/templates', { body });
      expect(r.status).toBe(status);
      expect(r.body).toMatchObject({ statusCode: status, name });
      expect(r.body.message).toContain(message);
      expect(await stored()).toEqual(before);
    });

  test('create through the SDK: the error comes back as the SDK error', async () => {
    const before = await stored();
    const { data, error } = await p.resend.templates.create({ name: 'n', html: '<p>x</p>', variables: [{ key: 'EMAIL', type: 'string' }] });
    expect(data).toBeNull();
    expect(error).toMatchObject({ statusCode: 422, name: 'validation_error' });
    expect(await stored()).toEqual(before);
  });

  test('alias already used: 422 on create and on update, nothing changed', async () => {
    const a = alias();
    await p.resend.templates.create({ name: 'First', alias: a, html: '<p>1</p>' });
    const second = (await p.resend.templates.create({ name: 'Second', html: '<p>2</p>' })).data!.id;
    const before = await stored();
    expect((await p.resend.templates.create({ name: 'Third', alias: a, html: '<p>3</p>' })).error).toMatchObject({
      statusCode: 422,
      name: 'validation_error',
      message: expect.stringContaining('already the alias'),
    });
    expect((await p.resend.templates.update(second, { alias: a })).error).toMatchObject({ statusCode: 422, name: 'validation_error' });
    expect(await stored()).toEqual(before);
  });

  test('update: unknown → 404, bad fields → 422, nothing changed', async () => {
    const id = (await p.resend.templates.create({ name: 'Keep', html: '<p>keep</p>' })).data!.id;
    const before = await p.svc.store.templates.get(team(), id);
    expect((await p.resend.templates.update(UNKNOWN, { name: 'x' })).error).toMatchObject({
      statusCode: 404,
      name: 'not_found',
      message: 'Template not found',
    });
    expect((await p.resend.templates.update('no-such-alias', { name: 'x' })).error).toMatchObject({ statusCode: 404, name: 'not_found' });
    for (const body of [{ name: '' }, { html: null }, { html: '{{#A}}' }, { variables: [{ key: 'this', type: 'string' }] }, { from: 'x' }, { name: 5 }]) {
      const r = await p.api('PATCH', `/templates/${id}`, { body });
      expect(r.status).toBe(422);
      expect(r.body.name).toBe('validation_error');
    }
    expect(await p.svc.store.templates.get(team(), id)).toEqual(before);
  });

  test('get, remove, publish, duplicate of an unknown id or alias → 404; nothing changed', async () => {
    const before = await stored();
    for (const ref of [UNKNOWN, 'no-such-alias']) {
      expect((await p.resend.templates.get(ref)).error).toMatchObject({ statusCode: 404, name: 'not_found', message: 'Template not found' });
      expect((await p.resend.templates.remove(ref)).error).toMatchObject({ statusCode: 404, name: 'not_found' });
      expect((await p.resend.templates.publish(ref)).error).toMatchObject({ statusCode: 404, name: 'not_found' });
      expect((await p.resend.templates.duplicate(ref)).error).toMatchObject({ statusCode: 404, name: 'not_found' });
      // The chained publish gives back the duplicate's error without a second request.
      expect((await p.resend.templates.duplicate(ref).publish()).error).toMatchObject({ statusCode: 404 });
    }
    expect(await stored()).toEqual(before);
  });
});

describe('draft and published', () => {
  test('a draft cannot be sent; publish; edits wait as unpublished versions until published again', async () => {
    const a = alias();
    const id = (await p.resend.templates.create({ name: 'Versions', alias: a, from: 'hello@example.test', subject: 'V', html: '<p>version 1</p>' })).data!.id;
    const before = await emailCount();
    const draft = await p.resend.emails.send({ to: 'ann@dest.test', template: { id } });
    expect(draft.error).toMatchObject({ statusCode: 422, name: 'validation_error', message: expect.stringContaining('is not published') });
    expect(await emailCount()).toBe(before);

    const pub = await p.resend.templates.publish(a);
    expect(pub.error).toBeNull();
    expect(pub.data).toEqual({ id, object: 'template' } as never);
    let t = (await p.resend.templates.get(id)).data!;
    expect(t).toMatchObject({ status: 'published', published_at: expect.stringMatching(/Z$/), has_unpublished_versions: false });
    const v1 = t.current_version_id;

    await p.resend.templates.update(id, { html: '<p>version 2</p>' });
    t = (await p.resend.templates.get(id)).data!;
    expect(t).toMatchObject({ status: 'published', html: '<p>version 2</p>', has_unpublished_versions: true });
    expect(t.current_version_id).not.toBe(v1);
    // Posthorn: list items carry it too (the dashboard's list shows it).
    const listed = (await p.api('GET', `/templates?limit=100`)).body.data.find((x: { id: string }) => x.id === id);
    expect(listed).toMatchObject({ status: 'published', has_unpublished_versions: true });
    // A rename is no new content.
    await p.resend.templates.update(id, { name: 'Renamed' });
    expect((await p.resend.templates.get(id)).data!.current_version_id).toBe(t.current_version_id);

    const sent1 = await p.resend.emails.send({ to: 'ann@dest.test', template: { id: a } });
    expect(sent1.error).toBeNull();
    expect((await p.api('GET', `/emails/${sent1.data!.id}`)).body.html).toBe('<p>version 1</p>');

    await p.resend.templates.publish(id);
    expect((await p.resend.templates.get(id)).data!.has_unpublished_versions).toBe(false);
    const sent2 = await p.resend.emails.send({ to: 'ann@dest.test', template: { id } });
    expect((await p.api('GET', `/emails/${sent2.data!.id}`)).body.html).toBe('<p>version 2</p>');
  });

  test('duplicate: a new draft with the latest content, no alias; duplicate().publish() publishes the copy', async () => {
    const src = await published();
    const dup = await p.resend.templates.duplicate(src.alias!);
    expect(dup.error).toBeNull();
    expect(dup.data).toEqual({ id: expect.any(String), object: 'template' } as never);
    expect(dup.data!.id).not.toBe(src.id);
    const copy = (await p.resend.templates.get(dup.data!.id)).data!;
    expect(copy).toMatchObject({ name: 'Order confirmation (copy)', alias: null, status: 'draft', html: src.current.html, subject: src.current.subject });
    expect(copy.variables!.map((v) => [v.key, v.type, v.fallback_value])).toEqual([
      ['NAME', 'string', null],
      ['ORDER', 'number', null],
      ['PRODUCT', 'string', 'item'],
      ['PRICE', 'number', 25],
    ]);
    // Plain HTTP: an action POST answers 200.
    expect((await p.api('POST', `/templates/${src.id}/duplicate`)).status).toBe(200);
    const chained = await p.resend.templates.duplicate(src.id).publish();
    expect(chained.error).toBeNull();
    expect((await p.resend.templates.get(chained.data!.id)).data!.status).toBe('published');
  });
});

describe('sending with `template`', () => {
  test('variables: HTML-escaped in html, as given in subject and text; fallbacks; from and subject from the template; delivered', async () => {
    const t = await published();
    const { data, error } = await p.resend.emails.send({
      to: 'ann@dest.test',
      template: { id: t.id, variables: { NAME: 'Ann <script>alert(1)</script> & Co', ORDER: 42 } },
    });
    expect(error).toBeNull();
    const got = (await p.api('GET', `/emails/${data!.id}`)).body;
    expect(got).toMatchObject({
      from: 'Acme Store <store@example.test>',
      subject: 'Order 42 for Ann <script>alert(1)</script> & Co',
      html: '<p>Hi Ann &lt;script&gt;alert(1)&lt;/script&gt; &amp; Co, your item costs 25.</p>',
      text: 'Hi Ann <script>alert(1)</script> & Co, your item costs 25.',
    });
    const email = await waitForEmail(p.svc, { team_id: team(), id: data!.id }, (e) => e.last_event === 'delivered');
    expect(email.template_id).toBe(t.id);
    const msg = sink.messages.find((m) => m.raw.toString().includes(`<${data!.id}@example.test>`))!;
    const parsed = await simpleParser(msg.raw);
    expect(parsed.subject).toBe('Order 42 for Ann <script>alert(1)</script> & Co');
    expect(parsed.html).toContain('Hi Ann &lt;script&gt;');
    expect(parsed.html).not.toContain('<script>');
    // The webhook payload names the template (docs/api.md §14.3).
    const sent = (await eventsOf(p.svc, email)).find((e) => e.type === 'email.sent')!;
    expect(sent.data.template_id).toBe(t.id);
  });

  test('the request wins for from, subject and reply_to; given values beat fallbacks; the alias works', async () => {
    const t = await published({ replyTo: ['desk@example.test'] });
    const { data, error } = await p.resend.emails.send({
      from: 'Other <other@example.test>',
      to: 'ann@dest.test',
      subject: 'My own subject',
      replyTo: 'me@example.test',
      template: { id: t.alias!, variables: { NAME: 'Bo', ORDER: 1, PRODUCT: 'lamp', PRICE: 49.99 } },
    });
    expect(error).toBeNull();
    expect((await p.api('GET', `/emails/${data!.id}`)).body).toMatchObject({
      from: 'Other <other@example.test>',
      subject: 'My own subject',
      reply_to: ['me@example.test'],
      html: '<p>Hi Bo, your lamp costs 49.99.</p>',
    });
    const own = await p.resend.emails.send({ to: 'ann@dest.test', template: { id: t.id, variables: { NAME: 'Cy', ORDER: 2 } } });
    expect((await p.api('GET', `/emails/${own.data!.id}`)).body.reply_to).toEqual(['desk@example.test']);
  });

  test('the documented 422s: nothing sent', async () => {
    const t = await published();
    const noFrom = await published({ from: undefined, subject: undefined });
    const ok = { NAME: 'Ann', ORDER: 7 };
    const cases: [string, Record<string, unknown>, string, string][] = [
      [
        'html with a template',
        { to: 'a@dest.test', html: '<p>x</p>', template: { id: t.id, variables: ok } },
        'validation_error',
        'The `html` field cannot be used together with `template`',
      ],
      [
        'text with a template',
        { to: 'a@dest.test', text: 'x', template: { id: t.id, variables: ok } },
        'validation_error',
        'The `text` field cannot be used together with `template`',
      ],
      [
        'a variable without a fallback missing',
        { to: 'a@dest.test', template: { id: t.id, variables: { NAME: 'Ann' } } },
        'validation_error',
        'Missing `template.variables.ORDER` field',
      ],
      ['no variables at all', { to: 'a@dest.test', template: { id: t.id } }, 'validation_error', 'Missing `template.variables.'],
      [
        'a string for a number variable',
        { to: 'a@dest.test', template: { id: t.id, variables: { ...ok, ORDER: 'seven' } } },
        'validation_error',
        'Invalid `template.variables.ORDER` field',
      ],
      [
        'a value of 2,001 characters',
        { to: 'a@dest.test', template: { id: t.id, variables: { ...ok, NAME: 'x'.repeat(2001) } } },
        'validation_error',
        'at most 2000',
      ],
      ['a number beyond 2^53 − 1', { to: 'a@dest.test', template: { id: t.id, variables: { ...ok, ORDER: 2 ** 53 } } }, 'validation_error', '2^53'],
      ['a reserved variable name', { to: 'a@dest.test', template: { id: t.id, variables: { ...ok, EMAIL: 'x' } } }, 'validation_error', 'reserved'],
      [
        'a key with a dash',
        { to: 'a@dest.test', template: { id: t.id, variables: { ...ok, 'A-B': 'x' } } },
        'validation_error',
        'Invalid `template.variables.A-B` field',
      ],
      [
        'an object as a value',
        { to: 'a@dest.test', template: { id: t.id, variables: { ...ok, NAME: { a: 1 } } } },
        'validation_error',
        'Invalid `template.variables.NAME` field',
      ],
      ['an unknown template', { from: 'a@example.test', to: 'a@dest.test', template: { id: UNKNOWN } }, 'validation_error', 'Invalid `template.id` field'],
      ['an unknown alias', { from: 'a@example.test', to: 'a@dest.test', template: { id: 'nope' } }, 'validation_error', 'Invalid `template.id` field'],
      ['no template id', { from: 'a@example.test', to: 'a@dest.test', template: { variables: {} } }, 'missing_required_field', 'Missing `template.id` field.'],
      ['template not an object', { from: 'a@example.test', to: 'a@dest.test', template: 'welcome' }, 'validation_error', 'Invalid `template` field'],
      [
        'neither request nor template gives from',
        { to: 'a@dest.test', subject: 's', template: { id: noFrom.id, variables: ok } },
        'missing_required_field',
        'Missing `from` field.',
      ],
      [
        'neither request nor template gives subject',
        { from: 'a@example.test', to: 'a@dest.test', template: { id: noFrom.id, variables: ok } },
        'missing_required_field',
        'Missing `subject` field.',
      ],
    ];
    const before = await emailCount();
    for (const [what, body, name, message] of cases) {
      const r = await p.api('POST', '/emails', { body });
      expect([what, r.status]).toEqual([what, 422]);
      expect([what, r.body.name]).toEqual([what, name]);
      expect([what, String(r.body.message).includes(message)]).toEqual([what, true]);
    }
    // The SDK gets the same error.
    const sdk = await p.resend.emails.send({ to: 'a@dest.test', template: { id: t.id, variables: { NAME: 'x' } } });
    expect(sdk.error).toMatchObject({ statusCode: 422, name: 'validation_error' });
    expect(await emailCount()).toBe(before);
  });

  test('in a batch: each item through the same core; strict refuses the whole batch, permissive reports the item', async () => {
    const t = await published();
    const good = { to: 'ann@dest.test', template: { id: t.id, variables: { NAME: 'Ann', ORDER: 1 } } };
    const bad = { to: 'bob@dest.test', template: { id: t.id, variables: { NAME: 'Bob' } } };
    const before = await emailCount();
    const strict = await p.resend.batch.send([good, bad] as never);
    expect(strict.error).toMatchObject({
      statusCode: 422,
      name: 'validation_error',
      message: expect.stringMatching(/^\[1\] Missing `template\.variables\.ORDER` field/),
    });
    expect(await emailCount()).toBe(before);

    const ok = await p.resend.batch.send([good, { ...good, to: 'cy@dest.test', template: { id: t.alias!, variables: { NAME: 'Cy', ORDER: 2 } } }] as never);
    expect(ok.error).toBeNull();
    const [a, b] = ok.data!.data.map((d) => d.id);
    expect((await p.api('GET', `/emails/${a}`)).body.subject).toBe('Order 1 for Ann');
    expect((await p.api('GET', `/emails/${b}`)).body.subject).toBe('Order 2 for Cy');

    const permissive = await p.resend.batch.send([bad, good] as never, { batchValidation: 'permissive' });
    expect(permissive.error).toBeNull();
    expect(permissive.data!.data).toHaveLength(1);
    expect((permissive.data as unknown as { errors: { index: number; message: string }[] }).errors).toEqual([
      { index: 0, message: expect.stringContaining('Missing `template.variables.ORDER` field') },
    ]);
  });

  test('a template deleted after publishing can no longer be sent', async () => {
    const t = await published();
    await p.resend.templates.remove(t.id);
    const r = await p.resend.emails.send({ to: 'ann@dest.test', template: { id: t.id, variables: { NAME: 'x', ORDER: 1 } } });
    expect(r.error).toMatchObject({ statusCode: 422, name: 'validation_error', message: expect.stringContaining('Invalid `template.id` field') });
  });
});

describe('version history (Posthorn, docs/api.md §20.5; plain HTTP)', () => {
  const versionsOf = async (id: string) => (await p.svc.store.templateVersions.findAll('template', id, team())).map((v) => v.number);
  /** Everything a history request could change: the templates and every version. */
  const snapshot = async () => JSON.stringify({ t: await stored(), v: await p.svc.store.templateVersions.all(team()) });
  const ISO = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

  test('every publish keeps a version; list (latest first, paginated) and get by number or id show what was published', async () => {
    const a = alias('hist');
    const id = (await p.resend.templates.create({ name: 'History', alias: a, from: 'hello@example.test', subject: 'One {{{N}}}', html: '<p>one</p>' })).data!
      .id;
    // A draft has no history.
    expect((await p.api('GET', `/templates/${id}/versions`)).body).toEqual({ object: 'list', has_more: false, data: [] });
    await p.resend.templates.publish(id);
    const v1 = (await p.resend.templates.get(id)).data!.current_version_id;
    // Edits are not versions of the history until they are published; a rename is no new content.
    await p.resend.templates.update(id, { html: '<p>two</p>', subject: 'Two', variables: [{ key: 'N', type: 'number', fallbackValue: 2 }] } as never);
    expect(await versionsOf(id)).toEqual([1]);
    await p.resend.templates.publish(a);
    const v2 = (await p.resend.templates.get(id)).data!.current_version_id;
    await p.resend.templates.update(id, { name: 'History renamed' });
    await p.resend.templates.publish(id);
    // Published again unchanged: kept once.
    expect(await versionsOf(id)).toEqual([1, 2]);

    const list = await p.api('GET', `/templates/${a}/versions`);
    expect(list.status).toBe(200);
    expect(list.body).toEqual({
      object: 'list',
      has_more: false,
      data: [
        { object: 'template_version', id: v2, template_id: id, version: 2, published_at: ISO, reverted_from: null, current: true, subject: 'Two' },
        { object: 'template_version', id: v1, template_id: id, version: 1, published_at: ISO, reverted_from: null, current: false, subject: 'One {{{N}}}' },
      ],
    });
    const page = await p.api('GET', `/templates/${id}/versions?limit=1`);
    expect(page.body).toMatchObject({ has_more: true, data: [{ version: 2 }] });
    expect((await p.api('GET', `/templates/${id}/versions?limit=1&after=${v2}`)).body).toMatchObject({ has_more: false, data: [{ version: 1 }] });
    expect((await p.api('GET', `/templates/${id}/versions?before=${v1}`)).body).toMatchObject({ data: [{ version: 2 }] });

    const one = await p.api('GET', `/templates/${id}/versions/1`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual({
      object: 'template_version',
      id: v1,
      template_id: id,
      version: 1,
      published_at: ISO,
      reverted_from: null,
      current: false,
      subject: 'One {{{N}}}',
      created_at: ISO,
      from: 'hello@example.test',
      reply_to: null,
      html: '<p>one</p>',
      text: null,
      variables: [],
    });
    expect((await p.api('GET', `/templates/${a}/versions/${v1.toUpperCase()}`)).body).toEqual(one.body);
    const two = (await p.api('GET', `/templates/${id}/versions/2`)).body;
    expect(two).toMatchObject({ version: 2, current: true, html: '<p>two</p>', variables: [{ key: 'N', type: 'number', fallback_value: 2 }] });
  });

  test('revert: the old content becomes the latest version, published at once (sends use it); reverting to the published one drops the draft', async () => {
    const id = (await p.resend.templates.create({ name: 'Revert', from: 'hello@example.test', subject: 'S', html: '<p>good</p>' })).data!.id;
    await p.resend.templates.publish(id);
    await p.resend.templates.update(id, { html: '<p>broken</p>' });
    await p.resend.templates.publish(id);
    const broken = await p.resend.emails.send({ to: 'ann@dest.test', template: { id } });
    expect((await p.api('GET', `/emails/${broken.data!.id}`)).body.html).toBe('<p>broken</p>');

    const r = await p.api('POST', `/templates/${id}/versions/1/revert`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ object: 'template_version', template_id: id, version: 3, reverted_from: 1, current: true, html: '<p>good</p>' });
    const t = (await p.resend.templates.get(id)).data!;
    expect(t).toMatchObject({ html: '<p>good</p>', status: 'published', has_unpublished_versions: false, current_version_id: r.body.id });
    expect(r.body.id).not.toBe((await p.api('GET', `/templates/${id}/versions/1`)).body.id);
    expect((await p.api('GET', `/templates/${id}/versions`)).body.data.map((v: { version: number; current: boolean }) => [v.version, v.current])).toEqual([
      [3, true],
      [2, false],
      [1, false],
    ]);
    const good = await p.resend.emails.send({ to: 'ann@dest.test', template: { id } });
    expect((await p.api('GET', `/emails/${good.data!.id}`)).body.html).toBe('<p>good</p>');

    // A draft pending, revert to the version sends use: the draft goes, no new version.
    await p.resend.templates.update(id, { html: '<p>draft</p>' });
    expect((await p.resend.templates.get(id)).data!.has_unpublished_versions).toBe(true);
    const again = await p.api('POST', `/templates/${id}/versions/3/revert`);
    expect(again.body).toMatchObject({ version: 3, current: true, reverted_from: 1 });
    expect((await p.resend.templates.get(id)).data).toMatchObject({ html: '<p>good</p>', has_unpublished_versions: false, current_version_id: r.body.id });
    expect(await versionsOf(id)).toEqual([1, 2, 3]);
  });

  test('a template published before the history existed shows its published version as version 1; the next publish keeps it', async () => {
    const id = (await p.resend.templates.create({ name: 'Old', from: 'hello@example.test', subject: 'S', html: '<p>old</p>' })).data!.id;
    await p.resend.templates.publish(id);
    // As a store from before the history holds it: no versions counted, none kept.
    await p.svc.store.write(async (tx) => {
      const t = (await tx.templates.get(team(), id))!;
      const { versions: _, ...old } = t;
      tx.templates.put(old);
      for (const v of await tx.templateVersions.findAll('template', id, team())) tx.templateVersions.remove(team(), v.id);
    });
    const published = (await p.resend.templates.get(id)).data!.current_version_id;
    expect((await p.api('GET', `/templates/${id}/versions`)).body.data).toEqual([expect.objectContaining({ id: published, version: 1, current: true })]);
    expect((await p.api('GET', `/templates/${id}/versions/1`)).body).toMatchObject({ id: published, html: '<p>old</p>' });
    expect((await p.api('GET', `/templates/${id}/versions/2`)).status).toBe(404);
    await p.resend.templates.update(id, { html: '<p>new</p>' });
    await p.resend.templates.publish(id);
    expect(await versionsOf(id)).toEqual([1, 2]);
    expect((await p.api('GET', `/templates/${id}/versions/1`)).body).toMatchObject({ id: published, html: '<p>old</p>', current: false });
  });

  test('duplicate starts without history; delete takes the history with it', async () => {
    const t = await published();
    const copy = (await p.resend.templates.duplicate(t.id)).data!.id;
    expect((await p.api('GET', `/templates/${copy}/versions`)).body.data).toEqual([]);
    await p.resend.templates.update(t.id, { html: '<p>x {{{NAME}}} {{{ORDER}}}</p>' });
    await p.resend.templates.publish(t.id);
    expect(await versionsOf(t.id)).toEqual([1, 2]);
    await p.resend.templates.remove(t.id);
    expect(await versionsOf(t.id)).toEqual([]);
  });

  test('bad input: 422 for a malformed version, 404 for an unknown template or version; nothing changes', async () => {
    const t = await published();
    const other = await published();
    const before = await snapshot();
    for (const v of ['0', '-1', 'abc', '1.5', '01', '9999999999', 'not-a-uuid-0195608a'])
      for (const [method, path] of [
        ['GET', `/templates/${t.id}/versions/${v}`],
        ['POST', `/templates/${t.id}/versions/${v}/revert`],
      ] as const) {
        const r = await p.api(method, path);
        expect(r.body).toEqual({ statusCode: 422, name: 'invalid_parameter', message: 'The `version` must be a version number (1, 2, …) or a version id.' });
      }
    const missing = [
      [`/templates/${t.id}/versions/2`, 'Template version not found'],
      [`/templates/${t.id}/versions/${UNKNOWN}`, 'Template version not found'],
      // A version of another template, by its id.
      [`/templates/${t.id}/versions/${other.current.id}`, 'Template version not found'],
      [`/templates/${UNKNOWN}/versions/1`, 'Template not found'],
      ['/templates/no-such-alias/versions/1', 'Template not found'],
    ] as const;
    for (const [path, message] of missing) {
      expect((await p.api('GET', path)).body).toEqual({ statusCode: 404, name: 'not_found', message });
      expect((await p.api('POST', `${path}/revert`)).body).toEqual({ statusCode: 404, name: 'not_found', message });
    }
    expect((await p.api('GET', `/templates/${UNKNOWN}/versions`)).body).toEqual({ statusCode: 404, name: 'not_found', message: 'Template not found' });
    expect((await p.api('GET', `/templates/${t.id}/versions?limit=0`)).body).toMatchObject({ statusCode: 422, name: 'validation_error' });
    expect((await p.api('GET', `/templates/${t.id}/versions?after=nope`)).body).toMatchObject({ statusCode: 422, name: 'validation_error' });
    // Another team sees none of it.
    const stranger = await p.newTeam();
    for (const [method, path] of [
      ['GET', `/templates/${t.id}/versions`],
      ['GET', `/templates/${t.id}/versions/1`],
      ['POST', `/templates/${t.id}/versions/1/revert`],
    ] as const)
      expect((await p.api(method, path, { key: stranger.api_key })).body).toEqual({ statusCode: 404, name: 'not_found', message: 'Template not found' });
    expect(await snapshot()).toBe(before);
  });
});
