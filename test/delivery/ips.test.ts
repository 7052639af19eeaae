// Sending IPs, pools and warm-up (README.md, "Sending IPs and warm-up"; src/delivery/ips.ts,
// warmup.ts): the choice of an address as a table of situations, the warm-up ramp as the clock moves,
// and end to end — loopback addresses 127.0.0.3… as the sending IPs, a sink that records the peer
// address it sees and answers per address.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { loadConfig, type SendingIpConfig } from '../../src/config';
import { notLocal, SendingIps } from '../../src/delivery/ips';
import { allowance, rolled } from '../../src/delivery/warmup';
import { startPosthorn, type Running } from '../helpers/posthorn';
import { startDnsServer, type TestDns } from '../helpers/dns';
import { startSink, type Sink } from '../helpers/sink';
import { verifiedDomain, queueEmail, waitForEmail, settled } from '../helpers/emails';
import { until } from '../helpers/wait';
import { recordComplaint } from '../../src/feedback';
import type { EmailRec } from '../../src/store';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const RAMPS = { new_daily: 150, new_growth: 1.4, established_daily: 1000, established_growth: 1.5 };
const ip = (address: string, pool = 'default', more: Partial<SendingIpConfig> = {}): SendingIpConfig => ({
  address,
  ehlo: `mta-${address.split('.').pop()}.posthorn.test`,
  pool,
  weight: 1,
  warmup: null,
  ...more,
});

describe('configuration', () => {
  test('delivery.ips from TOML tables or JSON in the environment; bad entries name their key', () => {
    const c = loadConfig({
      env: { POSTHORN_DELIVERY_IPS: '[{"address": "127.0.0.3", "ehlo": "MTA3.example.test", "pool": "b", "weight": 2, "warmup": "new"}]' },
    });
    expect(c.delivery.ips).toEqual([{ address: '127.0.0.3', ehlo: 'mta3.example.test', pool: 'b', weight: 2, warmup: 'new' }]);
    const bad = (ips: unknown) => {
      try {
        loadConfig({ env: {}, overrides: { 'delivery.ips': ips } });
      } catch (e) {
        return (e as { key: string }).key;
      }
      return null;
    };
    expect(bad([{ address: 'nope', ehlo: 'a.test' }])).toBe('delivery.ips[0].address');
    expect(bad([{ address: '127.0.0.3' }])).toBe('delivery.ips[0].ehlo');
    expect(bad([{ address: '127.0.0.3', ehlo: 'a.test', pool: 'Bad Pool' }])).toBe('delivery.ips[0].pool');
    expect(bad([{ address: '127.0.0.3', ehlo: 'a.test', colour: 'red' }])).toBe('delivery.ips[0].colour');
    expect(
      bad([
        { address: '127.0.0.3', ehlo: 'a.test' },
        { address: '127.0.0.3', ehlo: 'b.test' },
      ]),
    ).toBe('delivery.ips[1].address');
    expect(bad({ address: '127.0.0.3' })).toBe('delivery.ips');
    expect(loadConfig({ env: { POSTHORN_CLUSTER_REGION: 'eu-central-9' } }).cluster.region).toBe('eu-central-9');
  });

  test('an address not on this machine is named; any 127/8 address is local', () => {
    expect(notLocal([{ address: '127.0.0.3' }, { address: '127.9.9.9' }, { address: '::1' }])).toEqual([]);
    expect(notLocal([{ address: '127.0.0.3' }, { address: '192.0.2.77' }])).toEqual(['192.0.2.77']);
  });
});

