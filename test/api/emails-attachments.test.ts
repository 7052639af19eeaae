// Attachments as real clients send them (docs/api.md §7.1, §7.2, §2 items 16 and 17): a Node Buffer
// from the official SDK at majors 3, 4 and 5 — `{"type":"Buffer","data":[…]}` on the wire — and
// base64 from 6, arriving byte for byte at a loopback MTA with a DKIM signature that verifies;
// attachments in batch sends, with the limit of a request; bad Buffers refused with nothing
// stored; and POST /email, the singular path of the SDK before 2.0.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { randomBytes } from 'node:crypto';
import { simpleParser } from 'mailparser';
import type { Running } from '../helpers/posthorn';
import { startMailWorld, authenticateReceived, type MailWorld } from '../helpers/world';
import { waitForEmail, storedEmails } from '../helpers/emails';
import { legacyResend, sentBodies, type LegacyMajor } from '../helpers/legacy-sdk';
import { MAX_BUFFER_BYTES } from '../../src/schemas/emails';

let world: MailWorld;
let p: Running;
let files: ReturnType<typeof Bun.serve>;
const MiB = 1024 * 1024;

beforeAll(async () => {
  // Private networks allowed: attachment `path`s are fetched from the file server below, on loopback.
  world = await startMailWorld({ 'security.allow_private_networks': true });
  p = world.p;
  files = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      // /zeros/<n>: n MiB of zero bytes.
      const m = /^\/zeros\/(\d+)$/.exec(new URL(req.url).pathname);
      return m ? new Response(new Uint8Array(Number(m[1]) * MiB)) : new Response('not here', { status: 404 });
    },
  });
});
afterAll(async () => {
  files.stop(true);
  await world.stop();
});

const team = () => p.creds.team_id;
const stored = async () => (await storedEmails(p.svc, team())).length;
/** Every byte value, then random ones: what a file may hold. */
const binary = (random: number) => Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), randomBytes(random)]);

/** The message the sink received for email `id`, once delivered: its attachments, and its DKIM verdict. */
async function received(id: string) {
  await waitForEmail(p.svc, { team_id: team(), id }, (e) => e.last_event === 'delivered');
  const msg = world.sink.messages.find((m) => m.raw.includes(`<${id}@example.test>`))!;
  const parsed = await simpleParser(msg.raw);
  const auth = await authenticateReceived(world.dns, msg);
  return { attachments: parsed.attachments, dkim: auth.dkim.results[0]?.status.result };
}

/** The bytes Posthorn stored for each attachment of email `id`, through their download links. */
async function storedBytes(id: string): Promise<Buffer[]> {
  const list = (await p.api('GET', `/emails/${id}/attachments`)).body.data as { download_url: string; filename?: string }[];
  return Promise.all(list.map(async (a) => Buffer.from(await (await fetch(`${p.url}${new URL(a.download_url).pathname}`)).arrayBuffer())));
}

/** What the three majors have in common for a send. */
type Sender = { emails: { send(payload: Record<string, unknown>): Promise<{ data: { id: string } | null; error: unknown }> } };

