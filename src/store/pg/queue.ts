// The delivery queue on PostgreSQL: one row per entry with its due time, indexed (due, domain, id)
// so "what is due" reads the head of one index. In a unit of work, `due` claims: the entries it
// returns are locked (`FOR UPDATE SKIP LOCKED`), so two nodes claiming at once take different
// entries, and the claim moves each to its next attempt time — its lease — before the attempt
// (delivery/engine.ts). A node killed mid-attempt leaves its entries at that time: then they are
// due again, for whichever node claims them. A held entry is kept at HELD_DUE, past every due time.
import { claimed, unitOf, type Exec } from './env';
import { parse } from './collection';
import type { QueueEntry } from '../email-records';
import { HELD_DUE, QUEUE_SCAN_LIMIT, type QueueCursor, type QueuePass, type QueueTx, type QueuedEntry } from '../interface';
import { uuidTime } from '../../ids';

export class PgQueue implements QueueTx {
  /** With regions (README.md, "Regions"): only entries of no region or of this node's are due here. */
  private readonly mine: string;

  constructor(
    private readonly exec: Exec,
    private readonly region: string | null = null,
  ) {
    this.mine = region ? ' AND (region IS NULL OR region = $R)' : '';
  }

  bind(exec: Exec): PgQueue {
    return new PgQueue(exec, this.region);
  }

  /** The region filter with its parameter numbered `n`, and the parameters it adds. */
  private only(n: number): [string, unknown[]] {
    return this.region ? [this.mine.replace('$R', `$${n}`), [this.region]] : ['', []];
  }

  put(entry: QueueEntry, due: number): void {
    unitOf(this.exec).write(
      `INSERT INTO queue (id, team, email_id, domain, due, entry, region) VALUES ($1, $2, $3, $4, $5, $6::text::json, $7)
       ON CONFLICT (id) DO UPDATE SET domain = excluded.domain, due = excluded.due, entry = excluded.entry, region = excluded.region`,
      [entry.id, entry.team_id, entry.email_id, entry.domain, entry.held ? HELD_DUE : due, JSON.stringify(entry), entry.region ?? null],
    );
  }

  add(entry: QueueEntry, due: number): void {
    if (entry.held) {
      this.put(entry, due);
      return;
    }
    // Held at once when the team holds the destination: decided by the insert itself, which costs
    // no round trip of its own (a hold committed meanwhile on another node: the claim holds it).
    unitOf(this.exec).write(
      `INSERT INTO queue (id, team, email_id, domain, due, entry, region)
       SELECT $1, $2, $3, $4, CASE WHEN h.held THEN ${HELD_DUE} ELSE $5 END,
              CASE WHEN h.held THEN jsonb_set($6::text::jsonb, '{held}', '"destination"')::json ELSE $6::text::json END, $7
       FROM (SELECT EXISTS (SELECT 1 FROM queue_holds WHERE team = $2 AND destination = $4) AS held) h`,
      [entry.id, entry.team_id, entry.email_id, entry.domain, due, JSON.stringify(entry), entry.region ?? null],
    );
  }

  defer(domain: string, entryId: string, from: number, to: number): void {
    // Only from where the claim saw it, and never a held entry.
    unitOf(this.exec).write(`UPDATE queue SET due = $4 WHERE id = $1 AND domain = $2 AND due = $3 AND due < ${HELD_DUE}`, [entryId, domain, from, to]);
  }

  remove(entry: QueueEntry): void {
    unitOf(this.exec).write('DELETE FROM queue WHERE id = $1', [entry.id]);
  }

