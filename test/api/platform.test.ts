// The API platform: error shapes, routing errors, body limits, rate limiting, the request log,
// health and the OpenAPI document (docs/api.md §1-§3, §6, §15).
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { Resend } from 'resend';
import { testStore } from '../helpers/postgres';
import { startPosthorn, type Running } from '../helpers/posthorn';
import { TestClock } from '../helpers/clock';
import { connect } from 'node:net';

let p: Running;
beforeAll(async () => {
  p = await startPosthorn();
});
afterAll(() => p.stop());

const shape = (status: number, name: string) => ({ statusCode: status, name, message: expect.any(String) });

describe('errors', () => {
  test('unknown route → 404 JSON; wrong method on a known path → 405 JSON', async () => {
    const a = await p.api('GET', '/nothing-here');
    expect([a.status, a.body]).toEqual([404, { statusCode: 404, name: 'not_found', message: 'Route not found' }]);
    const b = await p.api('PUT', '/domains');
    expect([b.status, b.body]).toEqual([405, shape(405, 'method_not_allowed')]);
    const c = await p.api('POST', '/api-keys/0195606f-e220-752e-89a7-834df2a74de4');
    expect(c.status).toBe(405);
    expect(a.headers.get('content-type')).toBe('application/json; charset=utf-8');
  });

  test('malformed JSON and the wrong top-level type → 400 validation_error, nothing written', async () => {
    const before = (await p.svc.store.apiKeys.all(p.creds.team_id)).length;
    for (const raw of ['{"name":', 'not json', '[{"name":"x"}]', '"name"', '42']) {
      const r = await p.api('POST', '/api-keys', { raw });
      expect([r.status, r.body]).toEqual([400, shape(400, 'validation_error')]);
    }
    expect((await p.svc.store.apiKeys.all(p.creds.team_id)).length).toBe(before);
  });

  // Found by test/api/emails-fuzz.test.ts: objects nested 12,000 deep with an Idempotency-Key ran
  // the fingerprint's recursion out of stack (500); deeper ones the request log's (400 "not valid JSON").
  test('JSON nested deeper than 64 levels → 400 validation_error, never 500', async () => {
    const nest = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
    const email = '"from":"a@example.test","to":"b@dest.test","subject":"s","text":"t"';
    // The body is level 1: 63 objects inside it make 64 levels.
    const ok = await p.api('POST', '/api-keys', { raw: `{"name":"deep","deep":${nest(63)}}` });
    expect(ok.status).toBe(201);
    const tooDeep = { statusCode: 400, name: 'validation_error', message: 'The request body is nested too deeply: at most 64 levels of arrays and objects.' };
    const requests: [string, string, Record<string, string>][] = [
      ['/api-keys', `{"name":"deep","deep":${nest(64)}}`, {}],
      ['/emails', `{${email},"deep":${nest(12_000)}}`, { 'idempotency-key': 'deep-1' }],
      ['/emails/batch', `[{${email},"deep":${'['.repeat(100_000)}${']'.repeat(100_000)}}]`, {}],
    ];
    for (const [path, raw, headers] of requests) {
      const r = await p.api('POST', path, { raw, headers });
      expect([r.status, r.body]).toEqual([400, tooDeep]);
    }
  });

  test('an empty body with Content-Type: application/json is "no body"', async () => {
    const r = await p.api('GET', '/api-keys', { raw: '' });
    expect(r.status).toBe(200);
    const d = await p.api('DELETE', '/api-keys/0195606f-e220-752e-89a7-834df2a74de4', { raw: '' });
    expect(d.status).toBe(404);
  });

  test('bodies over 50 MB → 413 validation_error, before parsing', async () => {
    const big = `{"name":"${'x'.repeat(50 * 1024 * 1024)}"}`;
    const r = await p.api('POST', '/api-keys', { raw: big });
    expect([r.status, r.body]).toEqual([413, { statusCode: 413, name: 'validation_error', message: 'Request body is too large.' }]);
  });

  test('route and method come before the body: reserved and wrong-method routes never read it', async () => {
    const form = new FormData();
    form.append('file', new Blob(['email\nann@dest.test\n']), 'contacts.csv');
    const upload = await fetch(`${p.url}/segments/metrics`, { method: 'POST', body: form, headers: { authorization: `Bearer ${p.apiKey}` } });
    expect([upload.status, await upload.json()]).toEqual([404, { statusCode: 404, name: 'not_found', message: 'Route not found' }]);
    const wrong = await fetch(`${p.url}/contacts/imports`, { method: 'PATCH', body: form, headers: { authorization: `Bearer ${p.apiKey}` } });
    expect([wrong.status, await wrong.json()]).toEqual([405, shape(405, 'method_not_allowed')]);
    const claim = await p.api('PUT', '/domains/claim', { raw: '{bad' });
    expect([claim.status, claim.body]).toEqual([405, shape(405, 'method_not_allowed')]);
    const reserved = await p.api('POST', '/segments/metrics', { raw: '{bad' });
    expect([reserved.status, reserved.body]).toEqual([404, { statusCode: 404, name: 'not_found', message: 'Route not found' }]);
    const patch = await p.api('PATCH', '/emails/batch', { raw: '{bad' });
    expect([patch.status, patch.body]).toEqual([405, shape(405, 'method_not_allowed')]);
  });

  test('broken percent-encoding in a path: 4xx, never 500', async () => {
    for (const path of ['/d/%ZZ', '/d/%', '/t/%ZZ', '/u/%ZZ', '/u/%', '/u/%E0%A4%A', '/emails/%ZZ', '/contacts/%', '/auth/invites/%ZZ']) {
      for (const method of ['GET', 'POST']) {
        const r = await p.api(method, path);
        expect(r.status).toBeGreaterThanOrEqual(400);
        expect(r.status).toBeLessThan(500);
      }
    }
    const d = await p.api('GET', '/d/%ZZ', { key: null });
    expect([d.status, d.body]).toEqual([404, { statusCode: 404, name: 'not_found', message: 'Download not found' }]);
    // An unsubscribe link that cannot be one gets the same page as any invalid link.
    const u = await fetch(`${p.url}/u/%ZZ`);
    expect([u.status, await u.text()]).toEqual([404, expect.stringContaining('This unsubscribe link is not valid')]);
  });

  test('a path id that is not a UUID → 422 invalid_parameter', async () => {
    const r = await p.api('DELETE', '/api-keys/abc');
    expect([r.status, r.body]).toEqual([422, { statusCode: 422, name: 'invalid_parameter', message: 'The `id` must be a valid UUID.' }]);
  });

  test('pagination parameters are validated', async () => {
    for (const q of ['limit=0', 'limit=101', 'limit=abc', 'limit=1.5', 'after=xyz', 'before=1', `after=${crypto.randomUUID()}&before=${crypto.randomUUID()}`]) {
      const r = await p.api('GET', `/api-keys?${q}`);
      expect([r.status, r.body.name]).toEqual([422, 'validation_error']);
    }
  });

  test('repeated slashes are collapsed: an SDK base URL with a trailing slash works', async () => {
    const sdk = new Resend(p.apiKey, { baseUrl: `${p.url}/` } as never);
    const r = await sdk.apiKeys.list();
    expect(r.error).toBeNull();
  });
});

