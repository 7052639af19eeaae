// GET /emails/metrics (docs/api.md §7.9): totals, and rows broken down by period, domain,
// email, broadcast or — a Posthorn extension — mailbox provider (`site`), read from the hourly counter buckets the event function keeps — never from
// the emails themselves. Team buckets (13 months) answer everything except the `email` dimension
// and `email_id` filters, which read the per-email buckets (kept as long as emails are).
// Rates: delivery = delivered / sent, bounce = bounced / sent; open = unique_opened / delivered,
// click = unique_clicked / delivered, complaint = complained / delivered, unsubscribe =
// unsubscribed / delivered; 0 when the denominator is 0; four decimals.
import type { Counters, StoreReader } from '../store';
import { errors } from '../errors';
import { COUNTERS, type Counter } from '../event-catalogue';
import { BOUNCE_CLASSES } from '../mail/bounce-class';
import { isUuid } from '../ids';
import { dayStartBefore, periodStart, zonedToUtc, zoneFormatter, HOUR, DAY, type Granularity } from './periods';

const RATES = {
  delivery_rate: ['delivered', 'sent'],
  open_rate: ['unique_opened', 'delivered'],
  click_rate: ['unique_clicked', 'delivered'],
  bounce_rate: ['bounced', 'sent'],
  complaint_rate: ['complained', 'delivered'],
  unsubscribe_rate: ['unsubscribed', 'delivered'],
} as const satisfies Record<string, readonly [Counter, Counter]>;
/** The counters the catalogue lists (src/event-catalogue.ts), then the rates: what an answer has unless `metrics` names others. */
export const METRICS = [...COUNTERS, ...(Object.keys(RATES) as (keyof typeof RATES)[])];
/** Bounces by bounce class (event-catalogue.ts `byClass`): a Posthorn extension, given only when `metrics` names them. */
export const CLASS_METRICS = BOUNCE_CLASSES.map((c) => `bounced_${c}` as const);
export type Metric = (typeof METRICS)[number] | (typeof CLASS_METRICS)[number];
const NAMED: readonly string[] = [...METRICS, ...CLASS_METRICS];
export type Dimension = 'period' | 'domain' | 'email' | 'broadcast' | 'site' | 'ip';
const DIMENSIONS: Dimension[] = ['period', 'domain', 'email', 'broadcast', 'site', 'ip'];
/**
 * Sending IPs are a dimension once `delivery.ips` lists them (docs/api.md §7.9, "By sending IP");
 * while Posthorn sends from the one address the kernel picks, `ip` is refused, saying so, rather
 * than answering a single row.
 */
const IP_DIMENSION = 'The `ip` dimension needs several sending IPs, and this Posthorn sends from one: use `site`, or no dimension.';
const GRANULARITIES: Granularity[] = ['hourly', 'daily', 'weekly', 'monthly'];

/** Longest range, and longest hourly range: bounds on the work and on the rows of one answer. */
const MAX_RANGE_DAYS = 400;
const MAX_HOURLY_DAYS = 31;
/** Most rows one answer carries; a wider question is refused with a way to narrow it. */
export const MAX_ROWS = 10_000;

/** The query of GET /emails/metrics, its values as given (src/schemas/metrics.ts). */
export type { MetricsQuery } from '../schemas/metrics';
import type { MetricsQuery } from '../schemas/metrics';

/** The dimensions of a row as counted (ids; names are looked up once per row). */
interface Dims {
  period?: number;
  domain_id?: string;
  email_id?: string;
  broadcast_id?: string | null;
  site?: string | null;
  ip?: string | null;
}

interface Parsed {
  start: number;
  end: number;
  tz: Intl.DateTimeFormat;
  granularity: Granularity;
  metrics: Metric[];
  dimensions: Dimension[];
  domains: Set<string> | null;
  emails: Set<string> | null;
  broadcasts: Set<string> | null;
  /** The question needs the per-email buckets (the `email` dimension or `email_id`). */
  byEmail: boolean;
}

const list = (v: string | undefined) =>
  v === undefined || v === ''
    ? null
    : v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);

function ids(name: string, v: string | undefined): Set<string> | null {
  const l = list(v);
  if (!l) return null;
  for (const id of l) if (!isUuid(id)) throw errors.invalidParameter(`The \`${name}\` must be a comma-separated list of valid UUIDs.`);
  return new Set(l.map((s) => s.toLowerCase()));
}

