// Large send bodies are parsed as they arrive (src/api/platform/body.ts, streamed-json.ts): past
// 1 MB, POST /emails and /emails/batch decode an attachment's base64 while it streams in. Nothing a
// client sees may differ from the whole-body path: the same stored email and attachment bytes, the
// same idempotency fingerprint and request log entry, the same answers to malformed, misplaced,
// too deep and too large bodies (docs/api.md §1.4, §3, §7.1, §7.2). Each case sends one value both
// ways: compact (under 1 MB, parsed whole) and padded with white space past it (streamed), with a
// Content-Length or chunked.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { randomBytes } from 'node:crypto';
import type { Running } from '../helpers/posthorn';
import { startMailWorld, type MailWorld } from '../helpers/world';
import { STREAM_FROM_BYTES } from '../../src/api/platform/body';
import { storedEmails } from '../helpers/emails';

let world: MailWorld;
let p: Running;
beforeAll(async () => {
  world = await startMailWorld();
  p = world.p;
});
afterAll(() => world.stop());

const team = () => p.creds.team_id;
/** 600 KB of file: 800 KB of base64, so its send fits under the streaming threshold when compact. */
const file = randomBytes(600 * 1024);
/** An hour from now, once: two sends of one value are scheduled for the same time. */
const later = new Date(Date.now() + 3_600_000).toISOString();
const send = (extra: Record<string, unknown> = {}) => ({
  from: 'Billing <billing@example.test>',
  to: ['large@dest.test'],
  subject: 'Large',
  text: 'See the attachment.',
  // Scheduled: nothing is delivered while the test compares what was stored.
  scheduled_at: later,
  attachments: [
    { filename: 'report.bin', content: file.toString('base64') },
    { filename: 'small.txt', content: Buffer.from('hello').toString('base64'), content_type: 'text/plain' },
  ],
  ...extra,
});

type Way = 'whole' | 'streamed' | 'chunked';
/** `text` as sent: compact for `whole` (it must be under the threshold), else padded past it with spaces. */
function bodyFor(text: string, way: Way): string {
  if (way === 'whole') {
    expect(text.length).toBeLessThan(STREAM_FROM_BYTES);
    return text;
  }
  // White space between tokens: the same value, now past the threshold.
  const pad = ' '.repeat(STREAM_FROM_BYTES + 1000);
  return text.startsWith('{') || text.startsWith('[') ? `${text[0]}${pad}${text.slice(1)}` : `${pad}${text}`;
}

async function post(path: string, text: string, way: Way, headers: Record<string, string> = {}) {
  const body = bodyFor(text, way);
  const bytes = Buffer.from(body);
  // A ReadableStream body goes chunked (no Content-Length), in pieces as a slow client sends them.
  const stream =
    way === 'chunked'
      ? new ReadableStream<Uint8Array>({
          start(c) {
            for (let at = 0; at < bytes.byteLength; at += 100_000) c.enqueue(bytes.subarray(at, at + 100_000));
            c.close();
          },
        })
      : bytes;
  const res = await fetch(`${p.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${p.apiKey}`, 'content-type': 'application/json', ...headers },
    body: stream,
  });
  const answer = await res.text();
  let json: unknown = answer;
  try {
    json = JSON.parse(answer);
  } catch {}
  return { status: res.status, body: json as { id?: string; data?: { id: string }[]; message?: string; name?: string; statusCode?: number } };
}

/** What was stored for email `id`, without what differs by nature between two sends (ids, times). */
async function storedOf(id: string) {
  const email = (await p.svc.store.emails.get(team(), id))!;
  const content = (await p.svc.store.emailContent.get(team(), id))!;
  const { id: _, created_at, message_id, attachments, ...rest } = email;
  return {
    ...rest,
    attachments: attachments.map(({ id: _a, ...a }) => a),
    html: content.html,
    text: content.text,
    message: content.message,
    files: attachments.map((a) => Buffer.from(content.files[a.id]!).toString('hex')),
  };
}