describe('rate limiting', () => {
  test('headers on every authenticated response; 429 with retry-after past the limit', async () => {
    const clock = new TestClock();
    const q = await startPosthorn({ 'limits.requests_per_second': 3 }, { now: clock.now });
    try {
      // Unauthenticated requests never count against a team.
      for (let i = 0; i < 5; i++) expect((await q.api('GET', '/domains', { key: 'bogus' })).status).toBe(403);
      // The clock stands still: the burst lands in one 1-second window.
      clock.stop();
      const results = await Promise.all(Array.from({ length: 5 }, () => q.api('GET', '/api-keys')));
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
      const limited = results.find((r) => r.status === 429)!;
      expect(limited.body).toEqual({ statusCode: 429, name: 'rate_limit_exceeded', message: 'Too many requests. You can only make 3 requests per second.' });
      expect(limited.headers.get('retry-after')).toBe('1');
      const ok = results.find((r) => r.status === 200)!;
      expect(ok.headers.get('ratelimit-limit')).toBe('3');
      expect(ok.headers.get('ratelimit-policy')).toBe('3;w=1');
      expect(Number(ok.headers.get('ratelimit-remaining'))).toBeLessThan(3);
      expect(Number(ok.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(1);
      expect(ok.headers.get('retry-after')).toBeNull();
    } finally {
      await q.stop();
    }
  });
});

describe('request log', () => {
  test('every authenticated request is logged with bodies; attachments and tokens are redacted', async () => {
    const created = await p.api('POST', '/api-keys', {
      body: { name: 'logged', attachments: [{ filename: 'a.txt', content: Buffer.from('hello world').toString('base64') }] },
      headers: { 'user-agent': 'resend-node:6.38.0' },
    });
    expect(created.status).toBe(201);
    await p.api('GET', '/missing-route');
    const logs = await p.api('GET', '/logs?limit=5');
    expect(logs.status).toBe(200);
    expect(logs.body.object).toBe('list');
    const [miss, create] = logs.body.data as [unknown, { id: string; endpoint: string }];
    expect(miss).toEqual({
      id: expect.any(String),
      created_at: expect.any(String),
      endpoint: '/missing-route',
      method: 'GET',
      response_status: 404,
      user_agent: 'Bun/1.4.5',
      api_key_id: expect.any(String),
    });
    expect(create.endpoint).toBe('/api-keys');
    const one = await p.api('GET', `/logs/${create.id}`);
    expect(one.body.object).toBe('log');
    expect(one.body.user_agent).toBe('resend-node:6.38.0');
    expect(one.body.response_status).toBe(201);
    expect(one.body.request_body).toEqual({ name: 'logged', attachments: [{ filename: 'a.txt', content: '[11 bytes]' }] });
    expect(one.body.response_body.id).toBe(created.body.id);
    expect(one.body.response_body.token).not.toBe(created.body.token);
    expect(JSON.stringify(one.body)).not.toContain(created.body.token);
    expect((await p.api('GET', '/logs/0195606f-e220-752e-89a7-834df2a74de4')).status).toBe(404);
  });

  test('a large body (stored compressed) reads back whole', async () => {
    const names = Array.from({ length: 200 }, (_, i) => `segment number ${i} of a long request`);
    const res = await p.api('POST', '/segments', { body: { name: 'big', names } });
    const id = (await p.api('GET', '/logs?limit=2')).body.data.find((l: { endpoint: string }) => l.endpoint === '/segments').id;
    const one = await p.api('GET', `/logs/${id}`);
    expect(one.body.request_body).toEqual({ name: 'big', names });
    expect(one.body.response_status).toBe(res.status);
  });

  test('unauthenticated requests and /health are not logged; GET /logs logs itself', async () => {
    await p.api('GET', '/api-keys', { key: null });
    await p.api('GET', '/health', { key: null });
    const first = await p.api('GET', '/logs?limit=1');
    const second = await p.api('GET', '/logs?limit=1');
    expect(second.body.data[0].endpoint).toBe('/logs');
    expect(second.body.data[0].id).not.toBe(first.body.data[0].id);
  });
});

describe('public routes', () => {
  test('GET /health answers without a key (in cluster mode: the database reached, and the nodes sharing it)', async () => {
    const r = await p.api('GET', '/health', { key: null });
    const cluster = testStore() === 'pg' ? { database: 'reachable', nodes: 1 } : {};
    expect([r.status, r.body]).toEqual([200, { status: 'ok', ...cluster }]);
  });

  test('the OpenAPI document lists the resources', async () => {
    const r = await p.api('GET', '/openapi/json', { key: null });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body.paths)).toEqual(
      expect.arrayContaining([
        '/api-keys',
        '/domains',
        '/logs',
        '/templates',
        '/templates/{id_or_alias}/publish',
        '/emails/{id}/share',
        '/usage',
        '/oauth/grants',
      ]),
    );
    // Posthorn's own operating routes (docs/api.md §19.6–§19.8) are documented there too.
    const own = [
      '/queue',
      '/queue/{destination}/hold',
      '/queue/{destination}/release',
      '/queue/{destination}/retry',
      '/queue/{destination}/cancel',
      '/tls-reports',
      '/domains/{id}/dkim/rotate',
    ];
    expect(Object.keys(r.body.paths)).toEqual(expect.arrayContaining(own));
    for (const action of ['hold', 'release', 'retry', 'cancel'])
      expect(Object.keys(r.body.paths).some((path) => new RegExp(`^/emails/\\{[a-z_]+\\}/${action}$`).test(path))).toBe(true);
  });

  // Issue 34, finding 2: /openapi was a page loading a script from a CDN on the dashboard's origin.
  // An offline appliance loads code from no other host: /openapi links the JSON document.
  test('GET /openapi runs no script: it links the JSON document, which carries no-sniff', async () => {
    const page = await fetch(`${p.url}/openapi`, { redirect: 'manual' });
    const text = await page.text();
    expect(text).not.toContain('<script');
    expect(text).not.toContain('cdn.');
    expect([page.status, page.headers.get('location')]).toEqual([302, '/openapi/json']);
    const doc = await fetch(`${p.url}/openapi/json`);
    expect([doc.status, doc.headers.get('content-type'), doc.headers.get('x-content-type-options')]).toEqual([
      200,
      'application/json; charset=utf-8',
      'nosniff',
    ]);
    const body = (await doc.json()) as { openapi: string; info: { title: string }; security: unknown };
    expect([body.openapi, body.info.title, body.security]).toEqual(['3.1.2', 'Posthorn API', [{ bearer: [] }]]);
  });
});

