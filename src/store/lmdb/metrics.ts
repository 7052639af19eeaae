// Metric counters (../interface.ts `Metrics`):
//   metrics         [team, hour, domain_id, broadcast_id | '', site?, ip?] → Counters     (13 months)
//   metrics_email   [team, hour, email_id] → {domain_id, broadcast_id, site, ip, counts} (email retention)
// A team key has its site only when there is one: counts with none (before any attempt, and every
// count made before sites were kept) share the four-part key they always had; likewise its sending
// IP (`delivery.ips`), only when the attempt was bound to one — then after its site ('' if none).
//   metrics_links   [team, broadcast_id, sha256(url)] → {url, clicks, unique_clicks} (13 months)
// A team or link key's expiry enters the TTL index when the key is created. Per-email keys, one per
// email and hour (every email sent has one), start with their hour instead: the sweep deletes each
// team's hours past retention by range (sweepEmails), with no TTL row to write — a row each would
// be half the bytes of the counts it expires. URLs are hashed in keys: LMDB keys are limited to
// ~2 KB and a tracked URL may be longer.
import { createHash } from 'node:crypto';
import type { Database, Key, LmdbEnv } from './env';
import type { TtlIndex } from './ttl';
import { SWEEP_BATCH, teamsIn } from './teams';
import {
  METRICS_TTL_MS,
  type Counters,
  type EmailMetricBucket,
  type LinkClicks,
  type MetricBucket,
  type MetricDims,
  type MetricsTx,
  type Page,
  type PageQuery,
} from '../interface';

const HOUR = 3_600_000;

interface EmailValue {
  domain_id: string;
  broadcast_id: string | null;
  site?: string | null;
  ip?: string | null;
  counts: Counters;
}

function plus(into: Counters, add: Counters): Counters {
  const out = { ...into };
  for (const [k, n] of Object.entries(add)) out[k] = (out[k] ?? 0) + n;
  return out;
}

export class LmdbMetrics implements MetricsTx {
  private readonly team: Database;
  private readonly email: Database;
  private readonly link: Database;

  constructor(
    private readonly env: LmdbEnv,
    private readonly ttl: TtlIndex,
    private readonly emailTtlMs: number,
  ) {
    this.team = env.db('metrics');
    this.email = env.db('metrics_email');
    this.link = env.db('metrics_links');
    ttl.register('metrics', (key) => this.team.remove(key as never));
    // Rows written before per-email keys were swept by range: still honoured.
    ttl.register('metrics_email', (key) => this.email.remove(key as never));
    ttl.register('metrics_links', (key) => this.link.remove(key as never));
  }

  add(team: string, at: number, dims: MetricDims, counts: Counters): void {
    this.env.assertWriting();
    const hour = Math.floor(at / HOUR) * HOUR;
    const tk: Key[] = [team, hour, dims.domain_id, dims.broadcast_id ?? ''];
    if (dims.site || dims.ip) tk.push(dims.site ?? '');
    if (dims.ip) tk.push(dims.ip);
    const cur = this.team.get(tk as Key) as Counters | undefined;
    if (!cur) this.ttl.add('metrics', tk, hour + METRICS_TTL_MS);
    this.team.put(tk as Key, plus(cur ?? {}, counts));
    const ek: Key[] = [team, hour, dims.email_id];
    const e = this.email.get(ek as Key) as EmailValue | undefined;
    this.email.put(ek as Key, {
      domain_id: dims.domain_id,
      broadcast_id: dims.broadcast_id,
      site: dims.site ?? null,
      ip: dims.ip ?? e?.ip ?? null,
      counts: plus(e?.counts ?? {}, counts),
    } satisfies EmailValue);
  }

  /** Delete every team's per-email counters of hours past retention (the store's sweep). Resolves to how many. */
  async sweepEmails(now: number): Promise<number> {
    const end = now - this.emailTtlMs + 1; // hours h with h + emailTtlMs <= now
    let removed = 0;
    for (const team of teamsIn(this.email)) {
      for (;;) {
        const old = Array.from(this.email.getKeys({ start: [team, 0], end: [team, end], limit: SWEEP_BATCH }));
        if (old.length === 0) break;
        await this.env.transaction(() => {
          for (const k of old) this.email.remove(k);
        });
        removed += old.length;
        if (old.length < SWEEP_BATCH) break;
      }
    }
    return removed;
  }

  addLink(team: string, broadcastId: string, url: string, clicks: number, uniqueClicks: number): void {
    this.env.assertWriting();
    const key: Key[] = [team, broadcastId, createHash('sha256').update(url).digest('hex')];
    const cur = this.link.get(key as Key) as LinkClicks | undefined;
    if (!cur) this.ttl.add('metrics_links', key, Date.now() + METRICS_TTL_MS);
    this.link.put(key as Key, { url, clicks: (cur?.clicks ?? 0) + clicks, unique_clicks: (cur?.unique_clicks ?? 0) + uniqueClicks } satisfies LinkClicks);
  }

  async scan(team: string, from: number, to: number, each: (b: MetricBucket) => void): Promise<void> {
    for (const { key, value } of this.team.getRange({ start: [team, from], end: [team, to] })) {
      const [, hour, domain_id, broadcast, site, ip] = key as [string, number, string, string, string | undefined, string | undefined];
      each({ hour, domain_id, broadcast_id: broadcast || null, site: site || null, ip: ip || null, counts: value as Counters });
    }
  }

  async scanEmails(team: string, from: number, to: number, each: (b: EmailMetricBucket) => void): Promise<void> {
    for (const { key, value } of this.email.getRange({ start: [team, from], end: [team, to] })) {
      const [, hour, email_id] = key as [string, number, string];
      const v = value as EmailValue;
      each({ hour, email_id, domain_id: v.domain_id, broadcast_id: v.broadcast_id, site: v.site ?? null, ip: v.ip ?? null, counts: v.counts });
    }
  }

  async links(team: string, broadcastId: string, q: PageQuery): Promise<Page<LinkClicks & { cursor: string }>> {
    const limit = q.limit ?? 20;
    const lo: Key[] = [team, broadcastId, q.after !== undefined ? `${q.after}\u0000` : ''];
    const hi: Key[] = [team, broadcastId, q.before ?? '\uffff'];
    // `before` reads backwards from the cursor, so the page ends right before it.
    const range =
      q.before !== undefined
        ? this.link.getRange({ start: hi as Key, end: lo as Key, reverse: true, limit: limit + 2 })
        : this.link.getRange({ start: lo as Key, end: hi as Key, limit: limit + 1 });
    // A reverse range starts at its start key inclusive: the cursor row itself is not part of the page.
    const rows = Array.from(range, ({ key, value }) => ({ ...(value as LinkClicks), cursor: (key as string[])[2] })).filter((r) => r.cursor !== q.before);
    const has_more = rows.length > limit;
    const data = rows.slice(0, limit);
    if (q.before !== undefined) data.reverse();
    return { has_more, data };
  }
}