describe('choosing an address (SendingIps.choose)', () => {
  const now = Date.UTC(2026, 0, 10, 9);
  test('by weight within the pool; another pool is never used', () => {
    let r = 0;
    const seq = [0.1, 0.5, 0.9];
    const ips = new SendingIps({ ips: [ip('127.0.0.3', 'a'), ip('127.0.0.4', 'a', { weight: 3 }), ip('127.0.0.5', 'b')], warmup: RAMPS }, () => seq[r++ % 3]!);
    const picks = [0, 1, 2].map(() => (ips.choose('a', 'dest.test', now) as { source: { address: string } }).source.address);
    // 0.1 × 4 = 0.4 → the first (weight 1); 0.5 × 4 = 2 and 0.9 × 4 = 3.6 → the second (weight 3).
    expect(picks).toEqual(['127.0.0.3', '127.0.0.4', '127.0.0.4']);
    expect(ips.choose('b', 'dest.test', now)).toMatchObject({ source: { address: '127.0.0.5', ehlo: 'mta-5.posthorn.test' } });
    expect(ips.choose('c', 'dest.test', now)).toEqual({ source: null, until: null, why: 'no-pool' });
  });

  test('listed, out of rotation after a failed bind, or suspended for the site: skipped', () => {
    const ips = new SendingIps({ ips: [ip('127.0.0.3'), ip('127.0.0.4')], warmup: RAMPS }, () => 0);
    expect(ips.choose('default', 'google', now)).toMatchObject({ source: { address: '127.0.0.3' } });
    ips.setListed(new Set(['127.0.0.3']));
    expect(ips.choose('default', 'google', now)).toMatchObject({ source: { address: '127.0.0.4' } });
    ips.setListed(new Set());
    ips.bindFailed('127.0.0.3', 'EADDRNOTAVAIL', now);
    expect(ips.choose('default', 'google', now)).toMatchObject({ source: { address: '127.0.0.4' } });
    // Back in rotation once its time out is over.
    expect(ips.choose('default', 'google', now + 11 * 60_000)).toMatchObject({ source: { address: '127.0.0.3' } });
    ips.suspend('127.0.0.4', 'google', now + HOUR);
    ips.suspend('127.0.0.3', 'google', now + HOUR);
    expect(ips.choose('default', 'google', now + 11 * 60_000)).toMatchObject({ source: null, why: 'none-usable' });
    expect(ips.choose('default', 'yahoo', now + 11 * 60_000)).toMatchObject({ source: { address: '127.0.0.3' } });
  });
});

