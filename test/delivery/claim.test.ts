// The claim decisions of the delivery engine (src/delivery/claim.ts), situation → decision: a due
// key in flight, held, or of a site with room, none for a moment, or none until later; an entry
// read (its recorded site, its team's hold); its email and sending domain; its lease. Shaping is
// the real Shaper (shaping.ts) with sites of the test's own. No sockets, no store.
import { describe, expect, test } from 'bun:test';
import { ClaimRound, claimVerdict, holdsOf, isHeld, leased } from '../../src/delivery/claim';
import { inFlightKey } from '../../src/delivery/in-flight';
import { Shaper, SiteRules } from '../../src/delivery/shaping';
import { loadConfig } from '../../src/config';
import type { DomainRec, EmailRec, QueueEntry, SiteState } from '../../src/store';

const NOW = 1_000_000;
/** `domain/id` or `team/destination`. */
const pair = (k: string) => k.split('/') as [string, string];
const config = loadConfig({
  env: {},
  overrides: {
    'delivery.shaping.sites': {
      // Two attempts at once (two per connection).
      pair: { domains: ['pair.test'], max_connections: 1 },
      // One a minute: once taken, the next is a minute away (moved out of the way).
      minute: { domains: ['minute.test'], messages_per_minute: 1 },
      // Thirty a minute: once out of tokens, the next is 2 s away (waits where it is).
      quick: { domains: ['quick.test'], messages_per_minute: 30 },
      // A provider its customers' domains roll up to by their MX.
      big: { domains: ['big.test'] },
    },
  },
});

interface Situation {
  /** Attempts in flight per site before the claim. */
  perSite?: Record<string, number>;
  /** Keys (`domain/id`) in flight. */
  busy?: string[];
  /** Destinations held, `team/destination`. */
  holds?: string[];
  suspended?: Record<string, number>;
  /** Messages already taken per site (its rate's tokens). */
  taken?: Record<string, number>;
}

function round(s: Situation, lastSites?: string[]) {
  const shaper = new Shaper(new SiteRules(config.delivery.shaping), true, () => 0);
  shaper.sync(
    Object.entries(s.suspended ?? {}).map(([site, until]): SiteState => ({ site, suspended_until: until, strikes: 1, throttled_at: NOW, reply: '421' })),
  );
  for (const [site, n] of Object.entries(s.taken ?? {})) for (let i = 0; i < n; i++) shaper.take(site, NOW);
  const busy = new Set((s.busy ?? []).map((k) => inFlightKey(...pair(k))));
  const holds = holdsOf((s.holds ?? []).map((h) => ({ team_id: pair(h)[0], destination: pair(h)[1], held_at: '' })));
  const perSite = new Map(Object.entries(s.perSite ?? {}));
  return { shaper, perSite, round: new ClaimRound(shaper, NOW, perSite, busy, holds, lastSites) };
}

