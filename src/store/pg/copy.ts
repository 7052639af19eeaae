// `posthorn db copy`: an LMDB install moved into PostgreSQL (README.md, "Cluster mode"). Reads
// everything the LMDB store holds (../lmdb/dump.ts) and writes it in bounded transactions to an
// empty, migrated database: records with their retention recomputed, bodies with their bytes,
// work in progress (queue, outbox, due indexes, spool, incoming queue, triggers, import files) as it stood, counters,
// memberships, choices, idempotency keys — and the per-install secrets, so that signed links and
// VERP return paths made before the move keep working after it. Run with the service stopped.
import { createHash } from 'node:crypto';
import { dump, type DumpItem } from '../lmdb/dump';
import type { LmdbStore } from '../lmdb';
import { PgCollection } from './collection';
import { PgDueIndex } from './due-index';
import type { PgUnit } from './env';
import type { PgStore } from '.';
import { METRICS_TTL_MS, SECRET_NAMES, type Rec } from '../interface';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Items per transaction, and bytes of bodies per transaction at most. */
const BATCH_ITEMS = 500;
const BATCH_BYTES = 16 * 1024 * 1024;

/** An item with what must be read from LMDB asynchronously before its transaction (bytes). */
type Ready = { item: DumpItem; body?: unknown; raw?: Uint8Array };

export class TargetNotEmpty extends Error {}

/** Counts of what was copied, by kind. */
export type Copied = Record<string, number>;