describe('warm-up', () => {
  test("Resend's ramps: 150 then ×1.4 a day, 1,000 then ×1.5; an hour takes an eighth of the day", () => {
    const start = Date.UTC(2026, 0, 10, 9);
    expect(allowance({ daily: 150, growth: 1.4 }, start, start)).toEqual({ daily: 150, hourly: 19, day: 0 });
    expect(allowance({ daily: 150, growth: 1.4 }, start, start + DAY).daily).toBe(210);
    expect(allowance({ daily: 150, growth: 1.4 }, start, start + 2 * DAY).daily).toBe(294);
    expect(allowance({ daily: 1000, growth: 1.5 }, start, start + 3 * DAY).daily).toBe(3375);
    // Two held days: the ramp is where it was two days earlier.
    expect(allowance({ daily: 150, growth: 1.4 }, start, start + 3 * DAY, 2).daily).toBe(210);
    expect(rolled({ sent: 100, deferred: 0, bounced: 4 })).toBe(false);
    expect(rolled({ sent: 100, deferred: 0, bounced: 5 })).toBe(true);
    expect(rolled({ sent: 100, deferred: 1, bounced: 0 })).toBe(true);
  });

  test('the allowance limits a day, frees up the next hour and the next day, and grows (the clock moves)', () => {
    const day0 = Date.UTC(2026, 0, 10, 9);
    const ips = new SendingIps({ ips: [ip('127.0.0.3', 'default', { warmup: 'new' })], warmup: { ...RAMPS, new_daily: 16, new_growth: 2 } }, () => 0);
    ips.record('127.0.0.3', day0);
    const sends = (at: number) => {
      let n = 0;
      while ('address' in ((ips.choose('default', 'google', at) as { source: object | null }).source ?? {})) n++;
      return n;
    };
    // 16 a day, 2 an hour.
    expect(sends(day0)).toBe(2);
    expect(ips.choose('default', 'google', day0)).toEqual({ source: null, until: day0 + HOUR, why: 'allowance' });
    // Another site has its own allowance.
    expect(sends(day0 + 1)).toBe(0);
    expect(ips.choose('default', 'yahoo', day0)).toMatchObject({ source: { address: '127.0.0.3' } });
    let sent = 2;
    for (let h = 1; h < 15; h++) sent += sends(day0 + h * HOUR);
    // 9:00 to 23:59: the day's 16, then nothing until midnight.
    expect(sent).toBe(16);
    const midnight = Date.UTC(2026, 0, 11);
    expect(ips.choose('default', 'google', day0 + 14 * HOUR)).toEqual({ source: null, until: midnight, why: 'allowance' });
    // Day 1: ×2 — 32 a day, 4 an hour.
    expect(sends(midnight + 10 * HOUR)).toBe(4);
    expect(ips.allowanceOf(ips.record('127.0.0.3', midnight), 'google', midnight)).toEqual({ daily: 32, hourly: 4, day: 1 });
    // A day with deferrals holds the ramp: day 2 is still 32, and slowed: a sixteenth of it an hour.
    ips.outcome('127.0.0.3', 'google', midnight + 10 * HOUR, { deferred: 1, bounced: 0 });
    const day2 = midnight + DAY + 10 * HOUR;
    expect(sends(day2)).toBe(2);
    expect(ips.allowanceOf(ips.record('127.0.0.3', day2), 'google', day2)).toEqual({ daily: 32, hourly: 2, day: 1 });
  });

  test('complaints over 0.08 % of a day at a site hold the ramp and slow it: the next day does not grow and its hourly cap halves', () => {
    expect(rolled({ sent: 1250, deferred: 0, bounced: 0, complained: 1 })).toBe(false);
    expect(rolled({ sent: 1249, deferred: 0, bounced: 0, complained: 1 })).toBe(true);
    expect(rolled({ sent: 0, deferred: 0, bounced: 0, complained: 1 })).toBe(false);
    const start = Date.UTC(2026, 0, 10, 9);
    expect(allowance({ daily: 150, growth: 1.4 }, start, start, 0, true)).toEqual({ daily: 150, hourly: 10, day: 0 });

    const day0 = Date.UTC(2026, 0, 10, 9);
    const ramps = { ...RAMPS, new_daily: 32, new_growth: 2 };
    const ips = new SendingIps({ ips: [ip('127.0.0.3', 'default', { warmup: 'new' })], warmup: ramps }, () => 0);
    const sends = (site: string, at: number) => {
      let n = 0;
      while ('address' in ((ips.choose('default', site, at) as { source: object | null }).source ?? {})) n++;
      return n;
    };
    // Day 0: 32 a day, 4 an hour, at google and at yahoo.
    expect(sends('google', day0)).toBe(4);
    expect(sends('yahoo', day0)).toBe(4);
    // A complaint about google mail arrives that day (feedback/sending-ips.ts writes it on the record; the engine adopts it).
    const today = Math.floor(day0 / DAY);
    ips.adopt({ ...ips.record('127.0.0.3', day0), complaints: { google: { [today]: 1 } } });
    // Day 1: yahoo grows (64 a day, 8 an hour); google holds at 32 and is slowed to a sixteenth an hour: 2.
    const day1 = day0 + DAY;
    expect(sends('yahoo', day1)).toBe(8);
    expect(sends('google', day1)).toBe(2);
    const r1 = ips.record('127.0.0.3', day1);
    expect(ips.allowanceOf(r1, 'google', day1)).toEqual({ daily: 32, hourly: 2, day: 0 });
    expect(ips.allowanceOf(r1, 'yahoo', day1)).toEqual({ daily: 64, hourly: 8, day: 1 });
    // The held and slowed days are written with the engine's next flush.
    expect(ips.changed(day1)[0]!.warmup).toMatchObject({ held: { google: 1 }, slowed: { google: today + 1 } });
    // Day 2, after a quiet day 1: google grows again from where it held, at the usual eighth an hour.
    const day2 = day1 + DAY;
    expect(sends('google', day2)).toBe(8);
    expect(ips.allowanceOf(ips.record('127.0.0.3', day2), 'google', day2)).toEqual({ daily: 64, hourly: 8, day: 1 });
  });
});

