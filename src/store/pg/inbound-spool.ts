// The inbound spool on PostgreSQL (docs/mail.md §4): one row per message answered 250 — its
// envelope and state as JSON, its bytes, its due time (null once given up on, with `expires` for
// retention). In a unit of work `due` claims the messages it returns (`FOR UPDATE SKIP LOCKED`).
import { claimed, unitOf, type Exec } from './env';
import { parse } from './collection';
import type { InboundSpoolTx } from '../interface';
import type { SpooledMessage } from '../inbound-records';

export class PgInboundSpool implements InboundSpoolTx {
  constructor(
    private readonly exec: Exec,
    private readonly retentionMs: number,
  ) {}

  bind(exec: Exec): PgInboundSpool {
    return new PgInboundSpool(exec, this.retentionMs);
  }

  add(msg: SpooledMessage, raw: Uint8Array, due: number): void {
    unitOf(this.exec).write('INSERT INTO inbound_spool (id, due, value, raw) VALUES ($1, $2, $3::text::json, $4)', [msg.id, due, JSON.stringify(msg), raw]);
  }

  update(msg: SpooledMessage, due: number | null): void {
    const expires = due === null ? Date.parse(msg.received_at) + this.retentionMs : null;
    unitOf(this.exec).write('UPDATE inbound_spool SET due = $2, expires = $3, value = $4::text::json WHERE id = $1', [
      msg.id,
      due,
      expires,
      JSON.stringify(msg),
    ]);
  }

  remove(id: string): void {
    unitOf(this.exec).write('DELETE FROM inbound_spool WHERE id = $1', [id]);
  }

  async due(now: number, limit: number): Promise<{ due: number; id: string }[]> {
    const rows: { due: string; id: string }[] = await this.exec.query(
      `SELECT due, id FROM inbound_spool WHERE due IS NOT NULL AND due <= $1 ORDER BY due, id LIMIT $2${claimed(this.exec)}`,
      [now, limit],
    );
    return rows.map((r) => ({ due: Number(r.due), id: r.id }));
  }

  async nextDue(): Promise<number | null> {
    // LIMIT as a parameter: the statement is prepared, not planned at each call (PgQueue.nextDue).
    const [row] = await this.exec.query('SELECT due FROM inbound_spool WHERE due IS NOT NULL ORDER BY due LIMIT $1', [1]);
    return row ? Number(row.due) : null;
  }

  async get(id: string): Promise<SpooledMessage | undefined> {
    // In a unit of work, locked until it ends: an outcome and a claim of the same message take turns.
    const [row] = await this.exec.query(`SELECT value::text AS value FROM inbound_spool WHERE id = $1${this.exec.unit ? ' FOR UPDATE' : ''}`, [id]);
    return row ? parse<SpooledMessage>(row.value) : undefined;
  }

  async raw(id: string): Promise<Uint8Array | undefined> {
    const [row] = await this.exec.query('SELECT raw FROM inbound_spool WHERE id = $1', [id]);
    return row ? (row.raw as Uint8Array) : undefined;
  }

  async counts(): Promise<{ waiting: number; failed: number }> {
    const [row] = await this.exec.query(
      'SELECT count(*) FILTER (WHERE due IS NOT NULL)::int AS waiting, count(*) FILTER (WHERE due IS NULL)::int AS failed FROM inbound_spool',
    );
    return { waiting: Number(row!.waiting), failed: Number(row!.failed) };
  }

  /** Delete messages given up on whose retention is over (the sweep). */
  async sweep(exec: Exec, now: number, batch: number): Promise<number> {
    const [row] = await exec.query(
      `WITH d AS (DELETE FROM inbound_spool WHERE id IN (SELECT id FROM inbound_spool WHERE expires <= $1 LIMIT ${batch}) RETURNING 1) SELECT count(*)::int AS n FROM d`,
      [now],
    );
    return Number(row!.n);
  }
}