/** An ISO 8601 date (a whole local day in `tz`) or date-time; `end`: a date means the end of that day. */
function instant(name: string, v: string, tz: Intl.DateTimeFormat, end: boolean): number {
  const day = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
  if (day) {
    const at = zonedToUtc(tz, Number(day[1]), Number(day[2]), Number(day[3]));
    if (!Number.isNaN(at)) return end ? zonedToUtc(tz, Number(day[1]), Number(day[2]), Number(day[3]) + 1) : at;
  } else if (/^\d{4}-\d{2}-\d{2}T/.test(v)) {
    const at = Date.parse(v);
    if (!Number.isNaN(at)) return at;
  }
  throw errors.validation(`Invalid \`${name}\`: use an ISO 8601 date (2026-01-31) or date-time (2026-01-31T12:00:00Z).`);
}

export function parseMetricsQuery(q: MetricsQuery, now = Date.now(), sendingIps = false): Parsed {
  const tzName = q.timezone || 'UTC';
  const tz = zoneFormatter(tzName);
  if (!tz) throw errors.validation(`Invalid \`timezone\`: \`${tzName}\` is not an IANA time zone.`);
  const granularity = (q.granularity || 'daily') as Granularity;
  if (!GRANULARITIES.includes(granularity)) throw errors.validation(`Invalid \`granularity\`: use one of ${GRANULARITIES.join(', ')}.`);
  const metrics = (list(q.metrics) ?? METRICS) as Metric[];
  for (const m of metrics) if (!NAMED.includes(m)) throw errors.validation(`Invalid metric \`${m}\`: use any of ${NAMED.join(', ')}.`);
  const dimensions = (list(q.dimensions) ?? []) as Dimension[];
  for (const d of dimensions) {
    if (d === 'ip' && !sendingIps) throw errors.validation(IP_DIMENSION);
    if (!DIMENSIONS.includes(d)) throw errors.validation(`Invalid dimension \`${d}\`: use any of ${DIMENSIONS.join(', ')}.`);
  }
  const emails = ids('email_id', q.email_id);
  const broadcasts = ids('broadcast_id', q.broadcast_id);
  const byEmail = dimensions.includes('email') || emails !== null;
  const byBroadcast = dimensions.includes('broadcast') || broadcasts !== null;
  if (byEmail && byBroadcast)
    throw errors.validation('The `email` dimension or `email_id` cannot be combined with the `broadcast` dimension or `broadcast_id`.');
  const end = q.end_date ? instant('end_date', q.end_date, tz, true) : now;
  const start = q.start_date ? instant('start_date', q.start_date, tz, false) : dayStartBefore(tz, end, 6);
  if (start >= end) throw errors.validation('`start_date` must be before `end_date`.');
  if (end - start > MAX_RANGE_DAYS * DAY) throw errors.validation(`The range may span at most ${MAX_RANGE_DAYS} days.`);
  if (granularity === 'hourly' && dimensions.includes('period') && end - start > MAX_HOURLY_DAYS * DAY)
    throw errors.validation(`An hourly breakdown may span at most ${MAX_HOURLY_DAYS} days.`);
  return {
    start,
    end,
    tz,
    granularity,
    metrics: [...new Set(metrics)],
    dimensions: [...new Set(dimensions)],
    domains: ids('domain_id', q.domain_id),
    emails,
    broadcasts,
    byEmail,
  };
}

function add(into: Counters, counts: Counters): void {
  for (const [k, n] of Object.entries(counts)) into[k] = (into[k] ?? 0) + n;
}

function values(c: Counters, metrics: Metric[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of metrics) {
    const rate = RATES[m as keyof typeof RATES];
    if (rate) {
      const d = c[rate[1]] ?? 0;
      out[m] = d === 0 ? 0 : Math.round(((c[rate[0]] ?? 0) / d) * 10_000) / 10_000;
    } else out[m] = c[m] ?? 0;
  }
  return out;
}