describe('a Node Buffer from the official SDK', () => {
  test.each([3, 4, 5] as LegacyMajor[])('at major %d: sent as {"type":"Buffer"}, delivered byte for byte, DKIM passing', async (major) => {
    // One call for the three: their option types differ only in what this test does not use.
    const resend = (await legacyResend(major, p.url, p.apiKey)) as unknown as Sender;
    const invoice = binary(64 * 1024);
    const logo = randomBytes(300);
    const to = `v${major}@dest.test`;
    const { result, bodies } = await sentBodies(() =>
      resend.emails.send({
        from: 'Billing <billing@example.test>',
        to,
        subject: `Invoice from SDK ${major}`,
        html: '<p>Attached. <img src="cid:logo"></p>',
        attachments: [
          { filename: 'invoice.pdf', content: invoice },
          // 3.x has no inline attachments; 4.x and 5.x send `inline_content_id` (§2 item 6).
          ...(major === 3 ? [] : [{ filename: 'logo.png', content: logo, inlineContentId: 'logo' }]),
        ],
      }),
    );
    expect(result.error).toBeNull();
    // What went over the wire: the Buffer as JSON.stringify writes it.
    const wire = bodies[0] as { attachments: { content: unknown }[] };
    expect(wire.attachments[0]!.content).toEqual({ type: 'Buffer', data: [...invoice] });

    const id = result.data!.id;
    const got = await received(id);
    expect(got.dkim).toBe('pass');
    const pdf = got.attachments.find((a) => a.filename === 'invoice.pdf')!;
    expect(pdf.contentType).toBe('application/pdf');
    expect(Buffer.compare(pdf.content, invoice)).toBe(0);
    const kept = await storedBytes(id);
    expect(kept.some((b) => b.equals(invoice))).toBe(true);
    if (major !== 3) {
      const inline = got.attachments.find((a) => a.cid === 'logo')!;
      expect(Buffer.compare(inline.content, logo)).toBe(0);
      expect(kept.some((b) => b.equals(logo))).toBe(true);
    }
  });

  test('at major 6: a Buffer goes as base64, with the same result', async () => {
    const invoice = binary(10 * 1024);
    const { result, bodies } = await sentBodies(() =>
      p.resend.emails.send({
        from: 'billing@example.test',
        to: 'v6@dest.test',
        subject: 'Invoice from SDK 6',
        text: 'Attached.',
        attachments: [{ filename: 'invoice.bin', content: invoice }],
      }),
    );
    expect(result.error).toBeNull();
    expect((bodies[0] as { attachments: { content: unknown }[] }).attachments[0]!.content).toBe(invoice.toString('base64'));
    const got = await received(result.data!.id);
    expect(got.dkim).toBe('pass');
    expect(Buffer.compare(got.attachments[0]!.content, invoice)).toBe(0);
  });

  // Issue 34: a download is served from the dashboard's origin with the sender's content type; a
  // text/javascript or text/html attachment must not run there, even opened directly.
  test('a download runs nothing: CSP sandbox, no default source, no sniffing', async () => {
    const sent = await p.resend.emails.send({
      from: 'Acme <hello@example.test>',
      to: ['bob@dest.test'],
      subject: 'script',
      text: 'x',
      attachments: [{ filename: 'x.js', content: Buffer.from('alert(document.cookie)'), contentType: 'text/javascript' }],
    } as never);
    expect(sent.error).toBeNull();
    const [file] = (await p.api('GET', `/emails/${sent.data!.id}/attachments`)).body.data as { download_url: string }[];
    const res = await fetch(`${p.url}${new URL(file!.download_url).pathname}`);
    expect([res.status, res.headers.get('content-type')]).toEqual([200, 'text/javascript']);
    expect(res.headers.get('content-security-policy')).toBe("sandbox; default-src 'none'");
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });

  test('the request log keeps "[n bytes]" for a Buffer, not its bytes', async () => {
    const r = await p.api('POST', '/emails', {
      body: { from: 'billing@example.test', to: 'log@dest.test', subject: 'Logged', text: 'x', attachments: [{ filename: 'a.bin', content: binary(1000) }] },
      headers: { 'user-agent': 'buffer-log-test' },
    });
    expect(r.status).toBe(200);
    // GET /logs waits for the log's pending entries (docs/api.md §15).
    const list = (await p.api('GET', '/logs?limit=20')).body.data as { id: string; user_agent: string }[];
    const entry = (await p.api('GET', `/logs/${list.find((l) => l.user_agent === 'buffer-log-test')!.id}`)).body;
    expect(entry.request_body.attachments).toEqual([{ filename: 'a.bin', content: '[1256 bytes]' }]);
  });
});

