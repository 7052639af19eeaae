import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { BatchAttachments, MAX_BATCH_ATTACHMENTS_BASE64, resolveAttachments } from '../../src/sending/attachments';
import { MAX_ATTACHMENTS_BASE64 } from '../../src/sending/validate';
import { ApiError } from '../../src/errors';
import type { AttachmentInput } from '../../src/sending/types';

const item = (patch: Partial<AttachmentInput>): AttachmentInput => ({
  filename: null,
  content: null,
  path: null,
  content_type: null,
  content_id: null,
  ...patch,
});
const b64 = (text: string) => Buffer.from(text).toString('base64');
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

async function failure(p: Promise<unknown>) {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    return (e as ApiError).toJSON();
  }
  throw new Error('expected an ApiError');
}

let server: ReturnType<typeof Bun.serve>;
let base: string;
// 30 MB: 40 MB once base64 encoded, the whole budget.
const BIG = 30 * 1024 * 1024;

beforeAll(() => {
  server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const { pathname } = new URL(req.url);
      if (pathname === '/files/report.pdf') return new Response('%PDF-1.4 fake', { headers: { 'content-type': 'application/octet-stream' } });
      if (pathname === '/files/data') return new Response('{"a":1}', { headers: { 'content-type': 'application/json; charset=utf-8' } });
      if (pathname === '/files/plain') return new Response('raw');
      if (pathname === '/files/weird') return new Response('?', { headers: { 'content-type': 'garbage' } });
      if (pathname === '/files/Quarterly%20Report.csv') return new Response('a,b\n1,2\n', { headers: { 'content-type': 'text/plain' } });
      if (pathname === '/files/') return new Response('index', { headers: { 'content-type': 'text/html' } });
      if (pathname === '/files/big.bin') return new Response(new Uint8Array(BIG));
      if (pathname === '/moved') return Response.redirect(`${base}/files/report.pdf`, 302);
      return new Response('not here', { status: 404 });
    },
  });
  base = `http://127.0.0.1:${server.port}`;
});

afterAll(() => {
  server.stop(true);
});

const allow = { allowPrivate: true };

describe('content', () => {
  test('base64 is decoded; the type comes from the field, then the filename, then octet-stream', async () => {
    const out = await resolveAttachments(
      [
        item({ filename: 'hello.txt', content: b64('hello') }),
        item({ filename: 'logo.png', content: b64('png'), content_id: 'logo' }),
        item({ filename: 'data.bin', content: b64('x'), content_type: 'application/x-custom' }),
        item({ filename: 'README', content: b64('r') }),
        item({ content: 'aGV5\r\nIQ' }),
      ],
      { allowPrivate: false },
    );
    expect(out.map((a) => [a.filename, text(a.content), a.content_type, a.content_id])).toEqual([
      ['hello.txt', 'hello', 'text/plain', null],
      ['logo.png', 'png', 'image/png', 'logo'],
      ['data.bin', 'x', 'application/x-custom', null],
      ['README', 'r', 'application/octet-stream', null],
      [null, 'hey!', 'application/octet-stream', null],
    ]);
  });
});

describe('a Buffer', () => {
  test('its bytes are the attachment, as given', async () => {
    const bytes = new Uint8Array([0, 1, 254, 255]);
    const [a] = await resolveAttachments([item({ filename: 'b.bin', content: bytes })], allow);
    expect(a).toMatchObject({ filename: 'b.bin', content_type: 'application/octet-stream' });
    expect([...a!.content]).toEqual([0, 1, 254, 255]);
  });
});

