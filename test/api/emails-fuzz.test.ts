// The bodies of POST /emails and POST /emails/batch (docs/api.md §1.4, §3, §7.1, §7.2) against
// mangled requests: wrong types in every field, nulls, huge arrays, deep nesting, control
// characters, random keys, broken JSON, non-object batch items, batches of good and bad items in
// both validation modes, reused idempotency keys. In-process first, for volume: validateEmail
// returns a valid email or throws the documented ApiError, and what it accepts composes into a
// message with no header of the caller's making. Then against a running Posthorn: every answer is
// a documented status with the documented `{name, statusCode, message}` error shape — never a 500
// — and a rejected request creates no email. Seeded, so a failure repeats; POSTHORN_FUZZ_RUNS
// raises the count for a longer run (the HTTP part takes a tenth of it).
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { validateEmail as validateFields, type ValidateOptions } from '../../src/sending/validate';
import { validate } from '../../src/schemas/validate';
import { SendEmailRequest } from '../../src/schemas/emails';

/** A send checked as the sending core checks it: the wire schema's types, then the rest. */
const validateEmail = (input: unknown, opts: ValidateOptions = {}) => validateFields(validate(SendEmailRequest, input, 'body'), opts);
import { composeMime } from '../../src/sending/mime';
import { ApiError } from '../../src/errors';
import { startPosthorn, type Running } from '../helpers/posthorn';
import { verifiedDomain } from '../helpers/emails';
import { rng, fuzzRuns, FUZZ_TIMEOUT, int, chance, pick, mutateText, randomText, truncate, type Random } from '../helpers/fuzz';
import { settle } from '../../src/sending/incoming';

const RUNS = fuzzRuns(3000);
const HTTP_RUNS = fuzzRuns(300, 0.1);
const NOW = Date.parse('2025-03-04T09:00:00.000Z');

const GOOD = { from: 'Acme <hello@example.test>', to: ['ann@dest.test'], subject: 'Hello', html: '<p>Hi</p>' };
const OPTIONAL: Record<string, unknown> = {
  text: 'Hi',
  cc: 'cc@dest.test',
  bcc: ['b1@dest.test', 'B2 <b2@dest.test>'],
  reply_to: 'Support <help@example.test>',
  headers: { 'X-Entity-Ref-ID': '123', 'List-Unsubscribe': '<https://example.test/u>' },
  tags: [{ name: 'category', value: 'welcome' }],
  scheduled_at: 'in 1 hour',
  attachments: [
    { filename: 'a.txt', content: 'aGVsbG8=' },
    { path: 'http://127.0.0.1:9/a.pdf' },
    // A Node Buffer as JSON.stringify writes it (docs/api.md §2 item 16).
    { filename: 'b.bin', content: { type: 'Buffer', data: [0, 104, 255] } },
  ],
};
const FIELDS = [...Object.keys(GOOD), ...Object.keys(OPTIONAL), 'topic_id', 'template'];
const ODD_KEYS = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'unknown_key', '', 'From', 'TO', 'html\u0000'];

/** Nested arrays or objects `depth` levels deep. */
function nested(random: Random, depth: number): unknown {
  let v: unknown = 'x';
  const asObject = chance(random, 0.5);
  for (let i = 0; i < depth; i++) v = asObject ? { a: v } : [v];
  return v;
}

/** A value of any JSON type, some of them large. */
function junk(random: Random, level = 0): unknown {
  switch (int(random, level > 1 ? 8 : 13)) {
    case 0:
      return null;
    case 1:
      return chance(random, 0.5);
    case 2:
      return pick(random, [0, -1, 1.5, 1e308, -0, 2 ** 53 + 1]);
    case 3:
      return '';
    case 4:
      return randomText(random, 30);
    case 5:
      return mutateText(random, pick(random, ['ann@dest.test', 'Acme <hello@example.test>', 'in 1 hour', 'aGVsbG8=', 'category', '<p>Hi</p>']));
    case 6:
      return 'x'.repeat(1000 + int(random, 100_000));
    case 7:
      return [];
    case 8:
      return Array.from({ length: 1 + int(random, 4) }, () => junk(random, level + 1));
    case 9:
      return Object.fromEntries(
        Array.from({ length: 1 + int(random, 4) }, () => [chance(random, 0.3) ? pick(random, ODD_KEYS) : randomText(random, 8), junk(random, level + 1)]),
      );
    case 10:
      return Array.from({ length: 50 + int(random, 2000) }, (_, i) => (chance(random, 0.5) ? `r${i}@dest.test` : { name: `n${i}`, value: 'v' }));
    case 11:
      return nested(random, pick(random, [10, 100, 1000, 5000]));
    default:
      return pick(random, Object.values(OPTIONAL));
  }
}

