// Exports (docs/api.md §4.1) and the `tag` filter of GET /emails (§7.4): each export holds what
// its list shows with the same filters, read back with csv-parse (CSV, RFC 4180) or line by line
// (NDJSON); cells a spreadsheet would run are neutralised; bad filters get the list's errors.
// The size and memory of an export: exports-scale.test.ts.
import { beforeAll, afterAll, describe, expect, test } from 'bun:test';
import { parse } from 'csv-parse/sync';
import { startPosthorn, type ApiBody, type Running } from '../helpers/posthorn';
import { verifiedDomain } from '../helpers/emails';
import { csvRecord } from '../../src/api/platform/csv';

let p: Running;
const sent: Record<string, string> = {};

/** Every item of a list with these filters, paged through 2 at a time. */
async function listAll(path: string, filters: Record<string, string>): Promise<ApiBody[]> {
  const items: ApiBody[] = [];
  for (let after: string | undefined; ; ) {
    const r = await p.api('GET', `${path}?${new URLSearchParams({ ...filters, limit: '2', ...(after ? { after } : {}) })}`);
    expect(r.status).toBe(200);
    items.push(...r.body.data);
    if (!r.body.has_more) return items;
    after = r.body.data.at(-1).id;
  }
}

/** An export's answer: status, headers, text. */
async function exported(path: string, filters: Record<string, string> = {}) {
  const res = await fetch(`${p.url}${path}?${new URLSearchParams(filters)}`, { headers: { authorization: `Bearer ${p.apiKey}` } });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const csvRows = (text: string): Record<string, string>[] => parse(text, { columns: true });
const ndjsonRows = (text: string): ApiBody[] =>
  text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

beforeAll(async () => {
  p = await startPosthorn();
  await verifiedDomain(p, 'example.test');
  // Held: the emails stay `queued` while the test compares lists and exports read at different times.
  expect((await p.api('POST', '/queue/dest.test/hold')).status).toBe(200);
  const send = async (name: string, fields: Record<string, unknown>) => {
    const { data, error } = await p.resend.emails.send({
      from: 'Acme <hello@example.test>',
      to: 'ann@dest.test',
      text: 'hi',
      subject: name,
      ...fields,
    } as never);
    expect(error).toBeNull();
    sent[name] = data!.id;
  };
  await send('welcome', { tags: [{ name: 'category', value: 'welcome' }] });
  await send('invoice 1, "March"', { tags: [{ name: 'category', value: 'invoice' }], cc: ['"Doe, Jo" <jo@dest.test>', 'kim@dest.test'] });
  await send('invoice 2', {
    tags: [
      { name: 'category', value: 'invoice' },
      { name: 'plan', value: 'pro' },
    ],
  });
  await send('=HYPERLINK("http://evil.test")', {});
  await send('line one\nline two', { tags: [{ name: 'plan', value: '' }] });
  await send('+1 -1 @here', { scheduledAt: new Date(Date.now() + 3_600_000).toISOString() });
});
afterAll(() => p.stop());

describe('CSV records', () => {
  test('every field quoted, quotes doubled, CRLF after each record; csv-parse reads back the values', () => {
    const values = ['plain', 'a, b', 'say "hi"', 'two\nlines', 'semi;colon', '', 'über ✉', 42, true];
    const line = csvRecord([...values, null]);
    expect(line).toBe('"plain","a, b","say ""hi""","two\nlines","semi;colon","","über ✉","42","true",\r\n');
    expect(parse(line)).toEqual([[...values.map(String), '']]);
  });

  test('a field a spreadsheet would read as a formula gets a leading quote; the rest of it is kept', () => {
    const risky = ['=1+1', '+1', '-1', '@SUM(A1)', '\t=1', '\r=1'];
    expect(parse(csvRecord(risky))).toEqual([risky.map((v) => `'${v}`)]);
    // Only the first character counts.
    expect(parse(csvRecord(['a=1', ' =1', "'=1"]))).toEqual([['a=1', ' =1', "'=1"]]);
  });
});

describe('GET /emails?tag=', () => {
  test('name:value keeps the emails with that tag, name alone those with a tag of that name; pages as usual', async () => {
    const ids = async (tag: string) => (await listAll('/emails', { tag })).map((e) => e.id);
    expect(await ids('category:invoice')).toEqual([sent['invoice 2'], sent['invoice 1, "March"']]);
    expect(await ids('category:welcome')).toEqual([sent.welcome]);
    expect(await ids('plan')).toEqual([sent['line one\nline two'], sent['invoice 2']]);
    expect(await ids('plan:')).toEqual([sent['line one\nline two']]);
    expect(await ids('category:nothing')).toEqual([]);
    // With the other filters, and through the SDK's own list (a page of 1, then the next).
    expect((await listAll('/emails', { tag: 'category:invoice', q: 'march' })).map((e) => e.id)).toEqual([sent['invoice 1, "March"']]);
    const first = await p.api('GET', '/emails?tag=category:invoice&limit=1');
    expect([first.body.has_more, first.body.data.map((e: ApiBody) => e.id)]).toEqual([true, [sent['invoice 2']]]);
  });

  test('a tag that no send could have → 422 validation_error, on the list and its export alike', async () => {
    for (const tag of ['a b', ':invoice', 'category:in voice', 'category:a:b', `${'x'.repeat(257)}`]) {
      const message = '`tag` must be `name:value` or `name`, in ASCII letters, numbers, underscores or dashes.';
      const list = await p.api('GET', `/emails?tag=${encodeURIComponent(tag)}`);
      expect([tag, list.status, list.body]).toEqual([tag, 422, { statusCode: 422, name: 'validation_error', message }]);
      const exp = await p.api('GET', `/emails/export?tag=${encodeURIComponent(tag)}`);
      expect([tag, exp.status, exp.body]).toEqual([tag, 422, { statusCode: 422, name: 'validation_error', message }]);
    }
  });
});

describe('GET /emails/export', () => {
  test('CSV: a download holding what the list holds, newest first, one record per email (RFC 4180)', async () => {
    const r = await exported('/emails/export');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/csv; charset=utf-8; header=present');
    expect(r.headers.get('content-disposition')).toMatch(/^attachment; filename="emails-\d{4}-\d\d-\d\d\.csv"$/);
    expect(r.headers.get('cache-control')).toBe('no-store');
    // Every line ends in CRLF, the header names the columns, every value is quoted.
    expect(r.text.split('\r\n')[0]).toBe('"id","created_at","from","to","cc","bcc","reply_to","subject","last_event","scheduled_at","message_id","tags"');
    expect(r.text.endsWith('\r\n')).toBe(true);
    const rows = csvRows(r.text);
    const list = await listAll('/emails', {});
    expect(rows.map((row) => row.id)).toEqual(list.map((e) => e.id));
    const full = (await p.api('GET', `/emails/${sent['invoice 1, "March"']}`)).body;
    expect(rows.find((row) => row.id === full.id)).toEqual({
      id: full.id,
      created_at: full.created_at,
      from: 'Acme <hello@example.test>',
      to: 'ann@dest.test',
      cc: '"Doe, Jo" <jo@dest.test>, kim@dest.test',
      bcc: '',
      reply_to: '',
      subject: 'invoice 1, "March"',
      last_event: full.last_event,
      scheduled_at: '',
      message_id: full.message_id,
      tags: 'category:invoice',
    });
    expect(rows.find((row) => row.id === sent['invoice 2'])!.tags).toBe('category:invoice, plan:pro');
    expect(rows.find((row) => row.id === sent['line one\nline two'])!.subject).toBe('line one\nline two');
    // A null (never scheduled) is an empty field; an empty string is a quoted one.
    expect(r.text).toContain(`"${full.last_event}",,"${full.message_id}"`);
  });

  test('cells a spreadsheet would read as a formula start with a quote (= + - @, tab, CR); NDJSON keeps them as they are', async () => {
    const rows = csvRows((await exported('/emails/export')).text);
    expect(rows.find((row) => row.id === sent['=HYPERLINK("http://evil.test")'])!.subject).toBe(`'=HYPERLINK("http://evil.test")`);
    expect(rows.find((row) => row.id === sent['+1 -1 @here'])!.subject).toBe(`'+1 -1 @here`);
    const lines = ndjsonRows((await exported('/emails/export', { format: 'ndjson' })).text);
    expect(lines.find((e) => e.id === sent['=HYPERLINK("http://evil.test")']).subject).toBe('=HYPERLINK("http://evil.test")');
  });

  test("NDJSON: one JSON object a line, the list's item and its tags", async () => {
    const r = await exported('/emails/export', { format: 'ndjson' });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/x-ndjson');
    expect(r.headers.get('content-disposition')).toMatch(/^attachment; filename="emails-\d{4}-\d\d-\d\d\.ndjson"$/);
    expect(r.text.endsWith('\n')).toBe(true);
    const lines = ndjsonRows(r.text);
    const list = await listAll('/emails', {});
    const tags = await Promise.all(list.map(async (e) => (await p.api('GET', `/emails/${e.id}`)).body.tags));
    expect(lines).toEqual(list.map((e, i) => ({ ...e, tags: tags[i] })));
  });

  test("the list's filters, each and together, select the same emails", async () => {
    const created = (await p.api('GET', `/emails/${sent['invoice 2']}`)).body.created_at;
    const cases: Record<string, string>[] = [
      { status: 'scheduled' },
      { q: 'invoice' },
      { tag: 'category:invoice' },
      { tag: 'plan' },
      { since: created },
      { until: created },
      { q: 'line', tag: 'plan:' },
      { status: 'scheduled,queued', since: created },
    ];
    for (const filters of cases) {
      const want = (await listAll('/emails', filters)).map((e) => e.id);
      const csv = csvRows((await exported('/emails/export', filters)).text).map((row) => row.id);
      const ndjson = ndjsonRows((await exported('/emails/export', { ...filters, format: 'ndjson' })).text).map((e) => e.id);
      expect({ filters, csv, ndjson }).toEqual({ filters, csv: want, ndjson: want });
      expect({ filters, n: want.length }).not.toEqual({ filters, n: 0 });
    }
    // Nothing kept: the header alone (CSV), an empty file (NDJSON).
    expect((await exported('/emails/export', { q: 'no such text' })).text.split('\r\n')).toEqual([expect.stringContaining('"id"'), '']);
    expect((await exported('/emails/export', { q: 'no such text', format: 'ndjson' })).text).toBe('');
  });

  test("bad values get the list's errors; a bad format → 422; a sending key may not export", async () => {
    const err = async (query: string) => (await p.api('GET', `/emails/export?${query}`)).body;
    expect(await err('format=xml')).toEqual({ statusCode: 422, name: 'validation_error', message: 'The `format` parameter must be `csv` or `ndjson`.' });
    for (const query of ['status=nope', 'since=yesterday', `q=${'x'.repeat(201)}`])
      expect(await err(query)).toEqual((await p.api('GET', `/emails?${query}`)).body);
    const { data } = await p.resend.apiKeys.create({ name: 'sender', permission: 'sending_access' });
    const r = await p.api('GET', '/emails/export', { key: data!.token });
    expect([r.status, r.body.name]).toEqual([401, 'restricted_api_key']);
  });
});

describe('GET /contacts/export', () => {
  test("the team's contacts with a column per property; `segment_id` and `q` select as the list does", async () => {
    expect((await p.api('POST', '/contact-properties', { body: { key: 'plan', type: 'string' } })).status).toBe(201);
    expect((await p.api('POST', '/contact-properties', { body: { key: 'seats', type: 'number' } })).status).toBe(201);
    const segment = (await p.api('POST', '/segments', { body: { name: 'Customers' } })).body.id;
    const add = async (email: string, fields: Record<string, unknown>) => {
      const r = await p.api('POST', '/contacts', { body: { email, ...fields } });
      expect(r.status).toBe(201);
      return r.body.id as string;
    };
    const ann = await add('ann@dest.test', { first_name: 'Ann', last_name: 'Lee, Jr.', properties: { plan: 'pro', seats: 5 }, segments: [{ id: segment }] });
    const bob = await add('bob@dest.test', { first_name: '@bob', unsubscribed: true });
    const cy = await add('cy@dest.test', { segments: [{ id: segment }], properties: { plan: 'free' } });

    const r = await exported('/contacts/export');
    expect(r.headers.get('content-disposition')).toMatch(/filename="contacts-\d{4}-\d\d-\d\d\.csv"/);
    expect(r.text.split('\r\n')[0]).toBe('"id","email","first_name","last_name","unsubscribed","created_at","properties.plan","properties.seats"');
    const rows = csvRows(r.text);
    expect(rows.map((c) => c.id)).toEqual([cy, bob, ann]);
    expect(rows[2]).toEqual({
      id: ann,
      email: 'ann@dest.test',
      first_name: 'Ann',
      last_name: 'Lee, Jr.',
      unsubscribed: 'false',
      created_at: expect.any(String),
      'properties.plan': 'pro',
      'properties.seats': '5',
    });
    expect([rows[1]!.first_name, rows[1]!.unsubscribed, rows[1]!['properties.plan']]).toEqual(["'@bob", 'true', '']);

    const ndjson = ndjsonRows((await exported('/contacts/export', { format: 'ndjson' })).text);
    const one = (await p.api('GET', `/contacts/${ann}`)).body;
    const { object: _, ...item } = one;
    expect(ndjson.find((c) => c.id === ann)).toEqual(item);

    const ids = async (filters: Record<string, string>) => csvRows((await exported('/contacts/export', filters)).text).map((c) => c.id);
    expect(await ids({ segment_id: segment })).toEqual((await listAll('/contacts', { segment_id: segment })).map((c) => c.id));
    expect(await ids({ segment_id: segment })).toEqual([cy, ann]);
    expect(await ids({ q: 'BOB' })).toEqual([bob]);
    expect(await ids({ q: 'dest.test', segment_id: segment })).toEqual([cy, ann]);

    expect((await p.api('GET', '/contacts/export?segment_id=nope')).body).toEqual({
      statusCode: 422,
      name: 'invalid_parameter',
      message: 'The `segment_id` must be a valid UUID.',
    });
    expect((await p.api('GET', `/contacts/export?segment_id=${ann}`)).body).toEqual({ statusCode: 404, name: 'not_found', message: 'Segment not found' });
  });
});

describe('GET /suppressions/export', () => {
  test('every entry, or those of one origin', async () => {
    await p.resend.suppressions.add({ email: '-gone@dest.test' });
    await p.resend.suppressions.add({ email: 'left@dest.test' });
    const rows = csvRows((await exported('/suppressions/export')).text);
    expect(rows.map((s) => s.email)).toEqual(['left@dest.test', "'-gone@dest.test"]);
    expect(Object.keys(rows[0]!)).toEqual(['id', 'email', 'origin', 'source_id', 'created_at']);
    const list = await listAll('/suppressions', {});
    expect(ndjsonRows((await exported('/suppressions/export', { format: 'ndjson' })).text)).toEqual(list);
    expect(csvRows((await exported('/suppressions/export', { origin: 'bounce' })).text)).toEqual([]);
    expect((await p.api('GET', '/suppressions/export?origin=spam')).status).toBe(422);
  });
});

describe('GET /logs/export', () => {
  test("the request log with the list's filters, this team's only", async () => {
    await p.api('GET', '/domains');
    const lines = ndjsonRows((await exported('/logs/export', { format: 'ndjson' })).text);
    // The export's own request is logged once it is answered: the list, read after, holds it too.
    const list = await listAll('/logs', {});
    expect(lines).toEqual(list.slice(list.length - lines.length));
    const posts = csvRows((await exported('/logs/export', { method: 'post' })).text);
    expect(posts.length).toBeGreaterThan(0);
    expect(posts.every((l) => l.method === 'POST')).toBe(true);
    expect(Object.keys(posts[0]!)).toEqual(['id', 'created_at', 'method', 'endpoint', 'response_status', 'api_key_id', 'user_agent']);
    const errorsOnly = csvRows((await exported('/logs/export', { status: '4xx' })).text);
    expect(errorsOnly.every((l) => l.response_status.startsWith('4'))).toBe(true);
    expect((await p.api('GET', '/logs/export?status=teapot')).status).toBe(422);
    const other = await p.newTeam();
    const theirs = await fetch(`${p.url}/logs/export?format=ndjson`, { headers: { authorization: `Bearer ${other.api_key}` } });
    expect(await theirs.text()).toBe('');
  });
});
