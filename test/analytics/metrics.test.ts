// The metrics API's arithmetic (docs/api.md §7.9): counters written by the event function at chosen
// times into a real store, then read back by period (in a time zone), domain and broadcast; query
// validation; calendar periods across DST. The end-to-end path through the SDK is in
// test/tracking/tracking.test.ts.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type EmailRec, type Store } from '../../src/store';
import { Events } from '../../src/events';
import { newId } from '../../src/ids';
import { emailMetrics, parseMetricsQuery } from '../../src/analytics/metrics';
import { periodStart, zoneFormatter } from '../../src/analytics/periods';
import { ApiError } from '../../src/errors';

let dir: string;
let store: Store;
const events = new Events();
const TEAM = newId();
const DOMAIN_A = newId();
const DOMAIN_B = newId();
const BROADCAST = newId();
// "now" for the queries: 2026-03-10 12:00 UTC.
const NOW = Date.UTC(2026, 2, 10, 12);

function email(domain: string, broadcast: string | null = null): EmailRec {
  return {
    id: newId(),
    team_id: TEAM,
    created_at: new Date(NOW).toISOString(),
    from: 'a@x.test',
    from_address: 'a@x.test',
    domain_id: domain,
    domain: 'x.test',
    to: ['r@dest.test'],
    cc: [],
    bcc: [],
    reply_to: [],
    subject: 's',
    headers: {},
    tags: [],
    scheduled_at: null,
    last_event: 'queued',
    message_id: '<m@x.test>',
    broadcast_id: broadcast,
    attachments: [],
    recipients: { 'r@dest.test': 'pending' },
    sent_at: null,
    api_key_id: null,
  };
}

/** Apply events to an email at the given times (ISO). */
async function happen(e: EmailRec, steps: [Parameters<Events['email']>[2], string, Record<string, unknown>?][]) {
  await store.write(async (tx) => {
    tx.emails.put(e);
    for (const [status, at, extra] of steps) await events.email(tx, e, status, { at, ...(extra ?? {}) });
  });
}

const err = (fn: () => unknown): ApiError => {
  try {
    fn();
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error('no error');
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'posthorn-metrics-'));
  store = await openStore({ dataDir: dir, retentionDays: 30, holdMs: 0 });
  await store.write(async (tx) => {
    for (const [id, name] of [
      [DOMAIN_A, 'a.test'],
      [DOMAIN_B, 'b.test'],
    ] as const)
      tx.domains.put({ id, team_id: TEAM, created_at: new Date(NOW).toISOString(), name } as never);
    tx.broadcasts.put({ id: BROADCAST, team_id: TEAM, created_at: new Date(NOW).toISOString(), name: 'Spring sale' } as never);
  });
  // Domain A: sent + delivered on 8 March (02:30 UTC = 7 March 21:30 in New York), opened twice, clicked once.
  await happen(email(DOMAIN_A), [
    ['sent', '2026-03-08T02:30:00.000Z'],
    ['delivered', '2026-03-08T02:31:00.000Z'],
    ['delivered', '2026-03-08T02:31:00.000Z'], // a second recipient's delivery: still one email
    ['opened', '2026-03-08T09:00:00.000Z'],
    ['opened', '2026-03-09T09:00:00.000Z'],
    ['clicked', '2026-03-09T09:01:00.000Z'],
    ['opened', '2026-03-09T09:02:00.000Z', { automated: 'scanner' }],
  ]);
  // Domain B, in a broadcast: sent, bounced permanently on 9 March.
  await happen(email(DOMAIN_B, BROADCAST), [
    ['sent', '2026-03-09T10:00:00.000Z'],
    ['bounced', '2026-03-09T10:01:00.000Z', { bounce: { type: 'Permanent', subType: 'General', message: 'x' } }],
  ]);
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('totals', () => {
  test('default range (the last 7 days): counts once per email, human hits only, rates', async () => {
    const m = await emailMetrics(store, TEAM, {}, NOW);
    expect(m.start_date).toBe('2026-03-04T00:00:00.000Z');
    expect(m.end_date).toBe(new Date(NOW).toISOString());
    expect(m.dimensions).toEqual([]);
    expect(m.granularity).toBe('daily');
    expect('data' in m).toBe(false);
    expect(m.totals).toMatchObject({
      sent: 2,
      delivered: 1,
      bounced: 1,
      bounced_permanent: 1,
      bounced_transient: 0,
      opened: 2,
      unique_opened: 1,
      clicked: 1,
      unique_clicked: 1,
      delivery_rate: 0.5,
      bounce_rate: 0.5,
      open_rate: 1,
      click_rate: 1,
      complaint_rate: 0,
    });
  });

  test('metrics picks what is answered', async () => {
    const m = await emailMetrics(store, TEAM, { metrics: 'sent,open_rate' }, NOW);
    expect(m.totals).toEqual({ sent: 2, open_rate: 1 });
  });
});