export async function emailMetrics(store: StoreReader, team: string, q: MetricsQuery, now = Date.now(), sendingIps = false) {
  const p = parseMetricsQuery(q, now, sendingIps);
  const totals: Counters = {};
  const rows = new Map<string, { dims: Dims; counts: Counters }>();
  const periods = new Map<number, number>();
  const periodOf = (hour: number) => {
    let s = periods.get(hour);
    if (s === undefined) {
      s = periodStart(p.tz, p.granularity, hour);
      periods.set(hour, s);
    }
    return s;
  };
  const each = (b: {
    hour: number;
    domain_id: string;
    broadcast_id: string | null;
    site: string | null;
    ip: string | null;
    email_id?: string;
    counts: Counters;
  }) => {
    if (p.domains && !p.domains.has(b.domain_id)) return;
    if (p.broadcasts && !(b.broadcast_id && p.broadcasts.has(b.broadcast_id))) return;
    if (p.emails && !(b.email_id && p.emails.has(b.email_id))) return;
    add(totals, b.counts);
    if (p.dimensions.length === 0) return;
    const dims: Dims = {};
    if (p.dimensions.includes('period')) dims.period = periodOf(b.hour);
    if (p.dimensions.includes('domain')) dims.domain_id = b.domain_id;
    if (p.dimensions.includes('email')) dims.email_id = b.email_id;
    if (p.dimensions.includes('broadcast')) dims.broadcast_id = b.broadcast_id;
    if (p.dimensions.includes('site')) dims.site = b.site;
    if (p.dimensions.includes('ip')) dims.ip = b.ip;
    const key = JSON.stringify(dims);
    let row = rows.get(key);
    if (!row) {
      if (rows.size >= MAX_ROWS) throw errors.validation(`The answer would have more than ${MAX_ROWS} rows: narrow the range, the dimensions or the filters.`);
      row = { dims, counts: {} };
      rows.set(key, row);
    }
    add(row.counts, b.counts);
  };
  // Buckets are hourly: the range covers every hour that starts inside it.
  const from = Math.ceil(p.start / HOUR) * HOUR;
  if (p.byEmail) await store.metrics.scanEmails(team, from, p.end, each);
  else await store.metrics.scan(team, from, p.end, each);

  // A breakdown by period alone lists every period of the range, empty ones too (a chart's x axis).
  if (p.dimensions.length === 1 && p.dimensions[0] === 'period')
    for (let h = from; h < p.end; h += HOUR) {
      const dims = { period: periodOf(h) };
      const key = JSON.stringify(dims);
      if (!rows.has(key)) rows.set(key, { dims, counts: {} });
    }

  const domainNames = new Map<string, string | null>();
  const broadcastNames = new Map<string, string | null>();
  const data: Record<string, string | number>[] = [];
  for (const { dims, counts } of rows.values()) {
    const row: Record<string, string | number> = {};
    if (dims.period !== undefined) row.period = new Date(dims.period).toISOString();
    // The SDK types the dimension fields optional, never null: a value that is not there is left
    // out (the row of emails outside any broadcast has no `broadcast_id`).
    if (dims.domain_id !== undefined) {
      if (!domainNames.has(dims.domain_id)) domainNames.set(dims.domain_id, (await store.domains.get(team, dims.domain_id))?.name ?? null);
      if (dims.domain_id) row.domain_id = dims.domain_id;
      const name = domainNames.get(dims.domain_id);
      if (name) row.domain_name = name;
    }
    if (dims.email_id !== undefined) row.email_id = dims.email_id;
    if (dims.broadcast_id) {
      const id = dims.broadcast_id;
      if (!broadcastNames.has(id)) broadcastNames.set(id, (await store.broadcasts.get(team, id))?.name ?? null);
      row.broadcast_id = id;
      const name = broadcastNames.get(id);
      if (name) row.broadcast_name = name;
    }
    // Counts made before any attempt (`suppressed`, `failed`; emails still queued) have no site: no `site` field.
    if (dims.site) row.site = dims.site;
    // Counts of mail the kernel chose the address of (or made before any attempt) have no sending IP: no `ip` field.
    if (dims.ip) row.ip = dims.ip;
    data.push(Object.assign(row, values(counts, p.metrics)));
  }
  const order = (r: Record<string, string | number>) =>
    [r.period ?? '', r.domain_name ?? '', r.email_id ?? '', r.broadcast_id ?? '', r.site ?? '', r.ip ?? ''].join('\u0000');
  data.sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : 0));

  return {
    object: 'metrics' as const,
    start_date: new Date(p.start).toISOString(),
    end_date: new Date(p.end).toISOString(),
    metrics: p.metrics,
    dimensions: p.dimensions,
    granularity: p.granularity,
    totals: values(totals, p.metrics),
    ...(p.dimensions.length ? { data } : {}),
  };
}