/** A send request with one to three fields changed: removed, null, another type, mangled text, or another field's value. */
function mutatedEmail(random: Random): Record<string, unknown> {
  const body: Record<string, unknown> = { ...GOOD };
  for (const key of Object.keys(OPTIONAL)) if (chance(random, 0.25)) body[key] = OPTIONAL[key];
  for (let n = int(random, 4); n > 0; n--) {
    const field = pick(random, FIELDS);
    const value = body[field];
    switch (int(random, 6)) {
      case 0:
        delete body[field];
        break;
      case 1:
        body[field] = null;
        break;
      case 2:
        body[field] = junk(random);
        break;
      case 3:
        // Control characters, quotes, non-ASCII in the strings of the field, wherever they are.
        body[field] = JSON.parse(JSON.stringify(value ?? 'ann@dest.test', (_, v) => (typeof v === 'string' ? mutateText(random, v) : v)));
        break;
      case 4: {
        // A header of the caller's making after a line break, in one of the field's strings.
        const injection = pick(random, ['\r\nX-Injected: yes', '\nX-Injected: yes', '\rX-Injected: yes', '\r\n\r\nX-Injected: yes']);
        const strings: string[] = [];
        JSON.stringify(value ?? OPTIONAL[field] ?? 'x', (_, v) => {
          if (typeof v === 'string') strings.push(v);
          return v;
        });
        const target = int(random, Math.max(strings.length, 1));
        let seen = 0;
        body[field] = JSON.parse(
          JSON.stringify(value ?? OPTIONAL[field] ?? 'x', (_, v) => (typeof v === 'string' && seen++ === target ? `${v}${injection}` : v)),
        );
        break;
      }
      default:
        body[field] = OPTIONAL[pick(random, Object.keys(OPTIONAL))];
    }
  }
  if (chance(random, 0.15)) Object.defineProperty(body, pick(random, ODD_KEYS), { value: junk(random), enumerable: true, configurable: true, writable: true });
  return body;
}

const ERROR_NAMES: Record<number, string[]> = {
  400: ['validation_error', 'invalid_idempotency_key'],
  403: ['validation_error'],
  409: ['invalid_idempotent_request', 'concurrent_idempotent_requests'],
  422: ['validation_error', 'missing_required_field', 'invalid_attachment'],
};

/** The documented error shape (docs/api.md §3.1) with a documented name for its status (§3.2). */
function documentedError(status: number, body: unknown, what: string) {
  if (!ERROR_NAMES[status]) throw new Error(`${what}: status ${status} ${JSON.stringify(body)?.slice(0, 500)}`);
  expect(Object.keys(body as object).sort()).toEqual(['message', 'name', 'statusCode']);
  const e = body as { name: string; statusCode: number; message: string };
  expect(e.statusCode).toBe(status);
  expect(ERROR_NAMES[status]).toContain(e.name);
  expect(typeof e.message).toBe('string');
  expect(e.message.length).toBeGreaterThan(0);
}

/** The names of a composed message's header fields, unfolded; any line break ends a line (a bare CR or LF too, as some MTAs read it). */
function headerNames(raw: Buffer): string[] {
  const head = raw.toString('latin1').split(/\r\n\r\n|\n\n|\r\r/)[0]!;
  return head.split(/(?:\r\n|\r(?!\n)|\n)(?![ \t])/).map((line) => line.slice(0, line.indexOf(':')).toLowerCase());
}

const COMPOSED = ['from', 'to', 'cc', 'reply-to', 'subject', 'message-id', 'date', 'mime-version', 'content-type', 'content-transfer-encoding'];