describe('breakdowns', () => {
  test('by period in a time zone: every day of the range, empty ones included', async () => {
    const m = await emailMetrics(store, TEAM, { dimensions: 'period', timezone: 'America/New_York', metrics: 'sent,opened' }, NOW);
    expect(m.data!.length).toBe(7);
    const byDay = Object.fromEntries(m.data!.map((r) => [r.period, [r.sent, r.opened]]));
    // 8 March 02:30 UTC is 7 March in New York (EST, UTC−5); 9 March is after the DST change (EDT, UTC−4).
    expect(byDay['2026-03-07T05:00:00.000Z']).toEqual([1, 0]);
    expect(byDay['2026-03-08T05:00:00.000Z']).toEqual([0, 1]);
    expect(byDay['2026-03-09T04:00:00.000Z']).toEqual([1, 1]);
    expect(byDay['2026-03-05T05:00:00.000Z']).toEqual([0, 0]);
  });

  test('by domain: names beside ids', async () => {
    const m = await emailMetrics(store, TEAM, { dimensions: 'domain', metrics: 'sent,delivered' }, NOW);
    expect(m.data).toEqual([
      { domain_id: DOMAIN_A, domain_name: 'a.test', sent: 1, delivered: 1 },
      { domain_id: DOMAIN_B, domain_name: 'b.test', sent: 1, delivered: 0 },
    ]);
  });

  test('by broadcast, filtered to one', async () => {
    const m = await emailMetrics(store, TEAM, { dimensions: 'broadcast', broadcast_id: BROADCAST, metrics: 'sent,bounced' }, NOW);
    expect(m.data).toEqual([{ broadcast_id: BROADCAST, broadcast_name: 'Spring sale', sent: 1, bounced: 1 }]);
    expect(m.totals).toEqual({ sent: 1, bounced: 1 });
  });

  test('by broadcast, unfiltered: the row of emails outside any broadcast has no broadcast keys (never null)', async () => {
    const m = await emailMetrics(store, TEAM, { dimensions: 'broadcast', metrics: 'sent' }, NOW);
    const outside = m.data!.find((r) => !('broadcast_id' in r))!;
    expect(outside).toEqual({ sent: expect.any(Number) });
    expect(m.data!.some((r) => r.broadcast_id === BROADCAST)).toBe(true);
    expect(JSON.stringify(m.data)).not.toContain('null');
  });

  test('by email, hourly, from the per-email buckets', async () => {
    const m = await emailMetrics(
      store,
      TEAM,
      { dimensions: 'email,period', granularity: 'hourly', start_date: '2026-03-09', end_date: '2026-03-09', metrics: 'opened,clicked' },
      NOW,
    );
    expect(m.data!.map((r) => [r.period, r.opened, r.clicked])).toEqual([
      ['2026-03-09T09:00:00.000Z', 1, 1],
      ['2026-03-09T10:00:00.000Z', 0, 0],
    ]);
  });

  test('a date as end_date includes that day; a domain filter', async () => {
    const m = await emailMetrics(store, TEAM, { start_date: '2026-03-08', end_date: '2026-03-08', domain_id: DOMAIN_A, metrics: 'sent,opened' }, NOW);
    expect(m.start_date).toBe('2026-03-08T00:00:00.000Z');
    expect(m.end_date).toBe('2026-03-09T00:00:00.000Z');
    expect(m.totals).toEqual({ sent: 1, opened: 1 });
  });
});

