// Temporary failures (docs/mail.md, docs/api.md §7.8): 4xx → retried on `delivery.retry_schedule`,
// `email.delivery_delayed` once per recipient, Transient bounce when `delivery.retry_window` is
// over; the next attempt time is persisted before each attempt, so an interrupted attempt is retried
// after a restart.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { createServer, type Server, type Socket } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPosthorn, type Running } from '../helpers/posthorn';
import { startDnsServer, type TestDns } from '../helpers/dns';
import { startSink, type Sink } from '../helpers/sink';
import { verifiedDomain, queueEmail, waitForEmail, settled, eventsOf, eventTypes } from '../helpers/emails';
import { until } from '../helpers/wait';
import type { DomainRec } from '../../src/store';

let dns: TestDns;
let sink: Sink;

beforeAll(async () => {
  dns = await startDnsServer();
  sink = await startSink();
  dns.zone.set('dest.test', 'MX', [{ exchange: 'mx.dest.test', priority: 10 }]);
  dns.zone.set('mx.dest.test', 'A', ['127.0.0.1']);
});

afterAll(async () => {
  await sink.close();
  await dns.close();
});

describe('retries within the window', () => {
  let p: Running;
  let sender: DomainRec;

  beforeAll(async () => {
    p = await startPosthorn({
      'dns.servers': [dns.address],
      'delivery.mx_port': sink.port,
      'security.allow_private_networks': true,
      'delivery.retry_schedule': ['200ms'],
    });
    sender = await verifiedDomain(p, 'example.test');
  });
  afterAll(() => p.stop());

  test('4xx, 4xx, then 2xx: delivery_delayed once, then delivered', async () => {
    sink.respond('slow@dest.test', { code: 450, message: '4.2.1 mailbox busy, try later' }, { times: 2 });
    const email = await queueEmail(p.svc, sender, { to: ['slow@dest.test'] });
    const done = await waitForEmail(p.svc, email, settled);
    expect(done.recipients).toEqual({ 'slow@dest.test': 'delivered' });
    expect(await eventTypes(p.svc, email)).toEqual(['email.queued', 'email.sent', 'email.delivery_delayed', 'email.delivered']);
    const delayed = (await eventsOf(p.svc, email)).find((e) => e.type === 'email.delivery_delayed')!;
    expect(delayed.data.to).toEqual(['slow@dest.test']);
    expect(sink.to('slow@dest.test')).toHaveLength(1);
    expect(await p.svc.store.queue.entriesOf(email.team_id, email.id)).toEqual([]);
  });

  test('a DNS failure is temporary: delayed, then delivered once the lookup works', async () => {
    dns.zone.set('flaky.test', 'MX', [{ exchange: 'mx.dest.test', priority: 10 }]);
    dns.zone.fail('flaky.test', 'SERVFAIL');
    const email = await queueEmail(p.svc, sender, { to: ['ann@flaky.test'] });
    await waitForEmail(p.svc, email, (e) => e.recipients['ann@flaky.test'] === 'delayed');
    const entry = (await p.svc.store.queue.entriesOf(email.team_id, email.id))[0]!;
    expect(entry.last_error).toStartWith('451 4.4.3 DNS lookup of flaky.test failed');
    dns.zone.fail('flaky.test', null);
    const done = await waitForEmail(p.svc, email, settled);
    expect(done.recipients).toEqual({ 'ann@flaky.test': 'delivered' });
    expect((await eventTypes(p.svc, email)).filter((t) => t === 'email.delivery_delayed')).toHaveLength(1);
  });

  test('an address lookup that fails with nothing found is temporary, not "no such host"', async () => {
    // The implicit MX: no MX, no A, and AAAA failing (SERVFAIL) — unknown, so not a bounce.
    dns.zone.set('half.test', 'TXT', ['v=spf1 -all']);
    dns.zone.fail('half.test', 'SERVFAIL', 'AAAA');
    const email = await queueEmail(p.svc, sender, { to: ['bo@half.test'] });
    const delayed = await waitForEmail(p.svc, email, (e) => e.recipients['bo@half.test'] !== 'pending');
    expect(delayed.recipients['bo@half.test']).toBe('delayed');
    expect(await p.svc.store.suppressions.find('email', 'bo@half.test', email.team_id)).toBeUndefined();
    dns.zone.fail('half.test', null, 'AAAA');
  });

  test('only the deferred recipient is retried; the delivered one gets the message once', async () => {
    sink.respond('later@dest.test', { code: 451, message: '4.3.0 local problem' }, { times: 1 });
    const email = await queueEmail(p.svc, sender, { to: ['now@dest.test', 'later@dest.test'] });
    const done = await waitForEmail(p.svc, email, settled);
    expect(done.recipients).toEqual({ 'now@dest.test': 'delivered', 'later@dest.test': 'delivered' });
    expect(sink.to('now@dest.test').filter((m) => m.raw.includes(email.id))).toHaveLength(1);
    expect(
      sink
        .to('later@dest.test')
        .filter((m) => m.raw.includes(email.id))
        .map((m) => m.rcptTo),
    ).toEqual([['later@dest.test']]);
  });
});