describe('a due key: passed over by key, or read', () => {
  // Each row: the situation, the keys in due order (`domain/id`), and for each whether it is passed over.
  const rows: [string, Situation, string[], boolean[]][] = [
    ['a destination with room: read', {}, ['a.test/1', 'b.test/2'], [false, false]],
    ['in flight: passed over', { busy: ['a.test/1'] }, ['a.test/1', 'a.test/2'], [true, false]],
    ['a site with room for two: the third passed over', {}, ['pair.test/1', 'pair.test/2', 'pair.test/3'], [false, false, true]],
    ['its attempts in flight count against its room', { perSite: { pair: 1 } }, ['pair.test/1', 'pair.test/2'], [false, true]],
    ['a destination someone holds: read, the entry may be its team’s', { holds: ['t2/pair.test'], perSite: { pair: 2 } }, ['pair.test/1'], [false]],
    ['a suspended site: passed over', { suspended: { pair: NOW + 10_000 } }, ['pair.test/1'], [true]],
    ['a site out of its rate: passed over', { taken: { minute: 1 } }, ['minute.test/1'], [true]],
  ];
  test.each(rows)('%s', (_situation, s, keys, expected) => {
    const { round: r } = round(s);
    expect(keys.map((k) => r.pass(...pair(k), NOW - 10))).toEqual(expected);
  });

  test('a suspended site’s entries move to after its suspension, spread out; they wake nobody', () => {
    const { round: r } = round({ suspended: { pair: NOW + 10_000 } });
    r.pass('pair.test', '1', 5);
    r.pass('pair.test', '2', 6);
    expect(r.moves).toEqual([
      { domain: 'pair.test', id: '1', from: 5, to: NOW + 10_000 },
      { domain: 'pair.test', id: '2', from: 6, to: NOW + 10_000 },
    ]);
    expect(r.soonest).toBeNull();
    expect([...r.passedSites]).toEqual(['pair']);
  });

  test('a long rate wait moves the entries one message interval apart', () => {
    const { round: r } = round({ taken: { minute: 1 } });
    for (const id of ['1', '2', '3']) r.pass('minute.test', id, 5);
    expect(r.moves.map((m) => m.to - NOW)).toEqual([60_000, 120_000, 180_000]);
  });

  test('a short rate wait leaves the entries where they are and wakes the worker when it ends', () => {
    const { round: r } = round({ taken: { quick: 30 } });
    expect(r.pass('quick.test', '1', 5)).toBe(true);
    expect(r.moves).toEqual([]);
    expect(r.soonest).toBe(NOW + 2_000);
  });

  test('a site that has no room for a while is passed over; what it passed over counts with the last scan’s sites', () => {
    const { round: r } = round({ perSite: { pair: 2 } }, ['elsewhere']);
    r.pass('pair.test', '1', 5);
    expect([...r.passedSites].sort()).toEqual(['elsewhere', 'pair']);
  });
});

describe('a domain whose later keys would all be passed over (full)', () => {
  // Each row: the situation, the keys passed first, the domain asked about, and the answer.
  const rows: [string, Situation, string[], string, boolean][] = [
    ['room left: not full', {}, ['pair.test/1'], 'pair.test', false],
    ['no room left: full', {}, ['pair.test/1', 'pair.test/2'], 'pair.test', true],
    ['its attempts in flight fill its room: full', { perSite: { pair: 2 } }, [], 'pair.test', true],
    ['held by someone: its keys are read, not full', { holds: ['t2/pair.test'], perSite: { pair: 2 } }, [], 'pair.test', false],
    ['a suspended site: its entries move one by one, not full', { suspended: { pair: NOW + 10_000 } }, [], 'pair.test', false],
    ['a short rate wait: full', { taken: { quick: 30 } }, [], 'quick.test', true],
    ['a long rate wait: its entries move, not full', { taken: { minute: 1 } }, [], 'minute.test', false],
  ];
  test.each(rows)('%s', (_situation, s, passed, domain, expected) => {
    const { round: r } = round(s);
    for (const k of passed) r.pass(...pair(k), NOW - 10);
    expect(r.full(domain)).toBe(expected);
  });
});

describe('room at the sites the last scan passed over', () => {
  const rows: [string, Situation, string[], boolean][] = [
    ['none passed over: no room', {}, [], true],
    ['a site with room', {}, ['pair'], false],
    ['a site full: no room', { perSite: { pair: 2 } }, ['pair'], true],
    ['one full, one with room', { perSite: { pair: 2 } }, ['pair', 'other.test'], false],
    ['a site suspended: no room', { suspended: { pair: NOW + 1 } }, ['pair'], true],
  ];
  test.each(rows)('%s', (_situation, s, sites, expected) => {
    expect(round(s).round.noRoom(new Set(sites))).toBe(expected);
  });
});

const entry = (e: Partial<QueueEntry> = {}): QueueEntry => ({
  id: 'e1',
  team_id: 't1',
  email_id: 'm1',
  domain: 'pair.test',
  recipients: ['bob@pair.test'],
  attempts: 0,
  first_attempt_at: null,
  last_error: null,
  ...e,
});