describe('bad Buffers (docs/api.md §7.1)', () => {
  const send = (content: unknown) => ({
    from: 'billing@example.test',
    to: 'bad@dest.test',
    subject: 'Bad',
    text: 'x',
    attachments: [{ filename: 'f', content }],
  });
  const bytesMessage = (field: string) =>
    `Invalid \`${field}\` field: a Buffer's \`data\` must be an array of bytes (integers from 0 to 255), at most ${MAX_BUFFER_BYTES} of them (40 MB after base64 encoding).`;

  test('a byte outside 0–255, data that is no array, a wrong type → 422 invalid_attachment, nothing stored', async () => {
    const before = await stored();
    const cases: [unknown, string][] = [
      [{ type: 'Buffer', data: [1, 2, 256] }, bytesMessage('attachments[0].content.data')],
      [{ type: 'Buffer', data: [-1] }, bytesMessage('attachments[0].content.data')],
      [{ type: 'Buffer', data: [0.5] }, bytesMessage('attachments[0].content.data')],
      [{ type: 'Buffer', data: 'aGk=' }, bytesMessage('attachments[0].content.data')],
      [{ type: 'Buffer', data: { 0: 1 } }, bytesMessage('attachments[0].content.data')],
      [{ type: 'ArrayBuffer', data: [1] }, 'Invalid `attachments[0].content.type` field: a Buffer attachment has `"type": "Buffer"`.'],
      [12, 'Invalid `attachments[0].content` field: it must be a base64 string or a Buffer (`{"type":"Buffer","data":[…]}`).'],
    ];
    for (const [content, message] of cases) {
      const r = await p.api('POST', '/emails', { body: send(content) });
      expect([r.status, r.body]).toEqual([422, { statusCode: 422, name: 'invalid_attachment', message }]);
    }
    // In a batch: strict refuses it all, naming the item.
    const batch = await p.api('POST', '/emails/batch', { body: [send('aGk='), send({ type: 'Buffer', data: [300] })] });
    expect([batch.status, batch.body.name, batch.body.message]).toEqual([422, 'invalid_attachment', `[1] ${bytesMessage('attachments[0].content.data')}`]);
    expect(await stored()).toBe(before);
  });
});

describe('attachments in batch sends (docs/api.md §7.2)', () => {
  test('through the SDK at majors 5 and 6: every item keeps its own attachments', async () => {
    const legacy = await legacyResend(5, p.url, p.apiKey);
    const [a, b, c] = [binary(2000), binary(3000), binary(4000)];
    // The SDK's types (5.x and 6.x) leave `attachments` out of batch items, as Resend refuses them; its code sends them.
    const old = await legacy.batch.send([
      { from: 'billing@example.test', to: 'batch-a@dest.test', subject: 'A', text: 'a', attachments: [{ filename: 'a.bin', content: a }] } as never,
      { from: 'billing@example.test', to: 'batch-b@dest.test', subject: 'B', text: 'b' },
      {
        from: 'billing@example.test',
        to: 'batch-c@dest.test',
        subject: 'C',
        text: 'c',
        attachments: [
          { filename: 'c.bin', content: c },
          { filename: 'b.bin', content: b },
        ],
      } as never,
    ]);
    expect(old.error).toBeNull();
    const [ia, ib, ic] = old.data!.data.map((d) => d.id);
    const current = await p.resend.batch.send([
      {
        from: 'billing@example.test',
        to: 'batch-d@dest.test',
        subject: 'D',
        text: 'd',
        attachments: [{ filename: 'd.bin', content: b.toString('base64') }],
      } as never,
    ]);
    expect(current.error).toBeNull();
    const id = current.data!.data[0]!.id;

    expect(await storedBytes(ib!)).toEqual([]);
    const gotA = await received(ia!);
    expect([gotA.dkim, gotA.attachments.map((x) => x.content.equals(a))]).toEqual(['pass', [true]]);
    const gotC = await received(ic!);
    expect([gotC.dkim, gotC.attachments.map((x) => [x.filename, x.content.equals(x.filename === 'c.bin' ? c : b)])]).toEqual([
      'pass',
      [
        ['c.bin', true],
        ['b.bin', true],
      ],
    ]);
    const gotD = await received(id);
    expect(gotD.attachments[0]!.content.equals(b)).toBe(true);
  });

  test('a request’s attachments total at most 50 MB after base64, fetched ones included: the item that passes it is refused', async () => {
    // 15 MiB is 20 MiB once base64-encoded: the first two items take 40 of the 50, the third a
    // little, the fourth would pass it. Scheduled, so that nothing is delivered while the test runs.
    const item = (n: number, attachment: Record<string, string>) => ({
      from: 'billing@example.test',
      to: `big-${n}@dest.test`,
      subject: `Big ${n}`,
      text: 'x',
      scheduled_at: 'in 1 hour',
      attachments: [attachment],
    });
    const path = `http://127.0.0.1:${files.port}/zeros/15`;
    const body = [item(0, { path }), item(1, { path }), item(2, { content: 'aGk=' }), item(3, { path })];
    const tooLarge = 'Invalid `attachments` field: the attachments of a batch may total at most 50 MB after base64 encoding.';

    const before = await stored();
    const strict = await p.api('POST', '/emails/batch', { body });
    expect([strict.status, strict.body]).toEqual([422, { statusCode: 422, name: 'validation_error', message: `[3] ${tooLarge}` }]);
    expect(await stored()).toBe(before);

    const permissive = await p.api('POST', '/emails/batch', { body, headers: { 'x-batch-validation': 'permissive' } });
    expect(permissive.status).toBe(200);
    expect(permissive.body.data).toHaveLength(3);
    expect(permissive.body.errors).toEqual([{ index: 3, message: tooLarge }]);
    expect(await stored()).toBe(before + 3);
    const sizes = await Promise.all(permissive.body.data.map(async (d: { id: string }) => (await storedBytes(d.id)).map((b) => b.byteLength)));
    expect(sizes).toEqual([[15 * MiB], [15 * MiB], [2]]);
  });

  test('each email keeps its own 40 MB limit in a batch', async () => {
    // 30 MiB fetched is the whole 40 MB: with 3 more bytes given, the email passes it.
    const before = await stored();
    const r = await p.api('POST', '/emails/batch', {
      body: [
        {
          from: 'billing@example.test',
          to: 'over@dest.test',
          subject: 'Over',
          text: 'x',
          attachments: [{ content: 'AAAA' }, { path: `http://127.0.0.1:${files.port}/zeros/30` }],
        },
      ],
    });
    expect([r.status, r.body.message]).toEqual([422, '[0] Invalid `attachments` field: attachments may total at most 40 MB after base64 encoding.']);
    expect(await stored()).toBe(before);
  });
});