describe('a large send streamed in is the send it would have been whole', () => {
  test.each(['streamed', 'chunked'] as Way[])('POST /emails, %s: the same email, attachment bytes and request log entry', async (way) => {
    const text = JSON.stringify(send());
    const whole = await post('/emails', text, 'whole', { 'user-agent': `whole-${way}` });
    const streamed = await post('/emails', text, way, { 'user-agent': way });
    expect(whole.status).toBe(200);
    expect(streamed.status).toBe(200);
    const [a, b] = [await storedOf(whole.body.id!), await storedOf(streamed.body.id!)];
    expect(b).toEqual(a);
    expect(b.files[0]).toBe(file.toString('hex'));
    // The request log keeps the same redacted body (docs/api.md §15).
    const logs = (await p.api('GET', '/logs?limit=50')).body.data as { id: string; user_agent: string }[];
    const entry = async (ua: string) => (await p.api('GET', `/logs/${logs.find((l) => l.user_agent === ua)!.id}`)).body.request_body;
    const logged = await entry(way);
    expect(logged).toEqual(await entry(`whole-${way}`));
    expect(logged.attachments[0].content).toBe(`[${file.byteLength} bytes]`);
  });

  test('an attachment as a Node Buffer in JSON past the threshold (read whole when it shows early, else streamed): the same bytes', async () => {
    const bytes = file.subarray(0, 400_000);
    const buffer = send({ to: 'buf@dest.test', attachments: [{ filename: 'b.bin', content: bytes.toJSON() as unknown as string }] });
    const text = JSON.stringify(buffer);
    expect(text.length).toBeGreaterThan(STREAM_FROM_BYTES);
    // As sent (the Buffer's start within the first MB: read whole), and padded (it comes later: streamed).
    const early = await fetch(`${p.url}/emails`, {
      method: 'POST',
      headers: { authorization: `Bearer ${p.apiKey}`, 'content-type': 'application/json' },
      body: text,
    });
    expect(early.status).toBe(200);
    const late = await post('/emails', text, 'streamed');
    expect(late.status).toBe(200);
    const [a, b] = [await storedOf(((await early.json()) as { id: string }).id), await storedOf(late.body.id!)];
    expect(b).toEqual(a);
    expect(a.files).toEqual([bytes.toString('hex')]);
  });

  test('POST /emails/batch, streamed: each item its attachments', async () => {
    const items = [
      send({ to: 'b0@dest.test' }),
      send({ to: 'b1@dest.test', attachments: [{ filename: 'b.bin', content: file.subarray(0, 300_000).toString('base64') }] }),
    ];
    const text = JSON.stringify(items);
    const whole = await post('/emails/batch', JSON.stringify([items[0]]), 'whole');
    const streamed = await post('/emails/batch', text, 'chunked');
    expect(streamed.status).toBe(200);
    const [s0, s1] = streamed.body.data!;
    expect(await storedOf(s0!.id)).toEqual(await storedOf(whole.body.data![0]!.id));
    expect((await storedOf(s1!.id)).files).toEqual([file.subarray(0, 300_000).toString('hex')]);
  });

  test('one idempotency key: the streamed body replays the whole one (same fingerprint), a different file is a 409', async () => {
    const key = { 'idempotency-key': `large-${Date.now()}` };
    const text = JSON.stringify(send({ to: 'idem@dest.test' }));
    const first = await post('/emails', text, 'whole', key);
    const again = await post('/emails', text, 'streamed', key);
    expect(first.status).toBe(200);
    expect(again).toEqual(first);
    // One base64 character changed, far inside the decoded part.
    const b64 = file.toString('base64');
    const other = text.replace(b64, `${b64.slice(0, 400_000)}${b64[400_000] === 'A' ? 'B' : 'A'}${b64.slice(400_001)}`);
    const conflict = await post('/emails', other, 'streamed', key);
    expect([conflict.status, conflict.body.name]).toEqual([409, 'invalid_idempotent_request']);
  });

  test('base64 that is not plain — line breaks, padding, unpadded — decodes as Buffer.from does', async () => {
    const b64 = file.toString('base64');
    const variants = [
      b64.replace(/.{76}/g, '$&\r\n'),
      `${b64.slice(0, -4)}QR==`,
      `${b64.slice(0, -4)}QQ`,
      b64.replaceAll('/', '/'), // escaped in JSON below
    ];
    for (const [i, content] of variants.entries()) {
      let text = JSON.stringify(send({ attachments: [{ filename: 'v.bin', content }] }));
      if (i === 3) text = text.replaceAll('/', '\\/');
      const r = await post('/emails', text, 'streamed');
      expect(r.status).toBe(200);
      expect((await storedOf(r.body.id!)).files).toEqual([Buffer.from(content, 'base64').toString('hex')]);
    }
  });
});