  async due(now: number, limit: number, pass?: QueuePass, after = -1): Promise<{ due: number; entry: QueueEntry }[]> {
    now = Math.min(now, HELD_DUE - 1);
    // Keys first (the index alone), so that entries passed over are neither read nor locked.
    const picked: string[] = [];
    let looked = 0;
    let from: [number, string, string] | null = null;
    const max = Math.max(QUEUE_SCAN_LIMIT, limit);
    /** Domains whose every later key the claim passes over ('domain'): the database leaves them out, not this loop. */
    const skipped: string[] = [];
    let stopped = false;
    while (!stopped && picked.length < limit && looked < max) {
      const size = Math.min(max - looked, Math.max(100, 4 * (limit - picked.length)));
      const params: unknown[] = [now, ...(from ?? [after])];
      const cond = [from ? '(due, domain, id) > ($2, $3, $4)' : 'due > $2'];
      if (this.region) cond.push(this.mine.replace('$R', `$${params.push(this.region)}`).slice(' AND '.length));
      const keys = `SELECT id, domain, due FROM queue WHERE due <= $1 AND ${cond.join(' AND ')} ORDER BY due, domain, id`;
      // With domains skipped, the database walks past their keys — at most the scan's keys left
      // (QUEUE_SCAN_LIMIT, as if they were looked at here) — and `n` says how far it went.
      const rows: { id: string; domain: string; due: string; n?: string }[] = await this.exec.query(
        skipped.length
          ? `SELECT id, domain, due, n FROM (SELECT id, domain, due, row_number() OVER () AS n FROM (${keys} LIMIT $${params.push(max - looked)}) k) k
             WHERE domain <> ALL($${params.push(skipped)}::text[]) LIMIT $${params.push(size)}`
          : `${keys} LIMIT $${params.push(size)}`,
        params,
      );
      const seen = looked;
      const skipping = new Set(skipped);
      for (const r of rows) {
        looked = r.n === undefined ? looked + 1 : seen + Number(r.n);
        if (picked.length >= limit) break;
        if (skipping.has(r.domain)) continue;
        const verdict = pass?.(r.domain, r.id, Number(r.due));
        if (verdict === 'stop') {
          stopped = true;
          break;
        }
        // Its site has no room: its domain's keys after it are passed over here, and left out by the next query.
        if (verdict === 'domain') {
          skipping.add(r.domain);
          skipped.push(r.domain);
        } else if (!verdict) picked.push(r.id);
      }
      // Fewer than asked: the due keys (or, skipping, the keys the scan may look at) are all seen.
      if (rows.length < size) break;
      const last = rows[rows.length - 1]!;
      from = [Number(last.due), last.domain, last.id];
    }
    if (!picked.length) return [];
    // Still due, and not claimed by another node meanwhile.
    const rows: { due: string; entry: string }[] = await this.exec.query(
      `SELECT due, entry::text AS entry FROM queue WHERE id = ANY($1) AND due <= $2 ORDER BY due, domain, id${claimed(this.exec)}`,
      [picked, now],
    );
    return rows.map((r) => ({ due: Number(r.due), entry: parse<QueueEntry>(r.entry) }));
  }

  async nextDue(): Promise<number | null> {
    // With parameters, so that the statement is prepared (Bun.sql sends one without as a simple query, planned at each call).
    const [only, region] = this.only(2);
    const [row] = await this.exec.query(`SELECT due FROM queue WHERE due < $1${only} ORDER BY due LIMIT 1`, [HELD_DUE, ...region]);
    return row ? Number(row.due) : null;
  }

  async ofTeam(team: string, { limit, destination, after }: { limit: number; destination?: string; after?: QueueCursor }): Promise<QueuedEntry[]> {
    const rows: { due: string; entry: string }[] =
      destination === undefined
        ? await this.exec.query('SELECT due, entry::text AS entry FROM queue WHERE team = $1 ORDER BY domain, id LIMIT $2', [team, limit])
        : await this.exec.query(
            `SELECT due, entry::text AS entry FROM queue WHERE team = $1 AND domain = $2${after === undefined ? '' : ' AND id > $4'} ORDER BY id LIMIT $3`,
            after === undefined ? [team, destination, limit] : [team, destination, limit, after.id],
          );
    return rows.map((r) => ({ due: Number(r.due) >= HELD_DUE ? null : Number(r.due), entry: parse<QueueEntry>(r.entry) }));
  }

  async entriesOf(team: string, emailId: string): Promise<QueueEntry[]> {
    // In a unit of work, locked until it ends: an outcome and a claim of the same entry take turns.
    const rows: { entry: string }[] = await this.exec.query(
      `SELECT entry::text AS entry FROM queue WHERE team = $1 AND email_id = $2 ORDER BY id${this.exec.unit ? ' FOR UPDATE' : ''}`,
      [team, emailId],
    );
    return rows.map((r) => parse<QueueEntry>(r.entry));
  }

  async size(): Promise<number> {
    const [row] = await this.exec.query('SELECT count(*)::int AS n FROM queue');
    return Number(row!.n);
  }

  async stats(now: number): Promise<{ ready: number; waiting: number; oldest: number | null }> {
    const [row] = await this.exec.query('SELECT count(*) FILTER (WHERE due <= $1)::int AS ready, count(*)::int AS total, min(id) AS first FROM queue', [now]);
    const ready = Number(row!.ready);
    // Entry ids are UUIDv7: the smallest is the entry queued first; its first 48 bits are that time.
    return { ready, waiting: Number(row!.total) - ready, oldest: row!.first ? uuidTime(String(row!.first)) : null };
  }
}
