// Per-destination shaping (docs/mail.md §3.1): sites as data (the shipped file, overridden by the
// configuration), domains rolling up to a site by their MX, throttling replies that suspend and slow
// a site, and — end to end, against a sink that starts answering 421 — a destination that is
// slowed and recovers.
import { describe, test, expect } from 'bun:test';
import { SiteRules, Shaper, isThrottling } from '../../src/delivery/shaping';
import { DEFAULT_POOL } from '../../src/delivery/pool';
import { loadConfig, ConfigError } from '../../src/config';
import { parseReply, localReply } from '../../src/mail/smtp-reply';
import { startMailWorld } from '../helpers/world';
import { queueEmail, waitForEmail, settled, eventTypes } from '../helpers/emails';
import { until } from '../helpers/wait';
import type { SiteState } from '../../src/store';

const reply = (raw: string) => parseReply(raw)!;
const noConfig = { default: {}, sites: {} };

describe('sites as data', () => {
  const rules = new SiteRules(noConfig);

  test('the shipped default is the pool default; the large providers are sites', () => {
    expect(rules.defaults).toMatchObject({
      max_connections: DEFAULT_POOL.perDestination,
      messages_per_connection: DEFAULT_POOL.maxMessages,
      messages_per_minute: 0,
      messages_per_hour: 0,
    });
    expect(rules.names().sort()).toEqual(['apple', 'gmx', 'google', 'mailru', 'microsoft', 'yahoo', 'yandex']);
  });

  test('a domain belongs to the site listing it, else to the site matching its first MX host, else to itself', () => {
    const shaper = new Shaper(rules, true);
    expect(shaper.siteOf('gmail.com')).toBe('google');
    expect(shaper.siteOf('googlemail.com')).toBe('google');
    expect(shaper.siteOf('aol.com')).toBe('yahoo');
    // A Google Workspace domain: unknown by name, Google's by its MX.
    expect(shaper.siteOf('acme.test')).toBe('acme.test');
    expect(shaper.siteOfRoute('acme.test', ['aspmx.l.google.com', 'alt1.aspmx.l.google.com'])).toBe('google');
    expect(shaper.siteOf('acme.test')).toBe('google');
    expect(shaper.siteOfRoute('contoso.test', ['contoso-test.mail.protection.outlook.com'])).toBe('microsoft');
    expect(shaper.siteOfRoute('small.test', ['mx.small.test'])).toBe('small.test');
    // Off: every domain is its own site.
    expect(new Shaper(rules, false).siteOf('gmail.com')).toBe('gmail.com');
  });

  test('the configuration overrides a shipped site key by key, and adds sites that win over shipped ones', () => {
    const config = loadConfig({
      env: {},
      overrides: {
        'delivery.shaping.default': { backoff: '30s' },
        'delivery.shaping.sites': { google: { max_connections: 3 }, corp: { domains: ['gmail.com', '*.corp.test'], messages_per_hour: 600 } },
      },
    });
    const r = new SiteRules(config.delivery.shaping);
    expect(r.limits('google')).toMatchObject({ max_connections: 3, messages_per_connection: 50, backoff: 30_000 });
    expect(r.siteOfDomain('gmail.com')).toBe('corp');
    expect(r.siteOfDomain('mail.corp.test')).toBe('corp');
    expect(r.siteOfDomain('googlemail.com')).toBe('google');
    expect(r.limits('corp')).toMatchObject({ max_connections: 20, messages_per_hour: 600, backoff: 30_000 });
    expect(r.limits('unknown.test').backoff).toBe(30_000);
  });

  test('a bad site setting stops start-up naming the key', () => {
    const bad = (sites: unknown, env?: Record<string, string>) => {
      try {
        loadConfig({ env: env ?? {}, overrides: env ? {} : { 'delivery.shaping.sites': sites } });
      } catch (e) {
        expect(e).toBeInstanceOf(ConfigError);
        return (e as ConfigError).key;
      }
      throw new Error('no error');
    };
    expect(bad({ google: { max_connections: 0 } })).toBe('delivery.shaping.sites.google.max_connections');
    expect(bad({ google: { backoff: 'soon' } })).toBe('delivery.shaping.sites.google.backoff');
    expect(bad({ google: { mx: ['not a host'] } })).toBe('delivery.shaping.sites.google.mx');
    expect(bad({ google: { connections: 3 } })).toBe('delivery.shaping.sites.google.connections');
    expect(bad({ 'Bad Name': {} })).toBe('delivery.shaping.sites.Bad Name');
    expect(bad(null, { POSTHORN_DELIVERY_SHAPING_SITES: '{"x": {"max_backoff": "1s", "backoff": "1m"}}' })).toBe('delivery.shaping.sites.x.max_backoff');
    expect(bad(null, { POSTHORN_DELIVERY_SHAPING_SITES: 'not json' })).toBe('delivery.shaping.sites');
    expect(loadConfig({ env: { POSTHORN_DELIVERY_SHAPING_SITES: '{"x": {"mx": ["*.x.test"]}}' } }).delivery.shaping.sites).toEqual({ x: { mx: ['*.x.test'] } });
  });
});

