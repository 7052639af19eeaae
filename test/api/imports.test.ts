// Contact imports (docs/api.md §12.9): the official SDK's `contacts.imports.*` against a running
// server — the multipart upload with its column map, segments, topics and conflict rule, the
// background processing with its counts, bad rows counted as failed with their reason, bad
// requests refused with nothing stored; 100,000 rows with bad ones mixed in; and an import
// interrupted by kill -9 of a `serve` child, resumed after the restart with the right counts and
// no duplicate contact.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { mkdtempSync, readdirSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Resend, type ContactImport } from 'resend';
import { startPosthorn, type Running } from '../helpers/posthorn';
import { serveChild } from '../helpers/child';
import { until } from '../helpers/wait';
import { openStore, type ContactImportRec } from '../../src/store';

let p: Running;
const team = () => p.creds.team_id;
const UNKNOWN = '0195608a-51e4-70ed-a079-d3bde8e25d94';

beforeAll(async () => {
  p = await startPosthorn();
});
afterAll(() => p.stop());

const csv = (text: string) => new Blob([text], { type: 'text/csv' });

/** The SDK's import with the fields Posthorn adds (docs/api.md §12.9). */
type PosthornImport = ContactImport & {
  progress: { processed_bytes: number; file_bytes: number };
  failures: { row: number; reason: string }[];
  failure_reason: string | null;
};

/** Wait until an import is over; its record. */
async function finished(id: string, client: Resend = p.resend, timeoutMs = 15_000): Promise<PosthornImport> {
  return until(
    async () => {
      const g = await client.contacts.imports.get(id);
      return (g.data?.status === 'completed' || g.data?.status === 'failed') && (g.data as PosthornImport);
    },
    `import ${id} to finish`,
    timeoutMs,
  );
}

/** The import files left in the data dir (uploads refused or over are removed). */
function importFiles(dataDir: string): string[] {
  const dir = join(dataDir, 'content', 'contact_imports');
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((shard) => readdirSync(join(dir, shard)));
}