describe('malformed large bodies get the answers of whole ones', () => {
  const b64 = file.toString('base64');
  const cases: [string, string][] = [
    ['cut short', JSON.stringify(send()).slice(0, -3)],
    ['a trailing comma', `${JSON.stringify(send()).slice(0, -1)},}`],
    ['a no-break space between tokens', JSON.stringify(send()).replace('"subject":', '"subject":\u00a0')],
    ['nested too deeply', JSON.stringify(send({ react: JSON.parse(`${'['.repeat(70)}${']'.repeat(70)}`) }))],
    ['an array for an object', `[${JSON.stringify(send())}]`],
    ['from missing (reported before the attachment)', JSON.stringify(send({ from: undefined, attachments: [{ content: `${b64}!` }] }))],
    ['base64 with a bad character far inside', JSON.stringify(send({ attachments: [{ content: `${b64.slice(0, 500_000)}*${b64.slice(500_001)}` }] }))],
    ['base64 with a length one past a group', JSON.stringify(send({ attachments: [{ content: `${b64}A` }] }))],
    ['a content that is a number', JSON.stringify(send({ attachments: [{ content: 5 }, { content: b64 }] }))],
  ];
  test.each(cases)('%s', async (_name, text) => {
    const whole = await post('/emails', text, 'whole');
    expect(whole.status).toBeGreaterThanOrEqual(400);
    for (const way of ['streamed', 'chunked'] as Way[]) expect(await post('/emails', text, way)).toEqual(whole);
  });

  test('a batch item with bad base64: the same [index] error, nothing stored', async () => {
    const text = JSON.stringify([send({ to: 'ok@dest.test' }), send({ attachments: [{ content: `${b64.slice(0, 300_000)}#${b64.slice(300_001)}` }] })]);
    const before = (await storedEmails(p.svc, team())).length;
    const streamed = await post('/emails/batch', text, 'streamed');
    expect(streamed).toEqual({
      status: 422,
      body: { statusCode: 422, name: 'invalid_attachment', message: '[1] Invalid `attachments[0].content` field: it is not valid base64.' },
    });
    expect((await storedEmails(p.svc, team())).length).toBe(before);
  });

  test('past 50 MB: 413 whether the length is declared or not, even after a syntax error', async () => {
    const tooLarge = { status: 413, body: { statusCode: 413, name: 'validation_error', message: 'Request body is too large.' } };
    const big = ' '.repeat(50 * 1024 * 1024 + 10);
    expect(await post('/emails', `{${big}"from":"a@example.test"}`, 'chunked')).toEqual(tooLarge);
    expect(await post('/emails', `{x${big}}`, 'chunked')).toEqual(tooLarge);
  });

  test('only white space: an empty body, every field missing', async () => {
    const whole = await p.api('POST', '/emails', { raw: ' ' });
    expect(await post('/emails', ' ', 'chunked')).toEqual({ status: whole.status, body: whole.body });
  });
});