describe('end to end: pools bind, say their EHLO, and leave rotation', () => {
  let dns: TestDns;
  let sink: Sink;
  let p: Running;
  beforeAll(async () => {
    dns = await startDnsServer();
    sink = await startSink({ tls: 'none' });
    dns.zone.set('dest.test', 'MX', [{ exchange: 'mx.dest.test', priority: 10 }]);
    dns.zone.set('mx.dest.test', 'A', ['127.0.0.1']);
    p = await startPosthorn({
      'dns.servers': [dns.address],
      'delivery.mx_port': sink.port,
      'security.allow_private_networks': true,
      'delivery.ips': [
        ip('127.0.0.3', 'a'),
        ip('127.0.0.4', 'a'),
        ip('127.0.0.5', 'b'),
        ip('127.0.0.6', 'b'),
        // Not on this machine: its bind fails (no packet leaves), it leaves rotation and 127.0.0.7 sends.
        ip('192.0.2.77', 'c', { weight: 1000 }),
        ip('127.0.0.7', 'c'),
        ip('127.0.0.8', 'warm', { warmup: 'new' }),
      ],
      'delivery.warmup.new_daily': 8,
    });
  });
  afterAll(async () => {
    await p.stop();
    await sink.close();
    await dns.close();
  });

  test('a domain bound to pool b is delivered from b only, each address saying its own EHLO; the attempt names it', async () => {
    const sender = await verifiedDomain(p, 'pooled.test');
    expect((await p.api('PATCH', `/domains/${sender.id}`, { body: { pool: 'b' } })).status).toBe(200);
    expect((await p.api('GET', `/domains/${sender.id}`)).body.pool).toBe('b');
    const emails: EmailRec[] = [];
    for (let i = 0; i < 12; i++) emails.push(await queueEmail(p.svc, { ...sender, pool: 'b' }, { to: [`r${i}@dest.test`] }));
    for (const e of emails) expect((await waitForEmail(p.svc, e, settled)).recipients).toEqual({ [`r${emails.indexOf(e)}@dest.test`]: 'delivered' });
    const peers = new Set(emails.map((_, i) => sink.to(`r${i}@dest.test`)[0]!.remoteAddress));
    expect([...peers].every((a) => a === '127.0.0.5' || a === '127.0.0.6')).toBe(true);
    for (const i of emails.keys()) {
      const m = sink.to(`r${i}@dest.test`)[0]!;
      expect(m.helo).toBe(`mta-${m.remoteAddress.split('.').pop()}.posthorn.test`);
    }
    const got = (await p.api('GET', `/emails/${emails[0]!.id}`)).body;
    expect(got.attempts[0].sending_ip).toBe(sink.to('r0@dest.test')[0]!.remoteAddress);
    // Metrics by sending IP (docs/api.md §7.9, "By sending IP"): each address's sends and deliveries, as the sink saw them.
    const m = await p.api('GET', `/emails/metrics?dimensions=ip&domain_id=${sender.id}&metrics=sent,delivered,bounced,complained`);
    expect(m.status).toBe(200);
    const seen = (a: string) => emails.filter((_: unknown, i: number) => sink.to(`r${i}@dest.test`)[0]!.remoteAddress === a).length;
    const expected = ['127.0.0.5', '127.0.0.6']
      .filter((a) => seen(a) > 0)
      .map((a) => ({ ip: a, sent: seen(a), delivered: seen(a), bounced: 0, complained: 0 }));
    // `sent`, counted at the claim before an address was chosen, moved to the address at the first attempt: its row without an IP is all zeros.
    expect(m.body.data.filter((r: { ip?: string }) => r.ip)).toEqual(expected);
    for (const r of m.body.data.filter((r: { ip?: string }) => !r.ip)) expect(r).toEqual({ sent: 0, delivered: 0, bounced: 0, complained: 0 });
    expect(m.body.totals).toEqual({ sent: 12, delivered: 12, bounced: 0, complained: 0 });
  });

  test('an unknown pool or region is refused with 422; an address a peer refuses is its own', async () => {
    const sender = await verifiedDomain(p, 'refused.test');
    const bad = await p.api('PATCH', `/domains/${sender.id}`, { body: { pool: 'nowhere' } });
    expect(bad.status).toBe(422);
    expect(bad.body.name).toBe('validation_error');
    expect((await p.api('POST', '/domains', { body: { name: 'newpool.test', pool: 'nowhere' } })).body.name).toBe('validation_error');
    expect((await p.api('PATCH', `/domains/${sender.id}`, { body: { region: 'mars-1' } })).body.name).toBe('invalid_region');
    // GET /regions: the regions a domain may name — here Resend's only, none the operator's, none waiting (one node).
    expect((await p.api('GET', '/regions')).body).toEqual({
      object: 'list',
      has_more: false,
      data: ['us-east-1', 'eu-west-1', 'sa-east-1', 'ap-northeast-1'].map((name) => ({ object: 'region', name, defined: false, waiting: false })),
    });
    expect((await p.api('POST', '/domains', { body: { name: 'newpool.test', pool: 'a' } })).status).toBe(201);
    expect((await p.api('PATCH', `/domains/${sender.id}`, { body: { pool: 'a' } })).status).toBe(200);
    // The sink refuses what 127.0.0.3 sends: pool a's mail from it bounces, from 127.0.0.4 it is delivered.
    sink.respondFrom('127.0.0.3', { code: 550, message: '5.7.1 this address is not welcome' });
    try {
      const emails = [];
      for (let i = 0; i < 8; i++) emails.push(await queueEmail(p.svc, { ...sender, pool: 'a' }, { to: [`s${i}@dest.test`] }));
      const done = await Promise.all(emails.map((e) => waitForEmail(p.svc, e, settled)));
      for (const [i, d] of done.entries()) {
        const from = d.attempts!.at(-1)!.sending_ip;
        expect(from === '127.0.0.3' || from === '127.0.0.4').toBe(true);
        expect(d.recipients[`s${i}@dest.test`]).toBe(from === '127.0.0.3' ? 'bounced' : 'delivered');
      }
    } finally {
      sink.respondFrom('127.0.0.3', null);
    }
  });

  test('a bind that fails takes the address out of rotation and the message goes through another', async () => {
    const sender = await verifiedDomain(p, 'binding.test');
    expect((await p.api('PATCH', `/domains/${sender.id}`, { body: { pool: 'c' } })).status).toBe(200);
    const email = await queueEmail(p.svc, { ...sender, pool: 'c' }, { to: ['bind@dest.test'] });
    expect((await waitForEmail(p.svc, email, settled)).recipients).toEqual({ 'bind@dest.test': 'delivered' });
    expect(sink.to('bind@dest.test')[0]!.remoteAddress).toBe('127.0.0.7');
    const listed = await until(async () => {
      const ips = (await p.api('GET', '/ips')).body.data as { address: string; out_of_rotation: { reason: string } | null }[];
      return ips.find((i) => i.address === '192.0.2.77' && i.out_of_rotation) ?? null;
    }, 'GET /ips shows 192.0.2.77 out of rotation');
    expect(listed.out_of_rotation!.reason).toContain('EADDRNOTAVAIL');
  });

  test("a warming address sends its hour's allowance; the rest waits, queued, never bounced; GET /ips and POST /ips/{ip}/warmup", async () => {
    const sender = await verifiedDomain(p, 'warming.test');
    expect((await p.api('PATCH', `/domains/${sender.id}`, { body: { pool: 'warm' } })).status).toBe(200);
    const emails = [];
    for (let i = 0; i < 3; i++) emails.push(await queueEmail(p.svc, { ...sender, pool: 'warm' }, { to: [`w${i}@dest.test`] }));
    // 8 a day, 1 an hour: one goes now.
    await until(() => sink.messages.filter((m) => m.rcptTo[0]!.startsWith('w')).length === 1 || null, 'one warm-up message delivered');
    const ip8 = await until(async () => {
      const ips = (await p.api('GET', '/ips')).body.data as {
        address: string;
        sent_today: { site: string; sent: number; allowance: number | null; held_days: number; complained: number; slowed: boolean }[];
      }[];
      const me = ips.find((i) => i.address === '127.0.0.8')!;
      return me.sent_today.length ? me : null;
    }, 'GET /ips shows the warm-up counts');
    expect(ip8).toMatchObject({ pool: 'warm', ehlo: 'mta-8.posthorn.test', warmup: { state: 'warming', ramp: 'new', day: 0 } });
    expect(ip8.sent_today).toEqual([{ site: 'dest.test', sent: 1, allowance: 8, held_days: 0, complained: 0, slowed: false }]);
    // A complaint about the delivered one is matched back to the address and site that delivered it.
    const delivered = (await Promise.all(emails.map(async (e) => (await p.svc.store.emails.get(e.team_id, e.id))!))).find((e) =>
      e.attempts?.some((a) => a.sending_ip === '127.0.0.8' && a.results[0]!.code === 250),
    )!;
    expect(delivered.attempts!.at(-1)).toMatchObject({ sending_ip: '127.0.0.8', sending_site: 'dest.test' });
    const rcpt = Object.keys(delivered.recipients)[0]!;
    await p.svc.store.write((tx) => recordComplaint(tx, p.svc.events, delivered, rcpt, { suppress: false }));
    const complained = await until(async () => {
      const ips = (await p.api('GET', '/ips')).body.data as { address: string; sent_today: { complained: number }[] }[];
      return ips.find((i) => i.address === '127.0.0.8')!.sent_today[0]!.complained === 1 || null;
    }, 'GET /ips counts the complaint at its address and site');
    expect(complained).toBe(true);
    const states = await Promise.all(emails.map(async (e) => (await p.svc.store.emails.get(e.team_id, e.id))!.recipients));
    expect(states.flatMap((r) => Object.values(r)).filter((s) => s === 'bounced')).toEqual([]);
    const queued = await Promise.all(emails.map((e) => p.svc.store.queue.entriesOf(e.team_id, e.id)));
    expect(queued.filter((q) => q.length === 1).length).toBe(2);
    // Warm-up controls.
    expect((await p.api('POST', '/ips/127.0.0.8/warmup', { body: { action: 'resume' } })).body.name).toBe('validation_error');
    expect((await p.api('POST', '/ips/127.0.0.8/warmup', { body: { action: 'pause' } })).body.warmup.state).toBe('paused');
    expect((await p.api('POST', '/ips/127.0.0.8/warmup', { body: { action: 'resume' } })).body.warmup.state).toBe('warming');
    expect((await p.api('POST', '/ips/10.9.9.9/warmup', { body: { action: 'start' } })).status).toBe(404);
    expect((await p.api('POST', '/ips/127.0.0.8/warmup', { body: { action: 'fly' } })).status).toBe(422);
    // Complete: no allowance any more — the waiting mail goes once the engine has read it (within 5 s) and its wait ends.
    expect((await p.api('POST', '/ips/127.0.0.8/warmup', { body: { action: 'complete' } })).body.warmup.state).toBe('complete');
  });
});