describe('POST /email: the singular path of the SDK before 2.0 (docs/api.md §2 item 17)', () => {
  test('a plain HTTP client sends through it as through POST /emails, with a sending key', async () => {
    const key = (await p.resend.apiKeys.create({ name: 'legacy sender', permission: 'sending_access' })).data!.token;
    const r = await fetch(`${p.url}/email`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ from: 'hello@example.test', to: 'plain@dest.test', subject: 'Plain', text: 'Hi' }),
    });
    expect(r.status).toBe(200);
    const { id } = (await r.json()) as { id: string };
    expect((await received(id)).dkim).toBe('pass');
    // Bad input is refused the same way.
    const bad = await p.api('POST', '/email', { body: { from: 'hello@example.test', subject: 's', text: 't' }, key });
    expect([bad.status, bad.body.name]).toEqual([422, 'missing_required_field']);
  });

  test('the body `resend.sendEmail` of SDK 0.x–1.x sent, a Buffer attachment included', async () => {
    const report = binary(5000);
    // As 1.1.0's sendEmail built it: these fields, snake_case, undefined ones dropped by JSON.stringify.
    const data = {
      from: 'Reports <reports@example.test>',
      to: ['old@dest.test'],
      bcc: undefined,
      cc: 'cc-old@dest.test',
      reply_to: 'help@example.test',
      subject: 'Monthly report',
      text: 'Attached.',
      html: undefined,
      attachments: [{ filename: 'report.csv', content: report }],
      tags: [{ name: 'kind', value: 'report' }],
    };
    const r = await fetch(`${p.url}/email`, {
      method: 'POST',
      headers: { authorization: `Bearer ${p.apiKey}`, 'content-type': 'application/json', 'user-agent': 'resend-node:1.1.0' },
      body: JSON.stringify(data),
    });
    expect(r.status).toBe(200);
    const { id } = (await r.json()) as { id: string };
    const got = await received(id);
    expect(got.dkim).toBe('pass');
    expect(got.attachments[0]!.content.equals(report)).toBe(true);
    expect((await p.api('GET', `/emails/${id}`)).body).toMatchObject({ to: ['old@dest.test'], cc: ['cc-old@dest.test'], reply_to: ['help@example.test'] });
  });

  test('one idempotency scope with POST /emails; not in the OpenAPI document', async () => {
    const body = { from: 'hello@example.test', to: 'idem-legacy@dest.test', subject: 'Once', text: 'x' };
    const headers = { 'idempotency-key': 'legacy-path-1' };
    const first = await p.api('POST', '/email', { body, headers });
    const again = await p.api('POST', '/emails', { body, headers });
    expect(first.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);
    const doc = (await p.api('GET', '/openapi/json', { key: null })).body;
    expect(Object.keys(doc.paths)).toContain('/emails');
    expect(Object.keys(doc.paths)).not.toContain('/email');
  });
});