describe('path', () => {
  test('fetched from the URL: filename from its path, type from the extension before the server', async () => {
    const [pdf, json, plain, csv, index, moved] = await resolveAttachments(
      [
        item({ path: `${base}/files/report.pdf` }),
        item({ path: `${base}/files/data?x=1` }),
        item({ path: `${base}/files/plain`, filename: 'given.txt' }),
        item({ path: `${base}/files/Quarterly%20Report.csv` }),
        item({ path: `${base}/files/` }),
        item({ path: `${base}/moved`, content_id: 'doc' }),
      ],
      allow,
    );
    expect(pdf).toMatchObject({ filename: 'report.pdf', content_type: 'application/pdf' });
    expect(text(pdf.content)).toBe('%PDF-1.4 fake');
    expect(json).toMatchObject({ filename: 'data', content_type: 'application/json; charset=utf-8' });
    expect(plain).toMatchObject({ filename: 'given.txt', content_type: 'text/plain' });
    expect(csv).toMatchObject({ filename: 'Quarterly Report.csv', content_type: 'text/csv' });
    expect(index).toMatchObject({ filename: null, content_type: 'text/html' });
    expect(moved).toMatchObject({ filename: 'report.pdf', content_type: 'application/pdf', content_id: 'doc' });
  });

  test('a served type that is not a MIME type falls back to octet-stream', async () => {
    const [a] = await resolveAttachments([item({ path: `${base}/files/weird` })], allow);
    expect(a).toMatchObject({ filename: 'weird', content_type: 'application/octet-stream' });
  });

  test('404 → invalid_attachment naming the URL', async () => {
    const url = `${base}/files/missing.pdf`;
    expect(await failure(resolveAttachments([item({ content: b64('ok') }), item({ path: url })], allow))).toEqual({
      statusCode: 422,
      name: 'invalid_attachment',
      message: `Invalid \`attachments[1].path\` field: could not fetch \`${url}\`: the server answered 404.`,
    });
  });

  test('a private address is refused unless allowed', async () => {
    const url = `${base}/files/report.pdf`;
    expect(await failure(resolveAttachments([item({ path: url })], { allowPrivate: false }))).toEqual({
      statusCode: 422,
      name: 'invalid_attachment',
      message: `Invalid \`attachments[0].path\` field: could not fetch \`${url}\`: the host \`127.0.0.1\` resolves to a private or loopback address (127.0.0.1).`,
    });
  });

  test('a connection failure', async () => {
    const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') });
    const url = `http://127.0.0.1:${probe.port}/gone.pdf`;
    probe.stop(true);
    const err = await failure(resolveAttachments([item({ path: url })], allow));
    expect(err.name).toBe('invalid_attachment');
    expect(err.message).toStartWith(`Invalid \`attachments[0].path\` field: could not fetch \`${url}\`: the connection failed`);
  });
});

describe('the 40 MB limit counts fetched attachments too', () => {
  const tooLarge = {
    statusCode: 422,
    name: 'validation_error',
    message: 'Invalid `attachments` field: attachments may total at most 40 MB after base64 encoding.',
  };

  test('a fetch that fills the budget exactly is fine', async () => {
    const [a] = await resolveAttachments([item({ path: `${base}/files/big.bin` })], allow);
    expect(a.content.byteLength).toBe(BIG);
    expect(4 * Math.ceil(BIG / 3)).toBe(MAX_ATTACHMENTS_BASE64);
  });

  test('a fetch over what the other attachments left', async () => {
    expect(await failure(resolveAttachments([item({ content: b64('one more byte') }), item({ path: `${base}/files/big.bin` })], allow))).toEqual(tooLarge);
  });
});

describe('the attachments of a batch (docs/api.md §7.2)', () => {
  const batchTooLarge = {
    statusCode: 422,
    name: 'validation_error',
    message: 'Invalid `attachments` field: the attachments of a batch may total at most 50 MB after base64 encoding.',
  };
  /** Has `p` settled once everything already due has run? */
  const settled = async (p: Promise<unknown>) => {
    let done = false;
    p.then(() => (done = true));
    await new Promise((r) => setImmediate(r));
    return done;
  };

  test('an item spends after the items before it have ended, in their order', async () => {
    const batch = new BatchAttachments(3);
    const [first, second, third] = [batch.share(0), batch.share(1), batch.share(2)];
    expect(await settled(first.ready)).toBe(true);
    batch.end(1);
    expect(await settled(third.ready)).toBe(false);
    expect(await settled(second.ready)).toBe(false);
    batch.end(0);
    expect(await settled(second.ready)).toBe(true);
    expect(await settled(third.ready)).toBe(true);
  });

  test('one budget for the request: a fetch bounded by what the items before left', async () => {
    const batch = new BatchAttachments(2);
    // 30 MB fetched is 40 MB of the 50 in base64: the next item has 10 left, less than its own 40.
    await resolveAttachments([item({ path: `${base}/files/big.bin` })], { ...allow, share: batch.share(0) });
    batch.end(0);
    expect(batch.share(1).left()).toBe(MAX_BATCH_ATTACHMENTS_BASE64 - MAX_ATTACHMENTS_BASE64);
    expect(await failure(resolveAttachments([item({ path: `${base}/files/big.bin` })], { ...allow, share: batch.share(1) }))).toEqual(batchTooLarge);
    expect(await failure(resolveAttachments([item({ content: 'A'.repeat(12 * 1024 * 1024) })], { ...allow, share: batch.share(1) }))).toEqual(batchTooLarge);
  });
});