describe('an entry read: the site its attempt goes to', () => {
  test('counted once: a key its pass counted under the same site is not counted again', () => {
    const { round: r } = round({});
    expect(r.pass('pair.test', 'e1', 5)).toBe(false);
    expect(r.pass('pair.test', 'e2', 5)).toBe(false);
    expect(r.admitRead(entry({ id: 'e1' }), 5)).toBe('pair');
    expect(r.admitRead(entry({ id: 'e2' }), 5)).toBe('pair');
  });

  test('the site an earlier attempt found by MX counts: no room there, passed over', () => {
    const { round: r, shaper } = round({ perSite: { big: 40 } });
    r.pass('customer.test', 'e1', 5); // counted under its own site, not knowing better yet
    expect(r.admitRead(entry({ domain: 'customer.test', site: 'big' }), 5)).toBeNull();
    expect(shaper.siteOf('customer.test')).toBe('big');
    expect(r.passedSites.has('big')).toBe(true);
  });

  test('a held domain’s entry of a team that does not hold it is counted when read', () => {
    const { round: r } = round({ holds: ['t2/pair.test'], perSite: { pair: 2 } });
    expect(r.pass('pair.test', 'e1', 5)).toBe(false);
    expect(r.admitRead(entry(), 5)).toBeNull();
  });

  test('taking it counts it in flight at its site, and uses its rate', () => {
    const { round: r, perSite, shaper } = round({});
    r.took('minute');
    expect(perSite.get('minute')).toBe(1);
    expect(shaper.room('minute', NOW, 0)).toEqual({ n: 0, until: NOW + 60_000 });
  });
});

test('held: by the entry’s own team only', () => {
  const holds = holdsOf([{ team_id: 't1', destination: 'a.test', held_at: '' }]);
  const rows: [Partial<QueueEntry>, boolean][] = [
    [{ team_id: 't1', domain: 'a.test' }, true],
    [{ team_id: 't2', domain: 'a.test' }, false],
    [{ team_id: 't1', domain: 'b.test' }, false],
  ];
  expect(rows.map(([e]) => isHeld(holds, entry(e)))).toEqual(rows.map(([, held]) => held));
  expect([...holds.domains]).toEqual(['a.test']);
});

describe('an entry’s email and sending domain', () => {
  const email = { id: 'm1', team_id: 't1' } as EmailRec;
  const domain = (sending: 'enabled' | 'disabled', status: string): DomainRec =>
    ({ capabilities: { sending, receiving: 'disabled' }, record_status: { 'SPF:MX': status, 'SPF:TXT': status, DKIM: status } }) as unknown as DomainRec;
  const rows: [string, EmailRec | undefined, DomainRec | undefined, string][] = [
    ['the email gone (retention): dropped', undefined, undefined, 'drop: email no longer stored'],
    ['the domain deleted: the email fails', email, undefined, 'fail: domain_deleted'],
    ['a record no longer verified: the email fails', email, domain('enabled', 'failed'), 'fail: domain_not_verified'],
    ['sending disabled: the email fails', email, domain('disabled', 'verified'), 'fail: domain_not_verified'],
    ['a record failing temporarily: still sent', email, domain('enabled', 'temporary_failure'), 'take'],
    ['verified: taken', email, domain('enabled', 'verified'), 'take'],
  ];
  test.each(rows)('%s', (_situation, e, d, expected) => {
    const v = claimVerdict(e, d);
    expect(v.kind === 'take' ? 'take' : `${v.kind}: ${v.reason}`).toBe(expected);
  });
});

describe('the lease: the entry as persisted before its attempt', () => {
  const retry = { retry_schedule: [60_000, 600_000], retry_window: 3_600_000 };
  const iso = (ms: number) => new Date(ms).toISOString();
  const rows: [string, Partial<QueueEntry>, { attempts: number; first_attempt_at: string; due: number }][] = [
    ['the first attempt: its time is the first attempt’s; due after the first wait', {}, { attempts: 1, first_attempt_at: iso(NOW), due: NOW + 60_000 }],
    [
      'a later attempt: the first attempt’s time stays; the schedule’s last wait',
      { attempts: 2, first_attempt_at: iso(NOW - 100_000) },
      { attempts: 3, first_attempt_at: iso(NOW - 100_000), due: NOW + 600_000 },
    ],
    [
      'never past the retry window',
      { attempts: 2, first_attempt_at: iso(NOW - 3_500_000) },
      { attempts: 3, first_attempt_at: iso(NOW - 3_500_000), due: NOW + 100_000 },
    ],
  ];
  test.each(rows)('%s', (_situation, e, expected) => {
    const { next, due } = leased(entry(e), NOW, retry, () => 0);
    expect({ attempts: next.attempts, first_attempt_at: next.first_attempt_at, due }).toEqual(expected);
    expect(next.attempting).toBe(iso(NOW));
  });
});
