import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { assertPublicUrl, GuardError, isPrivateAddress, safeFetch } from '../../src/net/guard';

/** The GuardError a promise rejects with. */
async function refusal(p: Promise<unknown>): Promise<GuardError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(GuardError);
    return e as GuardError;
  }
  throw new Error('expected a GuardError');
}

describe('isPrivateAddress', () => {
  test.each([
    '127.0.0.1',
    '127.255.255.254',
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '100.127.255.255',
    '0.0.0.0',
    '0.1.2.3',
    '224.0.0.1',
    '239.255.255.250',
    '255.255.255.255',
    '::',
    '::1',
    'fc00::1',
    'fd12:3456::1',
    'fe80::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.1.2.3',
    '::ffff:169.254.169.254',
    '64:ff9b::7f00:1',
    '64:ff9b::10.0.0.1',
    '2002:7f00:1::',
    '2002:c0a8:101::1',
    // Issue 34, finding 9: every spelling of an IPv4 address inside IPv6 (RFC 4291 §2.5.5).
    '::127.0.0.1', // IPv4-compatible (deprecated, still parsed)
    '::7f00:1',
    '::10.0.0.1',
    '::169.254.169.254',
    '::ffff:0:7f00:1', // SIIT IPv4-translated (RFC 6145 / 2765 ::ffff:0:0/96)
    '::ffff:0:127.0.0.1',
    '0:0:0:0:0:ffff:7f00:1',
    '0000:0000:0000:0000:0000:ffff:127.0.0.1',
    '::FFFF:7F00:0001',
    '::ffff:0.0.0.0',
    '64:ff9b::a9fe:a9fe', // NAT64 of 169.254.169.254
    '64:ff9b:1::7f00:1', // local-use NAT64 (RFC 8215)
    '2001::1', // Teredo (RFC 4380): the server and client addresses are obfuscated IPv4
    'fe80::1%eth0',
    'not an ip',
  ])('%p is not public', (ip) => {
    expect(isPrivateAddress(ip)).toBe(true);
  });

  test.each(['93.184.216.34', '8.8.8.8', '100.128.0.1', '172.32.0.1', '11.0.0.1', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::'])(
    '%p is public',
    (ip) => {
      expect(isPrivateAddress(ip)).toBe(false);
    },
  );
});

describe('assertPublicUrl', () => {
  test.each([
    'http://127.0.0.1/',
    'http://127.0.0.1:8080/x',
    'https://10.0.0.5/file.pdf',
    'http://169.254.169.254/latest/meta-data/',
    'http://[::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::127.0.0.1]/',
    'http://[::ffff:0:7f00:1]/',
    'http://[::ffff:0:a9fe:a9fe]/',
    'http://[0:0:0:0:0:ffff:7f00:1]/',
    'http://[::7f00:1]:8080/',
    'http://[fd00::1]:3000/',
    'http://0.0.0.0/',
    'http://2130706433/', // 127.0.0.1 as one number
    'http://0x7f.1/',
    'http://localhost/',
    'http://LOCALHOST:9/a',
  ])('refuses %p', async (url) => {
    const e = await refusal(assertPublicUrl(url, false));
    expect(e.code).toBe('forbidden_address');
    expect(e.message).toContain('resolves to a private or loopback address');
  });

  test.each([
    'ftp://files.example.test/a',
    'file:///etc/passwd',
    'gopher://127.0.0.1/',
    'data:text/plain,hi',
    'javascript:alert(1)',
    'not a url',
    '//127.0.0.1/',
  ])('refuses the scheme of %p', async (url) => {
    expect((await refusal(assertPublicUrl(url, true))).code).toBe('invalid_url');
  });

  test('allows loopback when private networks are allowed', async () => {
    expect(await assertPublicUrl('http://127.0.0.1:8080/x', true)).toMatchObject({ address: '127.0.0.1', family: 4 });
    expect(await assertPublicUrl('http://[::1]/', true)).toMatchObject({ address: '::1', family: 6 });
    expect(['127.0.0.1', '::1']).toContain((await assertPublicUrl('http://localhost/', true)).address);
  });

  test('a public address literal passes without any lookup', async () => {
    expect(await assertPublicUrl('https://93.184.216.34/a.pdf', false)).toMatchObject({ address: '93.184.216.34', family: 4 });
  });
});

describe('safeFetch against a loopback server', () => {
  let server: ReturnType<typeof Bun.serve>;
  let base: string;
  const seen: { path: string; host: string | null; method: string }[] = [];

  beforeAll(() => {
    server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      async fetch(req) {
        const url = new URL(req.url);
        seen.push({ path: url.pathname, host: req.headers.get('host'), method: req.method });
        switch (url.pathname) {
          case '/hello':
            return new Response('hello', { headers: { 'content-type': 'text/plain' } });
          case '/big':
            return new Response('x'.repeat(10_000));
          case '/stream':
            // No Content-Length: the limit must hold while streaming.
            return new Response(
              new ReadableStream({
                async pull(c) {
                  c.enqueue(new Uint8Array(4096));
                  await Bun.sleep(1);
                },
              }),
            );
          case '/slow':
            return new Response(
              new ReadableStream({
                async start(c) {
                  c.enqueue(new TextEncoder().encode('partial'));
                  await Bun.sleep(5_000);
                  c.close();
                },
              }),
            );
          case '/hang':
            await Bun.sleep(5_000);
            return new Response('late');
          case '/redirect':
            return Response.redirect(`${base}/hello`, 302);
          case '/relative':
            return new Response(null, { status: 301, headers: { location: '/hello' } });
          case '/loop':
            return Response.redirect(`${base}/loop`, 302);
          case '/to-file':
            return new Response(null, { status: 302, headers: { location: 'file:///etc/passwd' } });
          case '/see-other':
            return new Response(null, { status: 303, headers: { location: '/echo' } });
          case '/echo':
            return new Response(`${req.method} ${await req.text()}`);
          case '/missing':
            return new Response('no', { status: 404 });
        }
        return new Response('?', { status: 500 });
      },
    });
    base = `http://127.0.0.1:${server.port}`;
  });

  afterAll(() => {
    server.stop(true);
  });

  const opts = { allowPrivate: true, maxBytes: 1_000, timeoutMs: 5_000 };

  test('refuses loopback unless allowed', async () => {
    const e = await refusal(safeFetch(`${base}/hello`, { ...opts, allowPrivate: false }));
    expect(e.code).toBe('forbidden_address');
    expect(seen.some((s) => s.path === '/hello')).toBe(false);
  });

  test('fetches when allowed: status, headers and bytes', async () => {
    const res = await safeFetch(`${base}/hello`, opts);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain');
    expect(new TextDecoder().decode(res.bytes)).toBe('hello');
    expect(res.url).toBe(`${base}/hello`);
  });

  test('connects to the vetted address and sends the original Host', async () => {
    const res = await safeFetch(`http://localhost:${server.port}/hello`, opts);
    expect(new TextDecoder().decode(res.bytes)).toBe('hello');
    expect(seen.at(-1)).toEqual({ path: '/hello', host: `localhost:${server.port}`, method: 'GET' });
  });

  test('non-2xx answers are returned, not thrown', async () => {
    const res = await safeFetch(`${base}/missing`, opts);
    expect(res.status).toBe(404);
  });

  test('byte limit from Content-Length', async () => {
    const e = await refusal(safeFetch(`${base}/big`, opts));
    expect(e.code).toBe('too_large');
    expect(e.message).toBe('the response is larger than 1000 bytes');
    expect((await safeFetch(`${base}/big`, { ...opts, maxBytes: 10_000 })).bytes.byteLength).toBe(10_000);
  });

  test('byte limit while streaming', async () => {
    expect((await refusal(safeFetch(`${base}/stream`, { ...opts, maxBytes: 100_000 }))).code).toBe('too_large');
  });

  test('total timeout, before the headers and during the body', async () => {
    const e = await refusal(safeFetch(`${base}/hang`, { ...opts, timeoutMs: 200 }));
    expect(e.code).toBe('timeout');
    expect(e.message).toBe('no complete answer within 0.2 s');
    expect((await refusal(safeFetch(`${base}/slow`, { ...opts, timeoutMs: 200 }))).code).toBe('timeout');
  });

  test('follows redirects itself, absolute and relative', async () => {
    const res = await safeFetch(`${base}/redirect`, opts);
    expect(new TextDecoder().decode(res.bytes)).toBe('hello');
    expect(res.url).toBe(`${base}/hello`);
    expect(new TextDecoder().decode((await safeFetch(`${base}/relative`, opts)).bytes)).toBe('hello');
  });

  test('at most 3 redirects', async () => {
    const before = seen.filter((s) => s.path === '/loop').length;
    const e = await refusal(safeFetch(`${base}/loop`, opts));
    expect(e.code).toBe('redirects');
    expect(e.message).toBe('more than 3 redirects');
    expect(seen.filter((s) => s.path === '/loop').length - before).toBe(4);
  });

  test('maxRedirects 0 returns the redirect itself', async () => {
    const res = await safeFetch(`${base}/redirect`, { ...opts, maxRedirects: 0 });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(`${base}/hello`);
  });

  test('every hop is vetted again', async () => {
    // A loopback start cannot show a public→private redirect; a scheme the guard refuses can.
    const e = await refusal(safeFetch(`${base}/to-file`, opts));
    expect(e.code).toBe('invalid_url');
    expect(seen.at(-1)?.path).toBe('/to-file');
  });

  test('POST: 303 continues as GET without a body', async () => {
    const res = await safeFetch(`${base}/see-other`, { ...opts, method: 'POST', body: 'payload', headers: { 'content-type': 'text/plain' } });
    expect(new TextDecoder().decode(res.bytes)).toBe('GET ');
    const direct = await safeFetch(`${base}/echo`, { ...opts, method: 'POST', body: 'payload' });
    expect(new TextDecoder().decode(direct.bytes)).toBe('POST payload');
  });

  test('a closed port is a network error', async () => {
    const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') });
    const port = probe.port;
    probe.stop(true);
    expect((await refusal(safeFetch(`http://127.0.0.1:${port}/`, opts))).code).toBe('network');
  });
});
