// Where an attempt's connections go once its MX hosts are known (src/delivery/route.ts), situation →
// decision: the site the claim counted it under, or another one the MX shows; room there or a
// wait; the connection lease of the site. The real Shaper with sites of the test's own; no sockets.
import { describe, expect, test } from 'bun:test';
import type { Route } from '../../src/delivery/attempt';
import { inFlightKey, SitesInFlight } from '../../src/delivery/in-flight';
import { routeAttempt } from '../../src/delivery/route';
import { Shaper, SiteRules } from '../../src/delivery/shaping';
import { loadConfig } from '../../src/config';

const NOW = 1_000_000;
const config = loadConfig({
  env: {},
  overrides: {
    'delivery.shaping.sites': {
      big: { mx: ['*.mx.big.test'], max_connections: 1, messages_per_connection: 7 },
      minute: { domains: ['minute.test'], messages_per_minute: 1 },
    },
  },
});
const KEY = inFlightKey('customer.test', 'e1');

interface Situation {
  shaping?: boolean;
  /** The site the claim counted the attempt under. */
  claimedAs: string;
  /** Other attempts in flight, by site. */
  others?: Record<string, number>;
  suspended?: Record<string, number>;
  taken?: Record<string, number>;
}

function route(s: Situation, domain: string, hosts: string[]) {
  const shaper = new Shaper(new SiteRules(config.delivery.shaping), s.shaping ?? true, () => 0);
  shaper.sync(Object.entries(s.suspended ?? {}).map(([site, until]) => ({ site, suspended_until: until, strikes: 1, throttled_at: NOW, reply: '421' })));
  for (const [site, n] of Object.entries(s.taken ?? {})) for (let i = 0; i < n; i++) shaper.take(site, NOW);
  const flying = new SitesInFlight();
  flying.set(KEY, s.claimedAs);
  for (const [site, n] of Object.entries(s.others ?? {})) for (let i = 0; i < n; i++) flying.set(`other-${site}-${i}`, site);
  return { route: routeAttempt(shaper, flying, KEY, domain, hosts, NOW), flying, shaper };
}

const lease = (group: string, maxConnections: number, maxMessages: number) => ({ group, maxConnections, maxMessages });

describe('the route of an attempt', () => {
  const rows: [string, Situation, string, string[], Route][] = [
    [
      'the site the claim counted: its lease',
      { claimedAs: 'customer.test' },
      'customer.test',
      ['mx.customer.test'],
      { site: 'customer.test', lease: lease('customer.test', 20, 100) },
    ],
    ['shaping off: no lease of a site', { shaping: false, claimedAs: 'customer.test' }, 'customer.test', ['mx.customer.test'], { site: 'customer.test' }],
    [
      'the MX shows a site with room: counted there, its lease',
      { claimedAs: 'customer.test' },
      'customer.test',
      ['a.mx.big.test'],
      { site: 'big', lease: lease('big', 1, 7) },
    ],
    [
      'the MX shows a site with no room: waits at least a second',
      { claimedAs: 'customer.test', others: { big: 2 } },
      'customer.test',
      ['a.mx.big.test'],
      { site: 'big', defer: NOW + 1_000 },
    ],
    [
      'the MX shows a suspended site: waits for its end',
      { claimedAs: 'customer.test', suspended: { big: NOW + 30_000 } },
      'customer.test',
      ['a.mx.big.test'],
      { site: 'big', defer: NOW + 30_000 },
    ],
    [
      'the MX shows a site out of its rate: waits for its next message',
      { claimedAs: 'elsewhere', taken: { minute: 1 } },
      'minute.test',
      ['mx.minute.test'],
      { site: 'minute', defer: NOW + 60_000 },
    ],
    [
      'the site the claim counted, suspended since: waits for the suspension’s end',
      { claimedAs: 'big', suspended: { big: NOW + 30_000 } },
      'customer.test',
      ['a.mx.big.test'],
      { site: 'big', defer: NOW + 30_000 },
    ],
  ];
  test.each(rows)('%s', (_situation, s, domain, hosts, expected) => {
    expect(route(s, domain, hosts).route).toEqual(expected);
  });

  test('an attempt moved to the site its MX shows counts there from then on, and the domain is known by it', () => {
    const { flying, shaper } = route({ claimedAs: 'customer.test' }, 'customer.test', ['a.mx.big.test']);
    expect(flying.get(KEY)).toBe('big');
    expect(flying.others('big', 'another')).toBe(1);
    expect(shaper.siteOf('customer.test')).toBe('big');
  });
});

test('sites in flight: those the worker no longer runs are forgotten, the rest counted per site', () => {
  const flying = new SitesInFlight();
  flying.set('a', 's1');
  flying.set('b', 's1');
  flying.set('c', 's2');
  expect(flying.count(new Set(['a', 'c', 'unknown']))).toEqual(
    new Map([
      ['s1', 1],
      ['s2', 1],
    ]),
  );
  expect(flying.get('b')).toBeUndefined();
  expect(flying.others('s1', 'a')).toBe(0);
});