export async function copyLmdbToPg(from: LmdbStore, to: PgStore, progress: (copied: Copied) => void = () => {}): Promise<Copied> {
  const { env, repos, emailTtlMs } = to.internals();
  if ((await env.query('SELECT 1 FROM teams LIMIT 1')).length || (await env.query('SELECT 1 FROM emails LIMIT 1')).length)
    throw new TargetNotEmpty('the database already holds a Posthorn install: `db copy` fills an empty one only');
  const byTable = new Map<string, PgCollection<Rec, string>>();
  for (const repo of Object.values(repos)) if (repo instanceof PgCollection) byTable.set(repo.table, repo as unknown as PgCollection<Rec, string>);
  const copied: Copied = {};

  const apply = (u: PgUnit, { item, body, raw }: Ready) => {
    switch (item.kind) {
      case 'record':
        return byTable.get(item.table)!.bind(u).put(item.rec);
      case 'content':
        return repos[item.repo].bind(u).put(item.team, item.id, body as never);
      case 'queue':
        return repos.queue.bind(u).put(item.entry, item.due);
      case 'outbox':
        return repos.outbox.bind(u).put(item.team, item.webhook, item.due, item.id);
      case 'due':
        return new PgDueIndex(item.name, u).add(item.due, item.team, item.id);
      case 'spool': {
        const spool = repos.inboundSpool.bind(u);
        spool.add(item.msg, raw ?? new Uint8Array(0), item.due ?? 0);
        if (item.due === null) spool.update(item.msg, null);
        return;
      }
      case 'incoming':
        return repos.incoming.bind(u).add(item.rec);
      case 'trigger':
        return repos.automationTriggers.bind(u).add(item.rec);
      case 'progress':
        return repos.broadcastProgress.bind(u).put(item.team, item.broadcast, item.contact, item.email);
      case 'membership':
        return u.write('INSERT INTO memberships (team, segment, contact, at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING', [
          item.team,
          item.segment,
          item.contact,
          item.at,
        ]);
      case 'choice':
        return repos.topicChoices.bind(u).set(item.team, item.contact, item.topic, item.subscription);
      case 'idempotency':
        return repos.idempotency.bind(u).put(item.team, item.endpoint, item.key, item.rec);
      case 'metric':
        return u.write(
          'INSERT INTO metrics (team, hour, domain_id, broadcast_id, site, ip, counts, expires) VALUES ($1, $2, $3, $4, $5, $6, $7::text::jsonb, $8)',
          [
            item.team,
            item.hour,
            item.domain_id,
            item.broadcast_id ?? '',
            item.site ?? '',
            item.ip ?? '',
            JSON.stringify(item.counts),
            item.hour + METRICS_TTL_MS,
          ],
        );
      case 'emailMetric':
        return u.write(
          'INSERT INTO metrics_email (team, hour, email_id, domain_id, broadcast_id, site, ip, counts, expires) VALUES ($1, $2, $3, $4, $5, $6, $7, $8::text::jsonb, $9)',
          [
            item.team,
            item.hour,
            item.email_id,
            item.domain_id,
            item.broadcast_id,
            item.site ?? null,
            item.ip ?? null,
            JSON.stringify(item.counts),
            item.hour + emailTtlMs,
          ],
        );
      case 'link':
        return u.write('INSERT INTO metrics_links (team, broadcast_id, url_hash, url, clicks, unique_clicks, expires) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
          item.team,
          item.broadcast_id,
          createHash('sha256').update(item.url).digest('hex'),
          item.url,
          item.clicks,
          item.unique_clicks,
          Date.now() + METRICS_TTL_MS,
        ]);
      case 'hold':
        return repos.queueHolds.bind(u).hold(item.hold);
      case 'site':
        return repos.sites.bind(u).put(item.state);
      case 'mtaSts':
        return repos.mtaSts.bind(u).put(item.policy);
      case 'tlsReport': {
        const n = Math.floor(Date.parse(`${item.report.day}T00:00:00Z`) / DAY);
        return u.write('INSERT INTO tls_reports (team, day_n, domain, value, expires) VALUES ($1, $2, $3, $4::text::jsonb, $5)', [
          item.report.team_id,
          n,
          item.report.domain,
          JSON.stringify(item.report),
          (n + 1) * DAY + emailTtlMs,
        ]);
      }
      case 'sendCount':
        return u.write('INSERT INTO send_counts (team, period, start, n, expires) VALUES ($1, $2, $3, $4, $5)', [
          item.team,
          item.period,
          item.start,
          item.n,
          item.start + (item.period === 'h' ? HOUR : DAY) + DAY,
        ]);
    }
  };

  let batch: Ready[] = [];
  let bytes = 0;
  const flush = async () => {
    if (!batch.length) return;
    const items = batch;
    batch = [];
    bytes = 0;
    await env.transaction(
      async (u) => {
        for (const r of items) apply(u, r);
      },
      () => null,
    );
    for (const { item } of items) copied[item.kind] = (copied[item.kind] ?? 0) + 1;
    progress(copied);
  };
  for (const item of dump(from, [...byTable.keys()])) {
    const ready: Ready = { item };
    if (item.kind === 'content') {
      ready.body = await from[item.repo].get(item.team, item.id);
      if (!ready.body) continue;
      bytes += (await from[item.repo].byteSize(item.team, item.id)) ?? 0;
    } else if (item.kind === 'spool') {
      ready.raw = await from.inboundSpool.raw(item.msg.id);
      bytes += ready.raw?.byteLength ?? 0;
    }
    batch.push(ready);
    if (batch.length >= BATCH_ITEMS || bytes >= BATCH_BYTES) await flush();
  }
  await flush();

  // The files of imports still being processed, so that they resume after the move.
  for (const imp of await everyImport(from)) {
    if (imp.status !== 'queued' && imp.status !== 'in_progress') continue;
    await to.importFiles.save(imp.team_id, imp.id, from.importFiles.read(imp.team_id, imp.id, 0), Number.MAX_SAFE_INTEGER);
    copied.importFile = (copied.importFile ?? 0) + 1;
  }
  // The secrets the LMDB install signed its links and return paths with replace the new database's.
  await env.transaction(
    async (u) => {
      for (const name of SECRET_NAMES) u.write('UPDATE meta SET value = $2 WHERE name = $1', [`secret:${name}`, from.secret(name)]);
    },
    () => null,
  );
  progress(copied);
  return copied;
}

function everyImport(from: LmdbStore) {
  return from.contactImports.everything();
}