describe('validateEmail in-process', () => {
  test(
    `${RUNS} mangled send requests: a valid email or the documented 422, and no header of the caller's making`,
    async () => {
      const random = rng(20261210);
      const seen = { valid: 0, refused: 0 };
      for (let i = 0; i < RUNS; i++) {
        const input = mutatedEmail(random);
        let v: ReturnType<typeof validateEmail>;
        try {
          v = validateEmail(input, { now: NOW });
        } catch (e) {
          if (!(e instanceof ApiError)) throw new Error(`${JSON.stringify(input).slice(0, 500)}: ${(e as Error)?.stack ?? e}`);
          documentedError(e.statusCode, e.toJSON(), JSON.stringify(input).slice(0, 500));
          expect(e.statusCode).toBe(422);
          // The message names the offending field in backticks (docs/api.md §3.1).
          expect(e.message).toMatch(/`[^`]+`/);
          seen.refused++;
          continue;
        }
        seen.valid++;
        expect(v.to.length).toBeGreaterThanOrEqual(1);
        expect(v.to.length).toBeLessThanOrEqual(50);
        expect(typeof v.subject).toBe('string');
        expect(v.html !== null || v.text !== null).toBe(true);
        for (const [name, value] of Object.entries(v.headers)) {
          expect(name).toMatch(/^[!-9;-~]+$/);
          expect(value).not.toMatch(/[\r\n\0]/);
        }
        for (const t of v.tags) expect(`${t.name}${t.value}`).toMatch(/^[A-Za-z0-9_-]*$/);
        if (v.scheduled_at !== null) expect(Date.parse(v.scheduled_at)).toBeGreaterThan(NOW);
        // Composed as the sending core does (attachments aside: they need fetching): only Posthorn's
        // fields and the custom headers asked for — a line break in a name, subject or header value
        // would have started another.
        const raw = await composeMime(v, { messageId: '<0195608a-51e4-70ed-a079-d3bde8e25d94@example.test>', date: new Date(NOW), attachments: [] });
        const allowed = new Set([...COMPOSED, ...Object.keys(v.headers).map((h) => h.toLowerCase())]);
        for (const name of headerNames(raw)) if (!allowed.has(name)) throw new Error(`${JSON.stringify(input).slice(0, 500)}: composed a \`${name}\` header`);
      }
      expect(seen.valid).toBeGreaterThan(RUNS / 20);
      expect(seen.refused).toBeGreaterThan(RUNS / 20);
    },
    FUZZ_TIMEOUT,
  );
});