describe('imports (SDK)', () => {
  test('column map, segments, topics and properties; counts, contacts and the exact shapes', async () => {
    const seg = (await p.resend.segments.create({ name: 'Imported' })).data!.id;
    const topic = (await p.resend.topics.create({ name: 'Imports', defaultSubscription: 'opt_out' })).data!.id;
    await p.resend.contactProperties.create({ key: 'plan', type: 'string' });
    await p.resend.contactProperties.create({ key: 'seats', type: 'number', fallbackValue: 1 });
    const file = csv(
      '\ufeffE-mail,Given,Family,Opted out,Plan,Seats\r\n' +
        'ann@imp.test,Ann,Lee,no,pro,3\r\n' +
        '"bob@imp.test","Bob ""B""",,yes,,\r\n' +
        'zoe@imp.test,Zoë,Ünal,,free,12\r\n' +
        '\r\n' +
        'carl@imp.test,"Multi\nline",,false,team,"4"\r\n',
    );
    const created = await p.resend.contacts.imports.create({
      file,
      columnMap: {
        email: 'E-mail',
        firstName: 'Given',
        lastName: 'Family',
        unsubscribed: 'Opted out',
        properties: { plan: { column: 'Plan' }, seats: { column: 'Seats', type: 'number' } },
      },
      onConflict: 'upsert',
      segments: [{ id: seg }],
      topics: [{ id: topic, subscription: 'opt_in' }],
    });
    expect(created.error).toBeNull();
    expect(created.data).toEqual({ object: 'contact_import', id: expect.any(String) });
    const done = await finished(created.data!.id);
    expect(done).toEqual({
      object: 'contact_import',
      id: created.data!.id,
      status: 'completed',
      created_at: expect.stringMatching(/Z$/),
      completed_at: expect.stringMatching(/Z$/),
      counts: { total: 4, created: 4, updated: 0, skipped: 0, failed: 0 },
      progress: { processed_bytes: file.size, file_bytes: file.size },
      failures: [],
      failure_reason: null,
    });
    const ann = (await p.resend.contacts.get({ email: 'ann@imp.test' })).data!;
    expect(ann).toMatchObject({
      first_name: 'Ann',
      last_name: 'Lee',
      unsubscribed: false,
      properties: { plan: { value: 'pro', type: 'string' }, seats: { value: 3, type: 'number' } },
    });
    expect((await p.resend.contacts.get({ email: 'bob@imp.test' })).data).toMatchObject({
      first_name: 'Bob "B"',
      last_name: null,
      unsubscribed: true,
      properties: {},
    });
    expect((await p.resend.contacts.get({ email: 'carl@imp.test' })).data).toMatchObject({
      first_name: 'Multi\nline',
      properties: { seats: { value: 4, type: 'number' } },
    });
    expect((await p.resend.contacts.get({ email: 'zoe@imp.test' })).data).toMatchObject({
      first_name: 'Zoë',
      last_name: 'Ünal',
      properties: { seats: { value: 12, type: 'number' } },
    });
    expect((await p.svc.store.memberships.contactsOf(team(), seg)).length).toBe(4);
    expect(await p.svc.store.topicChoices.of(team(), ann.id)).toEqual({ [topic]: 'opt_in' });
    // The file is gone once the import is over.
    expect(importFiles(p.dataDir)).toEqual([]);

    const list = await p.resend.contacts.imports.list();
    expect(list.error).toBeNull();
    expect(list.data!.data[0]).toEqual(done as never);
    expect((await p.resend.contacts.imports.list({ status: 'failed' })).data!.data.some((i) => i.id === done.id)).toBe(false);
    expect((await p.resend.contacts.imports.list({ status: 'completed', limit: 1 })).data!.data.map((i) => i.id)).toEqual([done.id]);
  });

  test('without a column map the header names the fields; on_conflict: skip (the default) and upsert', async () => {
    await p.resend.contacts.create({ email: 'kept@conflict.test', firstName: 'Kept' });
    const text = 'email,first_name\nkept@conflict.test,Changed\nnew@conflict.test,New\nNEW@conflict.test,Again\n';
    const skip = await finished((await p.resend.contacts.imports.create({ file: csv(text) })).data!.id);
    expect(skip.counts).toEqual({ total: 3, created: 1, updated: 0, skipped: 2, failed: 0 });
    expect((await p.resend.contacts.get({ email: 'kept@conflict.test' })).data!.first_name).toBe('Kept');
    expect((await p.resend.contacts.get({ email: 'new@conflict.test' })).data!.first_name).toBe('New');

    const upsert = await finished((await p.resend.contacts.imports.create({ file: csv(text), onConflict: 'upsert' })).data!.id);
    expect(upsert.counts).toEqual({ total: 3, created: 0, updated: 3, skipped: 0, failed: 0 });
    expect((await p.resend.contacts.get({ email: 'kept@conflict.test' })).data!.first_name).toBe('Changed');
    expect((await p.resend.contacts.get({ email: 'new@conflict.test' })).data!.first_name).toBe('Again');
    // One contact per address, whatever the casing in the file.
    expect((await p.svc.store.contacts.all(team())).filter((c) => c.email.toLowerCase() === 'new@conflict.test')).toHaveLength(1);
  });

  test('bad rows are counted as failed with their reason; the import goes on', async () => {
    await p.resend.contactProperties.create({ key: 'score', type: 'number' });
    const text =
      'email,first_name,unsubscribed,score\n' +
      'good1@bad.test,A,,1\n' +
      'not-an-address,B,,\n' +
      ',C,,\n' +
      'short@bad.test,D\n' +
      'good2@bad.test,E,maybe,\n' +
      'good3@bad.test,F,,lots\n' +
      'good4@bad.test,G,true,2.5\n' +
      'good5@bad.test,"unterminated,,\n' +
      'never@bad.test,H,,\n';
    const done = await finished(
      (await p.resend.contacts.imports.create({ file: csv(text), columnMap: { properties: { score: { column: 'score' } } } })).data!.id,
    );
    expect(done.status).toBe('completed');
    expect(done.counts).toEqual({ total: 8, created: 2, updated: 0, skipped: 0, failed: 6 });
    expect(done.failures).toEqual([
      { row: 2, reason: '`not-an-address` is not an email address.' },
      { row: 3, reason: 'The email address is missing.' },
      { row: 4, reason: 'The row has 2 fields; the header has 4.' },
      { row: 5, reason: '`maybe` is not a value for `unsubscribed` (true or false).' },
      { row: 6, reason: '`lots` is not a number for the property `score`.' },
      { row: 8, reason: 'A quoted field is never closed: the rest of the file is part of it.' },
    ]);
    expect((await p.resend.contacts.get({ email: 'good4@bad.test' })).data).toMatchObject({
      unsubscribed: true,
      properties: { score: { value: 2.5, type: 'number' } },
    });
  });

  test('a file the import cannot read as contacts: the import fails with the reason', async () => {
    const noEmail = await finished((await p.resend.contacts.imports.create({ file: csv('name,phone\nAnn,1\n') })).data!.id);
    expect(noEmail).toMatchObject({ status: 'failed', failure_reason: 'The file has no `email` column for the email address.', counts: { total: 0 } });
    const mapped = await finished((await p.resend.contacts.imports.create({ file: csv('email\na@x.test\n'), columnMap: { firstName: 'Given' } })).data!.id);
    expect(mapped).toMatchObject({ status: 'failed', failure_reason: 'The file has no `Given` column.' });
    const empty = await finished((await p.resend.contacts.imports.create({ file: csv('') })).data!.id);
    expect(empty).toMatchObject({ status: 'failed', failure_reason: 'The file is empty: it has no header row.' });
    const headerOnly = await finished((await p.resend.contacts.imports.create({ file: csv('email\n') })).data!.id);
    expect(headerOnly).toMatchObject({ status: 'completed', counts: { total: 0, created: 0 } });
    expect(importFiles(p.dataDir)).toEqual([]);
  });

  test('bad requests: the documented error; no import, no contact, no file', async () => {
    const seg = (await p.resend.segments.create({ name: 'S' })).data!.id;
    await p.resend.contactProperties.create({ key: 'label', type: 'string' });
    const snapshot = async () =>
      JSON.stringify({ imports: await p.svc.store.contactImports.all(team()), contacts: (await p.svc.store.contacts.all(team())).length });
    const before = await snapshot();
    const file = csv('email\nx@refused.test\n');
    const cases: [Parameters<Resend['contacts']['imports']['create']>[0], 'validation_error', string][] = [
      [{ file, segments: [{ id: UNKNOWN }] }, 'validation_error', 'Invalid `segments[0].id` field: no segment with this id exists.'],
      [{ file, segments: [{ id: seg }, { id: 'nope' }] }, 'validation_error', 'Invalid `segments[1].id` field: no segment with this id exists.'],
      [{ file, topics: [{ id: UNKNOWN, subscription: 'opt_in' }] }, 'validation_error', 'Invalid `topics[0].id` field: no topic with this id exists.'],
      [
        { file, topics: [{ id: UNKNOWN, subscription: 'never' as never }] },
        'validation_error',
        'Invalid `topics[0].subscription` field: must be `opt_in` or `opt_out`.',
      ],
      [{ file, onConflict: 'merge' as never }, 'validation_error', 'Invalid `on_conflict` field: must be `upsert` or `skip`.'],
      [
        { file, columnMap: { properties: { nope: { column: 'x' } } } },
        'validation_error',
        'Invalid `column_map.properties.nope` field: no contact property `nope` exists; create it with POST /contact-properties first.',
      ],
      [
        { file, columnMap: { properties: { label: { column: 'x', type: 'number' } } } },
        'validation_error',
        'Invalid `column_map.properties.label.type` field: the property `label` is of type `string`.',
      ],
      [
        { file, columnMap: { properties: { label: { column: 'x', type: 'boolean' } } } },
        'validation_error',
        'Invalid `column_map.properties.label.type` field: the property `label` is of type `string`.',
      ],
      [{ file, columnMap: { email: '' } }, 'validation_error', 'Invalid `column_map.email` field: must be the name of a column of the file.'],
    ];
    for (const [payload, name, message] of cases) {
      const r = await p.resend.contacts.imports.create(payload);
      expect({ message, error: r.error }).toEqual({ message, error: { statusCode: 422, name, message } });
    }
    // Plain HTTP: no file, broken JSON in a field, not multipart, a broken multipart body, too large.
    const form = (parts: Record<string, string | Blob>) => {
      const f = new FormData();
      for (const [k, v] of Object.entries(parts)) f.append(k, v);
      return f;
    };
    const post = (body: BodyInit, headers: Record<string, string> = {}) =>
      fetch(`${p.url}/contacts/imports`, { method: 'POST', headers: { authorization: `Bearer ${p.apiKey}`, ...headers }, body }).then(async (r) => ({
        status: r.status,
        body: await r.json(),
      }));
    expect(await post(form({ on_conflict: 'skip' }))).toEqual({
      status: 422,
      body: { statusCode: 422, name: 'missing_required_field', message: 'Missing `file` field.' },
    });
    expect(await post(form({ file, column_map: '{"email":' }))).toEqual({
      status: 422,
      body: { statusCode: 422, name: 'validation_error', message: 'Invalid `column_map` field: must be a JSON-encoded string.' },
    });
    expect(await post(JSON.stringify({ file: 'email\na@b.test' }), { 'content-type': 'application/json' })).toEqual({
      status: 400,
      body: { statusCode: 400, name: 'validation_error', message: 'The request body must be multipart/form-data, with the CSV file in a `file` part.' },
    });
    expect(
      await post('--x\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n\r\nemail\n', { 'content-type': 'multipart/form-data; boundary=x' }),
    ).toEqual({
      status: 400,
      body: { statusCode: 400, name: 'validation_error', message: 'The multipart/form-data body is malformed.' },
    });
    // Just over 50 MB, streamed by the client (chunked): refused once it passes the limit.
    const MB = new Uint8Array(1024 * 1024).fill(0x61);
    let sent = 0;
    const boundary = 'posthorn-test-boundary';
    const big = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent === 0)
          c.enqueue(
            new TextEncoder().encode(
              `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.csv"\r\nContent-Type: text/csv\r\n\r\nemail\n`,
            ),
          );
        if (sent < 51) c.enqueue(MB);
        else {
          c.enqueue(new TextEncoder().encode(`\r\n--${boundary}--\r\n`));
          c.close();
        }
        sent++;
      },
    });
    const tooBig = await fetch(`${p.url}/contacts/imports`, {
      method: 'POST',
      headers: { authorization: `Bearer ${p.apiKey}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body: big,
      duplex: 'half',
    } as RequestInit);
    expect({ status: tooBig.status, body: await tooBig.json() }).toEqual({
      status: 413,
      body: { statusCode: 413, name: 'validation_error', message: 'The file is larger than 50 MB.' },
    });
    expect(await snapshot()).toBe(before);
    expect(importFiles(p.dataDir)).toEqual([]);
    // Unknown or malformed ids, bad filters.
    expect((await p.resend.contacts.imports.get(UNKNOWN)).error).toEqual({ statusCode: 404, name: 'not_found', message: 'Contact import not found' });
    expect((await p.resend.contacts.imports.get('nope')).error).toMatchObject({ statusCode: 422, name: 'invalid_parameter' });
    expect((await p.resend.contacts.imports.list({ status: 'done' as never })).error).toMatchObject({ statusCode: 422, name: 'validation_error' });
    // GET and DELETE on the literal path are wrong methods, never a contact named "imports".
    expect((await p.api('DELETE', '/contacts/imports')).status).toBe(405);
    // Another team sees none of them.
    const other = await p.newTeam();
    expect((await p.client(other.api_key).contacts.imports.list()).data!.data).toEqual([]);
  });

  test('100,000 rows with bad rows mixed in', async () => {
    const N = 100_000;
    const lines = ['email,first_name,last_name'];
    let bad = 0;
    for (let i = 0; i < N; i++) {
      if (i % 1000 === 7) {
        lines.push(`broken-${i},x,y`);
        bad++;
      } else if (i % 1000 === 500) {
        lines.push(`short${i}@big.test`);
        bad++;
      } else lines.push(`user${i}@big.test,First ${i},Last ${i}`);
    }
    const created = await p.resend.contacts.imports.create({ file: csv(`${lines.join('\n')}\n`) });
    expect(created.error).toBeNull();
    const done = await finished(created.data!.id, p.resend, 60_000);
    expect(done.counts).toEqual({ total: N, created: N - bad, updated: 0, skipped: 0, failed: bad });
    expect(done.failures).toHaveLength(100);
    expect(done.failures[0]).toEqual({ row: 8, reason: '`broken-7` is not an email address.' });
    expect(done.failures[1]).toEqual({ row: 501, reason: 'The row has 1 fields; the header has 3.' });
    expect((await p.resend.contacts.get({ email: `user${N - 1}@big.test` })).data).toMatchObject({ first_name: `First ${N - 1}` });
    const imported = (await p.svc.store.contacts.all(team())).filter((c) => c.email.endsWith('@big.test'));
    expect(imported.length).toBe(N - bad);
  }, 120_000);
});

describe('kill -9 in the middle of an import', () => {
  const dir = mkdtempSync(join(tmpdir(), 'posthorn-import-crash-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('the restarted server resumes at its cursor: exact counts, no duplicate contact', async () => {
    const dataDir = join(dir, 'data');
    const server = await serveChild(dataDir);
    const N = 100_000;
    try {
      await server.start();
      const client = new Resend(server.apiKey, { baseUrl: server.base } as never);
      const lines = ['email,first_name'];
      for (let i = 0; i < N; i++) lines.push(i % 997 === 3 ? 'not-an-email,x' : `crash${i}@resume.test,Zoë ${i}`);
      const bad = lines.filter((l) => l.startsWith('not-an-email')).length;
      const created = await client.contacts.imports.create({ file: csv(lines.join('\r\n')) });
      expect(created.error).toBeNull();
      const id = created.data!.id;
      // Kill once some chunks are committed and many rows are left.
      let seen: ContactImport | null = null;
      await until(
        async () => {
          seen = (await client.contacts.imports.get(id)).data;
          return seen?.status === 'in_progress' && seen.counts.total >= 1000;
        },
        'the import to be under way',
        60_000,
      );
      await server.kill();
      expect(seen!.counts.total).toBeLessThan(N);

      await server.start();
      const done = await finished(id, client, 60_000);
      expect(done.status).toBe('completed');
      expect(done.counts).toEqual({ total: N, created: N - bad, updated: 0, skipped: 0, failed: bad });
      await server.kill();

      const store = await openStore({ dataDir, retentionDays: 30, holdMs: 0 });
      try {
        const [t] = await store.teams.everything();
        const contacts = await store.contacts.all(t.id);
        expect(contacts.length).toBe(N - bad);
        expect(new Set(contacts.map((c) => c.email.toLowerCase())).size).toBe(N - bad);
        expect(contacts.find((c) => c.email === `crash${N - 1}@resume.test`)?.first_name).toBe(`Zoë ${N - 1}`);
        const imp = (await store.contactImports.get(t.id, id)) as ContactImportRec;
        expect(imp.cursor.offset).toBe(imp.file_size);
        expect(await store.importQueue.size()).toBe(0);
      } finally {
        await store.close();
      }
    } finally {
      await server.kill();
    }
  }, 180_000);
});