describe('retry window over', () => {
  let p: Running;
  let sender: DomainRec;

  beforeAll(async () => {
    p = await startPosthorn({
      'dns.servers': [dns.address],
      'delivery.mx_port': sink.port,
      'security.allow_private_networks': true,
      'delivery.retry_schedule': ['100ms'],
      'delivery.retry_window': '500ms',
    });
    sender = await verifiedDomain(p, 'example.test');
  });
  afterAll(() => p.stop());

  test('a recipient still deferred when the window ends bounces Transient, and is not suppressed', async () => {
    sink.respond('quota@dest.test', { code: 452, message: '4.2.2 mailbox over quota' });
    const email = await queueEmail(p.svc, sender, { to: ['quota@dest.test'] });
    const done = await waitForEmail(p.svc, email, settled);
    expect(done.recipients).toEqual({ 'quota@dest.test': 'bounced' });
    const types = await eventTypes(p.svc, email);
    expect(types.filter((t) => t === 'email.delivery_delayed')).toHaveLength(1);
    expect(types.at(-1)).toBe('email.bounced');
    const bounced = (await eventsOf(p.svc, email)).at(-1)!;
    expect(bounced.data.bounce).toMatchObject({ type: 'Transient', subType: 'MailboxFull', diagnosticCode: ['smtp; 452 4.2.2 mailbox over quota'] });
    expect((await p.api('GET', `/suppressions/${encodeURIComponent('quota@dest.test')}`)).status).toBe(404);
    expect(await p.svc.store.queue.entriesOf(email.team_id, email.id)).toEqual([]);
    sink.respond('quota@dest.test', null);
  });

  test('an unreachable destination bounces Transient too', async () => {
    dns.zone.set('down.test', 'MX', [{ exchange: 'mx.down.test', priority: 10 }]);
    dns.zone.set('mx.down.test', 'A', ['127.0.0.2']); // nothing listens there
    const email = await queueEmail(p.svc, sender, { to: ['ann@down.test'] });
    await waitForEmail(p.svc, email, settled);
    const bounced = (await eventsOf(p.svc, email)).at(-1)!;
    expect(bounced.type).toBe('email.bounced');
    expect(bounced.data.bounce).toMatchObject({ type: 'Transient', subType: 'General' });
    expect((bounced.data.bounce as { diagnosticCode: string[] }).diagnosticCode[0]).toStartWith('smtp; 451 4.4.1 mx.down.test[127.0.0.2]');
  });
});

describe('persist before acting', () => {
  test('an attempt interrupted by a shutdown is already recorded, and the entry is retried after a restart', async () => {
    // A host that accepts connections and never greets: the attempt stays in flight.
    const sockets = new Set<Socket>();
    const silent: Server = createServer((s) => sockets.add(s));
    await new Promise<void>((r) => silent.listen(sink.port, '127.0.0.3', () => r()));
    dns.zone.set('stall.test', 'MX', [{ exchange: 'mx.stall.test', priority: 10 }]);
    dns.zone.set('mx.stall.test', 'A', ['127.0.0.3']);

    const dataDir = mkdtempSync(join(tmpdir(), 'posthorn-restart-'));
    const p = await startPosthorn({
      data_dir: dataDir,
      'dns.servers': [dns.address],
      'delivery.mx_port': sink.port,
      'security.allow_private_networks': true,
      'delivery.retry_schedule': ['1h'],
    });
    const sender = await verifiedDomain(p, 'example.test');
    const email = await queueEmail(p.svc, sender, { to: ['ann@stall.test'] });
    // Bounded wait for the connection to arrive: the attempt is under way.
    await until(() => sockets.size > 0, 'a connection to the silent host', 10_000);
    // Before any reply: the entry already sits at its next attempt time, email.sent has fired.
    const [entry] = await p.svc.store.queue.entriesOf(email.team_id, email.id);
    expect(entry).toMatchObject({ attempts: 1, recipients: ['ann@stall.test'] });
    expect(entry!.first_attempt_at).not.toBeNull();
    expect((await p.svc.store.queue.nextDue())! - Date.now()).toBeGreaterThan(30 * 60_000);
    const mid = (await p.svc.store.emails.get(email.team_id, email.id))!;
    expect(mid.last_event).toBe('sent');
    expect(mid.sent_at).not.toBeNull();

    // Shut down without waiting for the attempt: it is abandoned, its entry stays.
    await p.svc.backOffice.stop(50);
    await p.stop();
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => silent.close(() => r()));

    // Restart on the same data. The entry's attempt was in flight in the process that is gone, so
    // the engine makes it due at start (resumeInterrupted) rather than at its retry time an hour out.
    dns.zone.set('mx.stall.test', 'A', ['127.0.0.1']);
    const q = await startPosthorn({ data_dir: dataDir, 'dns.servers': [dns.address], 'delivery.mx_port': sink.port, 'security.allow_private_networks': true });
    const done = await waitForEmail(q.svc, email, settled);
    expect(done.recipients).toEqual({ 'ann@stall.test': 'delivered' });
    expect(await eventTypes(q.svc, email)).toEqual(['email.queued', 'email.sent', 'email.delivered']);
    await q.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
});