describe('by mailbox provider (site, a Posthorn extension)', () => {
  const T = newId();
  const other = (domain: string): EmailRec => ({ ...email(domain), team_id: T });
  const AT = (h: number) => new Date(Date.UTC(2026, 2, 9, h)).toISOString();
  let workspace: EmailRec;

  beforeAll(async () => {
    // Sent under the provider its claim expected (`other`: a Workspace domain, known only by its MX),
    // moved to `google` by its first attempt; delivered there; opened and complained about later.
    workspace = other(DOMAIN_A);
    await store.write(async (tx) => {
      tx.emails.put(workspace);
      let e = await events.email(tx, workspace, 'sent', { at: AT(8), site: 'other' });
      e = events.attribute(tx, e, 'google');
      tx.emails.put(e);
      e = await events.email(tx, e, 'delivered', { at: AT(9), site: 'google', current: true });
      e = await events.email(tx, e, 'opened', { at: AT(10), current: true });
      await events.email(tx, e, 'complained', { at: AT(11), current: true });
    });
    // Bounced at Microsoft for reputation, and another recipient's delivery at Yahoo: `delivered`
    // counts where it happened, the email's later events under its provider (Microsoft).
    const blocked = other(DOMAIN_A);
    await happen(blocked, [
      ['sent', AT(8), { site: 'microsoft' }],
      ['bounced', AT(9), { site: 'microsoft', class: 'reputation', bounce: { type: 'Permanent', subType: 'General', message: 'x' } }],
      ['delivered', AT(9), { site: 'yahoo' }],
    ]);
    // Suppressed at accept: never attempted, no provider.
    await happen(other(DOMAIN_B), [['suppressed', AT(8)]]);
  });

  test('rows by site add up to the totals; counts before any attempt have no `site`', async () => {
    const m = await emailMetrics(store, T, { dimensions: 'site', metrics: 'sent,delivered,bounced,bounced_reputation,complained,opened,suppressed' }, NOW);
    expect(m.data).toEqual([
      { sent: 0, delivered: 0, bounced: 0, bounced_reputation: 0, complained: 0, opened: 0, suppressed: 1 },
      { site: 'google', sent: 1, delivered: 1, bounced: 0, bounced_reputation: 0, complained: 1, opened: 1, suppressed: 0 },
      { site: 'microsoft', sent: 1, delivered: 0, bounced: 1, bounced_reputation: 1, complained: 0, opened: 0, suppressed: 0 },
      // What the claim expected, before the attempt showed `google`: its `sent` moved away.
      { site: 'other', sent: 0, delivered: 0, bounced: 0, bounced_reputation: 0, complained: 0, opened: 0, suppressed: 0 },
      { site: 'yahoo', sent: 0, delivered: 1, bounced: 0, bounced_reputation: 0, complained: 0, opened: 0, suppressed: 0 },
    ]);
    expect(m.totals).toEqual({ sent: 2, delivered: 2, bounced: 1, bounced_reputation: 1, complained: 1, opened: 1, suppressed: 1 });
    expect((await store.emails.get(T, workspace.id))?.site).toBe('google');
  });

  test('with the email dimension, from the per-email buckets', async () => {
    const m = await emailMetrics(store, T, { dimensions: 'email,site', email_id: workspace.id, metrics: 'sent,opened' }, NOW);
    expect(m.data).toEqual([{ email_id: workspace.id, site: 'google', sent: 1, opened: 1 }]);
  });

  test('bounces by class add up to `bounced`, and come only when named', async () => {
    const named = await emailMetrics(store, T, { metrics: 'bounced,bounced_reputation,bounced_recipient,bounced_unknown' }, NOW);
    expect(named.totals).toEqual({ bounced: 1, bounced_reputation: 1, bounced_recipient: 0, bounced_unknown: 0 });
    expect(Object.keys((await emailMetrics(store, T, {}, NOW)).totals)).not.toContain('bounced_reputation');
  });
});

describe('validation: 422 with the documented names', () => {
  const cases: [string, Record<string, string>, string][] = [
    ['unknown metric', { metrics: 'sent,likes' }, 'validation_error'],
    ['unknown dimension', { dimensions: 'country' }, 'validation_error'],
    ['unknown granularity', { granularity: 'yearly' }, 'validation_error'],
    ['unknown time zone', { timezone: 'Mars/Olympus' }, 'validation_error'],
    ['malformed date', { start_date: 'last tuesday' }, 'validation_error'],
    ['start not before end', { start_date: '2026-03-09', end_date: '2026-03-01' }, 'validation_error'],
    ['more than 400 days', { start_date: '2024-01-01', end_date: '2026-01-01' }, 'validation_error'],
    ['hourly over more than 31 days', { dimensions: 'period', granularity: 'hourly', start_date: '2026-01-01', end_date: '2026-03-01' }, 'validation_error'],
    ['email with broadcast', { dimensions: 'email,broadcast' }, 'validation_error'],
    ['email_id with broadcast_id', { email_id: newId(), broadcast_id: newId() }, 'validation_error'],
    ['an id that is no UUID', { domain_id: 'abc' }, 'invalid_parameter'],
    ['the ip dimension (one sending IP)', { dimensions: 'site,ip' }, 'validation_error'],
    ['an unknown bounce class', { metrics: 'bounced_sideways' }, 'validation_error'],
  ];
  for (const [name, q, code] of cases)
    test(name, () => {
      const e = err(() => parseMetricsQuery(q, NOW));
      expect([e.statusCode, e.errorName]).toEqual([422, code]);
    });
});

describe('calendar periods', () => {
  const ny = zoneFormatter('America/New_York')!;
  test('weeks start on Monday, months on the 1st, in the zone', () => {
    const at = Date.UTC(2026, 2, 11, 3); // Wednesday 11 March 03:00 UTC = Tuesday 10 March 23:00 EDT
    expect(new Date(periodStart(ny, 'weekly', at)).toISOString()).toBe('2026-03-09T04:00:00.000Z');
    expect(new Date(periodStart(ny, 'monthly', at)).toISOString()).toBe('2026-03-01T05:00:00.000Z');
    expect(new Date(periodStart(ny, 'daily', at)).toISOString()).toBe('2026-03-10T04:00:00.000Z');
    expect(new Date(periodStart(ny, 'hourly', at)).toISOString()).toBe('2026-03-11T03:00:00.000Z');
  });
  test('a zone with a half-hour offset', () => {
    const india = zoneFormatter('Asia/Kolkata')!;
    expect(new Date(periodStart(india, 'daily', Date.UTC(2026, 0, 1, 20))).toISOString()).toBe('2026-01-01T18:30:00.000Z');
  });
});