describe('POST /emails and /emails/batch over HTTP', () => {
  let p: Running;
  beforeAll(async () => {
    // The request limit out of the way: the fuzz sends hundreds of requests a second.
    p = await startPosthorn({ 'limits.requests_per_second': 1_000_000 });
    await verifiedDomain(p, 'example.test');
  });
  afterAll(() => p.stop());

  // What a batch left in the incoming queue is written first, as every read through the API does.
  const storedIds = async () => {
    await settle(p.svc.store, p.svc.events, p.creds.team_id);
    return new Set((await p.svc.store.emails.page(p.creds.team_id, {}, null, (e) => e.id)).data);
  };

  /**
   * The server fetches attachment `path`s: whatever the mangling made of them, they stay on
   * loopback (refused as private before any DNS lookup), so no request leaves 127.0.0.0/8.
   */
  function offline(random: Random, body: unknown): unknown {
    if (!body || typeof body !== 'object' || !Array.isArray((body as Record<string, unknown>).attachments)) return body;
    const b = body as Record<string, unknown>;
    b.attachments = (b.attachments as unknown[]).map((a) =>
      a && typeof a === 'object' && typeof (a as Record<string, unknown>).path === 'string'
        ? { ...a, path: pick(random, ['http://127.0.0.1:9/a.pdf', 'https://[::1]/x', 'ftp://127.0.0.1/a', 'not a url']) }
        : a,
    );
    return b;
  }

  /** A request body as text: a mangled email, a batch of them, another JSON type, or broken JSON. */
  function request(random: Random): { path: string; raw: string; headers: Record<string, string> } {
    const headers: Record<string, string> = {};
    if (chance(random, 0.15)) headers['idempotency-key'] = chance(random, 0.1) ? 'k'.repeat(257) : `key-${int(random, 6)}`;
    const batch = chance(random, 0.4);
    let body: unknown;
    if (batch) {
      if (chance(random, 0.7)) headers['x-batch-validation'] = pick(random, ['strict', 'permissive', 'PERMISSIVE', 'lenient', '']);
      const n = chance(random, 0.05) ? pick(random, [0, 101]) : 1 + int(random, 5);
      body = Array.from({ length: n }, () => (chance(random, 0.1) ? junk(random) : chance(random, 0.4) ? { ...GOOD } : offline(random, mutatedEmail(random))));
    } else body = offline(random, mutatedEmail(random));
    let raw = JSON.stringify(body);
    switch (int(random, 12)) {
      case 0:
        raw = JSON.stringify(chance(random, 0.5) ? junk(random) : batch ? offline(random, mutatedEmail(random)) : [body]);
        break;
      case 1:
        raw = chance(random, 0.5) ? truncate(random, Buffer.from(raw)).toString() : mutateText(random, raw, ['{', '}', '[', ']', '"', ',', ':']);
        break;
      case 2: {
        // Nesting far deeper than any send request's, in an unknown key — deep enough for a
        // recursive walk of the body (the request log's redaction, the idempotency fingerprint) to
        // run out of stack; with an idempotency key half the time.
        const depth = pick(random, [65, 2_000, 12_000, 30_000, 100_000]);
        const deep = chance(random, 0.5) ? `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}` : `${'['.repeat(depth)}${']'.repeat(depth)}`;
        const email = `{"deep":${deep},${JSON.stringify(GOOD).slice(1)}`;
        raw = batch ? (raw.length > 2 ? `[${email},${raw.slice(1)}` : `[${email}]`) : email;
        if (chance(random, 0.5)) headers['idempotency-key'] = `deep-${int(random, 1e9)}`;
        break;
      }
    }
    return { path: batch ? '/emails/batch' : '/emails', raw, headers };
  }

  test(
    `${HTTP_RUNS} mangled requests: documented answers only, and a rejected request creates no email`,
    async () => {
      const random = rng(20261211);
      const accepted = new Set<string>();
      const statuses: Record<number, number> = {};
      for (let i = 0; i < HTTP_RUNS; i++) {
        const req = request(random);
        let items: number | null = null;
        try {
          const sent = JSON.parse(req.raw);
          if (Array.isArray(sent)) items = sent.length;
        } catch {}
        const before = await storedIds();
        const r = await p.api('POST', req.path, { raw: req.raw, headers: req.headers });
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
        const what = `${req.path} ${JSON.stringify(req.headers)} ${req.raw.slice(0, 300)}`;
        const ids: string[] = [];
        if (r.status === 200) {
          if (req.path === '/emails') {
            expect(Object.keys(r.body)).toEqual(['id']);
            ids.push(r.body.id);
          } else {
            const permissive = (req.headers['x-batch-validation'] ?? '').toLowerCase() === 'permissive';
            expect(Object.keys(r.body).sort()).toEqual(permissive ? ['data', 'errors'] : ['data']);
            for (const d of r.body.data) ids.push(d.id);
            if (permissive) {
              for (const e of r.body.errors) expect(typeof e.message).toBe('string');
              expect(r.body.data.length + r.body.errors.length).toBe(items!);
            } else expect(r.body.data.length).toBe(items!);
          }
          for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
        } else documentedError(r.status, r.body, what);
        // What the store holds now: what it held, and the emails this answer names (none when
        // rejected; the original ones when an idempotency key replays).
        const after = await storedIds();
        const created = [...after].filter((id) => !before.has(id));
        for (const id of created) if (!ids.includes(id)) throw new Error(`${what}: answered ${r.status} yet created ${id}`);
        for (const id of ids) expect(after.has(id)).toBe(true);
        expect(after.size).toBe(before.size + created.length);
        for (const id of ids) accepted.add(id);
      }
      expect(await storedIds()).toEqual(accepted);
      // Accepted, refused, malformed and conflicting (a reused idempotency key) requests all occurred.
      expect(statuses[200]).toBeGreaterThan(0);
      expect(statuses[422]).toBeGreaterThan(0);
      expect(statuses[400]).toBeGreaterThan(0);
      expect(statuses[409]).toBeGreaterThan(0);
    },
    FUZZ_TIMEOUT,
  );
});