describe('throttling replies', () => {
  const rules = new SiteRules(noConfig);
  test('421, rate-limit 4.7.x replies and a site’s own texts throttle; per-recipient and local replies do not', () => {
    const none = rules.defaults;
    expect(isThrottling(reply('421 4.7.0 Try again later, closing connection.'), none)).toBe(true);
    expect(isThrottling(reply('451 4.7.650 The mail server [192.0.2.1] has been temporarily rate limited due to IP reputation.'), none)).toBe(true);
    expect(isThrottling(reply('451 4.7.1 Please come back later'), none)).toBe(true);
    expect(isThrottling(reply('450 4.2.1 The user you are trying to contact is receiving mail at a rate that prevents additional messages'), none)).toBe(false);
    expect(isThrottling(reply('451 4.7.1 Greylisted, see http://postgrey.test'), none)).toBe(false);
    expect(isThrottling(reply('450 4.7.0 [TSS04] Messages from 192.0.2.1 temporarily blocked'), none)).toBe(false);
    expect(isThrottling(reply('450 4.7.0 [TSS04] Messages from 192.0.2.1 temporarily blocked'), rules.limits('yahoo'))).toBe(true);
    expect(isThrottling(reply('550 5.7.1 rate limited forever'), none)).toBe(false);
    expect(isThrottling(localReply(421, '4.3.2', 'delivery is shutting down'), none)).toBe(false);
  });
});

describe('suspension, slowing, fading, rates', () => {
  const config = loadConfig({
    env: {},
    overrides: { 'delivery.shaping.sites': { s: { domains: ['s.test'], max_connections: 8, messages_per_minute: 2, backoff: '10s', max_backoff: '30s' } } },
  });
  const rules = new SiteRules(config.delivery.shaping);
  const t0 = 1_000_000;

  test('a throttling reply suspends the site for its backoff (stretched by up to 20 %), once; strikes halve its room and fade', () => {
    const shaper = new Shaper(rules, true, () => 0.5);
    const throttle = reply('421 4.7.0 Try again later');
    const first = shaper.outcome('s', [throttle], t0)!;
    expect(first.put).toEqual({ site: 's', suspended_until: t0 + 11_000, strikes: 1, throttled_at: t0, reply: throttle.text });
    shaper.apply(first);
    // The other attempts in flight get 421 too: no second strike while suspended.
    expect(shaper.outcome('s', [throttle], t0 + 100)).toBeNull();
    expect(shaper.room('s', t0 + 5_000, 0)).toEqual({ n: 0, until: t0 + 11_000 });
    // Resumed, slowed: half the connections (the rate too) until the strike fades a backoff later.
    expect(shaper.limits('s', t0 + 12_000)).toMatchObject({ max_connections: 4, messages_per_minute: 1 });
    expect(shaper.limits('s', t0 + 21_000)).toMatchObject({ max_connections: 8, messages_per_minute: 2 });
    // A second throttle before fading: two strikes, double the backoff.
    const second = shaper.outcome('s', [throttle], t0 + 12_000)!;
    expect(second.put).toMatchObject({ strikes: 2, suspended_until: t0 + 12_000 + 22_000 });
    shaper.apply(second);
    expect(shaper.limits('s', t0 + 35_000).max_connections).toBe(2);
    // A delivery after every strike faded ends the state.
    expect(shaper.outcome('s', [reply('250 ok')], t0 + 40_000)).toBeNull();
    expect(shaper.outcome('s', [reply('250 ok')], t0 + 34_000 + 20_000)).toEqual({ remove: 's' });
  });

  test('at most two attempts per connection in flight; messages per minute as a token bucket', () => {
    const shaper = new Shaper(rules, true);
    expect(shaper.room('s', t0, 0)).toEqual({ n: 2, until: null }); // the rate: 2 a minute
    expect(shaper.room('s', t0, 16)).toEqual({ n: 0, until: null }); // 8 connections × 2
    shaper.take('s', t0);
    shaper.take('s', t0);
    // Out of tokens: the next one in 30 s, far enough to move the entries out of the way.
    expect(shaper.room('s', t0, 0)).toEqual({ n: 0, until: t0 + 30_000 });
    expect(shaper.room('s', t0 + 30_000, 0)).toEqual({ n: 1, until: null });
    // Entries moved for a rate come back one interval apart.
    expect([0, 1, 2].map((i) => shaper.spread('s', t0 + 30_000, t0, i))).toEqual([t0 + 30_000, t0 + 60_000, t0 + 90_000]);
  });

  test('a suspension stored by the other thread (or lifted by it) counts at the next claim', () => {
    const shaper = new Shaper(rules, true);
    const st: SiteState = { site: 's', suspended_until: t0 + 5_000, strikes: 1, throttled_at: t0, reply: '421' };
    shaper.sync([st]);
    expect(shaper.suspended('s', t0 + 1)).toBe(t0 + 5_000);
    shaper.sync([{ ...st, suspended_until: null }]);
    expect(shaper.suspended('s', t0 + 1)).toBeNull();
  });
});

