// TLS towards MX hosts (docs/mail.md, RFC 3207): STARTTLS whenever offered (certificates unverified:
// the alternative is plain text), plain text when it is not or the handshake fails, and a domain
// with `tls: enforced` never sends in plain text — its mail waits (delayed) instead.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { startPosthorn } from '../helpers/posthorn';
import { startDnsServer, type TestDns } from '../helpers/dns';
import { startSink, type Sink } from '../helpers/sink';
import { verifiedDomain, queueEmail, waitForEmail, settled, eventTypes } from '../helpers/emails';

let dns: TestDns;

beforeAll(async () => {
  dns = await startDnsServer();
  dns.zone.set('dest.test', 'MX', [{ exchange: 'mx.dest.test', priority: 10 }]);
  dns.zone.set('mx.dest.test', 'A', ['127.0.0.1']);
});
afterAll(() => dns.close());

/** A Posthorn delivering to `sink`, with an opportunistic and an enforced sending domain. */
async function setup(sink: Sink) {
  const p = await startPosthorn({ 'dns.servers': [dns.address], 'delivery.mx_port': sink.port, 'security.allow_private_networks': true });
  const open = await verifiedDomain(p, 'open.test');
  const strict = await verifiedDomain(p, 'strict.test', { tls: 'enforced' });
  return { p, open, strict };
}

describe('a destination offering STARTTLS', () => {
  let sink: Sink;
  let env: Awaited<ReturnType<typeof setup>>;
  beforeAll(async () => {
    sink = await startSink({ tls: 'starttls' });
    env = await setup(sink);
  });
  afterAll(async () => {
    await env.p.stop();
    await sink.close();
  });

  test('opportunistic and enforced domains both deliver over TLS', async () => {
    const a = await queueEmail(env.p.svc, env.open, { to: ['a@dest.test'] });
    const b = await queueEmail(env.p.svc, env.strict, { to: ['b@dest.test'] });
    expect((await waitForEmail(env.p.svc, a, settled)).recipients).toEqual({ 'a@dest.test': 'delivered' });
    expect((await waitForEmail(env.p.svc, b, settled)).recipients).toEqual({ 'b@dest.test': 'delivered' });
    expect(sink.to('a@dest.test')[0]!.secure).toBe(true);
    expect(sink.to('b@dest.test')[0]!.secure).toBe(true);
  });
});

describe('a destination without STARTTLS', () => {
  let sink: Sink;
  let env: Awaited<ReturnType<typeof setup>>;
  beforeAll(async () => {
    sink = await startSink({ tls: 'none' });
    env = await setup(sink);
  });
  afterAll(async () => {
    await env.p.stop();
    await sink.close();
  });

  test('opportunistic: delivered in plain text', async () => {
    const email = await queueEmail(env.p.svc, env.open, { to: ['plain@dest.test'] });
    expect((await waitForEmail(env.p.svc, email, settled)).recipients).toEqual({ 'plain@dest.test': 'delivered' });
    expect(sink.to('plain@dest.test')[0]!.secure).toBe(false);
  });

  test('enforced: not delivered, delayed with a TLS error, still queued', async () => {
    const email = await queueEmail(env.p.svc, env.strict, { to: ['secret@dest.test'] });
    await waitForEmail(env.p.svc, email, (e) => e.recipients['secret@dest.test'] === 'delayed');
    expect(await eventTypes(env.p.svc, email)).toEqual(['email.queued', 'email.sent', 'email.delivery_delayed']);
    const [entry] = await env.p.svc.store.queue.entriesOf(email.team_id, email.id);
    expect(entry!.last_error).toStartWith('451 4.7.0 mx.dest.test[127.0.0.1]');
    expect(entry!.last_error).toContain('TLS required');
    expect(sink.to('secret@dest.test')).toEqual([]);
  });
});

describe('a destination whose TLS handshake fails', () => {
  let sink: Sink;
  let env: Awaited<ReturnType<typeof setup>>;
  beforeAll(async () => {
    // STARTTLS is offered, but only with a protocol version the client refuses.
    sink = await startSink({ tls: 'starttls', tlsOptions: { minVersion: 'TLSv1', maxVersion: 'TLSv1' } });
    env = await setup(sink);
  });
  afterAll(async () => {
    await env.p.stop();
    await sink.close();
  });

  test('opportunistic: reconnects and delivers in plain text', async () => {
    const email = await queueEmail(env.p.svc, env.open, { to: ['fallback@dest.test'] });
    expect((await waitForEmail(env.p.svc, email, settled)).recipients).toEqual({ 'fallback@dest.test': 'delivered' });
    expect(sink.to('fallback@dest.test')[0]!.secure).toBe(false);
  });

  test('enforced: not delivered', async () => {
    const email = await queueEmail(env.p.svc, env.strict, { to: ['never@dest.test'] });
    await waitForEmail(env.p.svc, email, (e) => e.recipients['never@dest.test'] === 'delayed');
    expect((await env.p.svc.store.queue.entriesOf(email.team_id, email.id))[0]!.last_error).toContain('TLS required by the sending domain');
    expect(sink.to('never@dest.test')).toEqual([]);
  });
});