/** One HTTP/1.1 request written by hand (fetch sets `Host` itself): the status line, headers and body. */
function rawRequest(port: number, lines: string[]): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`${[...lines, 'Connection: close'].join('\r\n')}\r\n\r\n`));
    let text = '';
    socket.on('data', (d) => (text += d));
    socket.on('error', reject);
    socket.on('end', () => {
      const [head = '', ...rest] = text.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), headers: head.toLowerCase(), body: rest.join('\r\n\r\n') });
    });
  });
}

// Issue 34, finding 3: Elysia finds the path of a URL from its 11th character, so with `Host: x` the
// front door judged `/dashboard/oauth/grants` (public) while the router ran `GET /oauth/grants`.
describe('the Host header', () => {
  const port = () => Number(new URL(p.url).port);

  test('a short Host: authentication and routing read the same path', async () => {
    const page = await rawRequest(port(), ['GET /dashboard/oauth/grants HTTP/1.1', 'Host: x']);
    expect(page.status).toBe(200);
    expect(page.headers).toContain('content-type: text/html');
    const grants = await rawRequest(port(), ['GET /oauth/grants HTTP/1.1', 'Host: x']);
    expect([grants.status, JSON.parse(grants.body).name]).toEqual([401, 'missing_api_key']);
    const keyed = await rawRequest(port(), ['GET /oauth/grants HTTP/1.1', 'Host: x', `Authorization: Bearer ${p.apiKey}`]);
    expect([keyed.status, JSON.parse(keyed.body).object]).toEqual([200, 'list']);
    for (const host of ['ab', 'abc'])
      expect((await rawRequest(port(), ['GET /dashboard/oauth/grants HTTP/1.1', `Host: ${host}`])).headers).toContain('content-type: text/html');
  });

  test('a malformed Host → 400 in the documented error shape', async () => {
    for (const host of ['a b', 'x/y', 'x@y', 'x:99999', 'evil.test/dashboard']) {
      const r = await rawRequest(port(), ['GET /oauth/grants HTTP/1.1', `Host: ${host}`, `Authorization: Bearer ${p.apiKey}`]);
      expect([host, r.status, JSON.parse(r.body)]).toEqual([
        host,
        400,
        { statusCode: 400, name: 'validation_error', message: 'The Host header is not a valid host.' },
      ]);
    }
  });
});