test('a destination answering 421 after N messages is suspended and slowed, mail that rolls up to it by MX waits too, and it recovers', async () => {
  const world = await startMailWorld({
    'delivery.retry_schedule': ['200ms'],
    'delivery.shaping.sites': { dest: { mx: ['*.dest.test'], max_connections: 2, backoff: '4s', max_backoff: '8s' } },
  });
  const { p, dns, sink, domain } = world;
  const { store } = p.svc;
  try {
    sink.throttleAfter(3, { code: 421, message: '4.7.0 Try again later, closing connection' });
    const emails = [];
    for (let i = 0; i < 6; i++) emails.push(await queueEmail(p.svc, domain, { to: [`u${i}@dest.test`] }));
    await until(async () => !!(await store.sites.get('dest'))?.suspended_until, 'the site to be suspended');
    const state = (await store.sites.get('dest'))!;
    expect(state).toMatchObject({ strikes: 1, reply: '421 4.7.0 Try again later, closing connection' });
    expect(sink.messages).toHaveLength(3);
    // Another domain whose MX is the same provider's: same site, so not attempted while suspended.
    dns.zone.set('rollup.test', 'MX', [{ exchange: 'mx2.dest.test', priority: 10 }]);
    dns.zone.set('mx2.dest.test', 'A', ['127.0.0.1']);
    const rolled = await queueEmail(p.svc, domain, { to: ['ann@rollup.test'] });
    await until(async () => (await store.queue.entriesOf(rolled.team_id, rolled.id))[0]?.site === 'dest', 'the rolled-up entry to learn its site');
    const [waiting] = await store.queue.entriesOf(rolled.team_id, rolled.id);
    expect(waiting).toMatchObject({ attempts: 0, site: 'dest', attempting: null });
    expect((await store.emails.get(rolled.team_id, rolled.id))!.attempts ?? []).toEqual([]);
    // The throttled attempt is on record with the reply.
    const throttled = await Promise.all(emails.map((e) => store.emails.get(e.team_id, e.id)));
    const attempt = throttled.flatMap((e) => e!.attempts ?? []).find((a) => a.results[0]!.code === 421)!;
    expect(attempt.results[0]).toMatchObject({ code: 421, enhanced_code: '4.7.0' });

    // The destination stops throttling: everything is delivered once the suspension ends.
    sink.throttleAfter(null);
    for (const e of [...emails, rolled]) expect((await waitForEmail(p.svc, e, settled, 30_000)).last_event).toBe('delivered');
    expect(await eventTypes(p.svc, rolled)).toEqual(['email.queued', 'email.sent', 'email.delivered']);
    expect((await store.emails.get(rolled.team_id, rolled.id))!.attempts).toHaveLength(1);
    // Once its strike has faded (a backoff of quiet after the suspension), a delivery ends the
    // site's state — one of those above already did if the recovery took that long. Rather than
    // wait out the backoff (4 s a strike), the stored state is made that much older: the engine
    // reads it at its next claim, and its strikes fade by the time it was written at.
    const resumed = await store.sites.get('dest');
    if (resumed) {
      const quietSince = Date.now() - resumed.strikes * 4_000 - 1;
      await store.write(async (tx) => tx.sites.put({ ...resumed, throttled_at: quietSince, suspended_until: resumed.suspended_until && quietSince }));
    }
    const last = await queueEmail(p.svc, domain, { to: ['last@dest.test'] });
    await waitForEmail(p.svc, last, settled);
    await until(async () => (await store.sites.get('dest')) === undefined, 'the site state to end');
  } finally {
    await world.stop();
  }
}, 60_000);
