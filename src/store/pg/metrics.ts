// Metric counters on PostgreSQL (../interface.ts `Metrics`): team buckets (team, hour, domain,
// broadcast, site, sending IP; schema version 4 added the site, 16 the IP), per-email buckets (team, hour, email) and a broadcast's links (team, broadcast,
// sha256(url)). Counts are added by the database (`posthorn_add_counts`), never read and written
// back: every node's sends count into the same hour at once without a conflict. A team bucket is
// one row per shard (schema version 17), summed when read.
import { createHash } from 'node:crypto';
import { unitOf, type Exec, type Many } from './env';
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
/** Shards of a team's hour bucket (schema.ts, version 17): more than the connections adding at once to it. */
const SHARDS = 16;

/**
 * Per-email buckets, upserted many at once: the last dimensions count, the sending IP once known
 * stays (as LMDB's metrics.ts keeps it), counts are added.
 */
const EMAIL_BUCKETS: Many = {
  text: `INSERT INTO metrics_email (team, hour, email_id, domain_id, broadcast_id, site, ip, counts, expires)
     SELECT team, hour, email_id, domain_id, broadcast_id, site, ip, counts, expires FROM json_to_recordset($1::text::json)
       AS r(team text, hour bigint, email_id text, domain_id text, broadcast_id text, site text, ip text, counts jsonb, expires bigint)
     ON CONFLICT (team, hour, email_id) DO UPDATE SET domain_id = excluded.domain_id, broadcast_id = excluded.broadcast_id, site = excluded.site,
       ip = COALESCE(excluded.ip, metrics_email.ip),
       counts = posthorn_add_counts(metrics_email.counts, excluded.counts)`,
  merge: (earlier, later) => ({ ...later, ip: later.ip ?? earlier.ip }),
};

export class PgMetrics implements MetricsTx {
  constructor(
    private readonly exec: Exec,
    private readonly emailTtlMs: number,
  ) {}

  bind(exec: Exec): PgMetrics {
    return new PgMetrics(exec, this.emailTtlMs);
  }

  add(team: string, at: number, dims: MetricDims, counts: Counters): void {
    const unit = unitOf(this.exec);
    const hour = Math.floor(at / HOUR) * HOUR;
    // Every outcome of the hour adds to this row: added last, with the commit (env.ts, Additions).
    const key = [team, hour, dims.domain_id, dims.broadcast_id ?? '', dims.site ?? '', dims.ip ?? ''];
    unit.additions.add(key.join('\u0000'), {
      // Into this connection's shard (schema.ts, version 17): transactions in flight at once add to different rows.
      text: `INSERT INTO metrics (team, hour, domain_id, broadcast_id, site, ip, shard, counts, expires) VALUES ($1, $2, $3, $4, $5, $6, pg_backend_pid() % ${SHARDS}, $7::text::jsonb, $8)
       ON CONFLICT (team, hour, domain_id, broadcast_id, site, ip, shard) DO UPDATE SET counts = posthorn_add_counts(metrics.counts, excluded.counts)`,
      params: (sum) => [...key, sum, hour + METRICS_TTL_MS],
      counts,
    });
    // The email's own bucket: with the commit too, the unit's (or group's) in one statement.
    unit.additions.addRow(
      EMAIL_BUCKETS,
      `${team}\u0000${hour}\u0000${dims.email_id}`,
      {
        team,
        hour,
        email_id: dims.email_id,
        domain_id: dims.domain_id,
        broadcast_id: dims.broadcast_id,
        site: dims.site ?? null,
        ip: dims.ip ?? null,
        expires: hour + this.emailTtlMs,
      },
      counts,
    );
  }

  addLink(team: string, broadcastId: string, url: string, clicks: number, uniqueClicks: number): void {
    unitOf(this.exec).write(
      `INSERT INTO metrics_links (team, broadcast_id, url_hash, url, clicks, unique_clicks, expires) VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (team, broadcast_id, url_hash) DO UPDATE SET clicks = metrics_links.clicks + excluded.clicks, unique_clicks = metrics_links.unique_clicks + excluded.unique_clicks`,
      [team, broadcastId, createHash('sha256').update(url).digest('hex'), url, clicks, uniqueClicks, Date.now() + METRICS_TTL_MS],
    );
  }

  async scan(team: string, from: number, to: number, each: (b: MetricBucket) => void): Promise<void> {
    const rows: { hour: string; domain_id: string; broadcast_id: string; site: string; ip: string; counts: string }[] = await this.exec.query(
      'SELECT hour, domain_id, broadcast_id, site, ip, counts::text AS counts FROM metrics WHERE team = $1 AND hour >= $2 AND hour < $3 ORDER BY hour, domain_id, broadcast_id, site, ip',
      [team, from, to],
    );
    // A bucket's shards are consecutive rows: summed into one.
    let cur: MetricBucket | null = null;
    for (const r of rows) {
      const hour = Number(r.hour);
      const counts: Counters = JSON.parse(r.counts);
      if (
        cur &&
        cur.hour === hour &&
        cur.domain_id === r.domain_id &&
        (cur.broadcast_id ?? '') === r.broadcast_id &&
        (cur.site ?? '') === r.site &&
        (cur.ip ?? '') === r.ip
      ) {
        for (const [k, v] of Object.entries(counts)) cur.counts[k] = (cur.counts[k] ?? 0) + v;
        continue;
      }
      if (cur) each(cur);
      cur = { hour, domain_id: r.domain_id, broadcast_id: r.broadcast_id || null, site: r.site || null, ip: r.ip || null, counts };
    }
    if (cur) each(cur);
  }

  async scanEmails(team: string, from: number, to: number, each: (b: EmailMetricBucket) => void): Promise<void> {
    const rows: { hour: string; email_id: string; domain_id: string; broadcast_id: string | null; site: string | null; ip: string | null; counts: string }[] =
      await this.exec.query(
        'SELECT hour, email_id, domain_id, broadcast_id, site, ip, counts::text AS counts FROM metrics_email WHERE team = $1 AND hour >= $2 AND hour < $3 ORDER BY hour, email_id',
        [team, from, to],
      );
    for (const r of rows)
      each({
        hour: Number(r.hour),
        email_id: r.email_id,
        domain_id: r.domain_id,
        broadcast_id: r.broadcast_id,
        site: r.site,
        ip: r.ip,
        counts: JSON.parse(r.counts),
      });
  }

  async links(team: string, broadcastId: string, q: PageQuery): Promise<Page<LinkClicks & { cursor: string }>> {
    const limit = q.limit ?? 20;
    const upwards = q.before === undefined;
    const cursor = q.before ?? q.after;
    // In URL-hash order; `before` reads backwards from its cursor, so the page ends right before it.
    const rows: { url: string; clicks: string; unique_clicks: string; url_hash: string }[] = await this.exec.query(
      `SELECT url, clicks, unique_clicks, url_hash FROM metrics_links WHERE team = $1 AND broadcast_id = $2${cursor === undefined ? '' : ` AND url_hash ${upwards ? '>' : '<'} $4`}
       ORDER BY url_hash ${upwards ? 'ASC' : 'DESC'} LIMIT $3`,
      cursor === undefined ? [team, broadcastId, limit + 1] : [team, broadcastId, limit + 1, cursor],
    );
    const all = rows.map((r) => ({ url: r.url, clicks: Number(r.clicks), unique_clicks: Number(r.unique_clicks), cursor: r.url_hash }));
    const has_more = all.length > limit;
    const data = all.slice(0, limit);
    if (!upwards) data.reverse();
    return { has_more, data };
  }
}
