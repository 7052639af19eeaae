// The webhook outbox on PostgreSQL: (team, webhook, due, event) rows, served per endpoint round
// robin as the LMDB outbox is. In a unit of work `due` claims the entries it returns (`FOR UPDATE
// SKIP LOCKED`); the dispatcher moves each to its next attempt time (the lease) before sending.
import { claimed, unitOf, type Exec } from './env';
import type { OutboxHead, OutboxTx } from '../interface';

const byEndpoint = (a: { team: string; webhook: string }, b: { team: string; webhook: string }) =>
  a.team < b.team ? -1 : a.team > b.team ? 1 : a.webhook < b.webhook ? -1 : a.webhook > b.webhook ? 1 : 0;

export class PgOutbox implements OutboxTx {
  constructor(private readonly exec: Exec) {}

  bind(exec: Exec): PgOutbox {
    return new PgOutbox(exec);
  }

  put(team: string, webhook: string, due: number, eventId: string): void {
    unitOf(this.exec).write('INSERT INTO webhook_outbox (team, webhook, due, event_id) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING', [
      team,
      webhook,
      due,
      eventId,
    ]);
  }

  remove(team: string, webhook: string, due: number, eventId: string): void {
    unitOf(this.exec).write('DELETE FROM webhook_outbox WHERE team = $1 AND webhook = $2 AND due = $3 AND event_id = $4', [team, webhook, due, eventId]);
  }

  async due(team: string, webhook: string, now: number, limit: number): Promise<{ due: number; id: string }[]> {
    const rows: { due: string; event_id: string }[] = await this.exec.query(
      `SELECT due, event_id FROM webhook_outbox WHERE team = $1 AND webhook = $2 AND due <= $3 ORDER BY due, event_id LIMIT $4${claimed(this.exec)}`,
      [team, webhook, now, limit],
    );
    return rows.map((r) => ({ due: Number(r.due), id: r.event_id }));
  }

  async heads(after?: { team: string; webhook: string }): Promise<OutboxHead[]> {
    const rows: { team: string; webhook: string; due: string }[] = await this.exec.query(
      'SELECT team, webhook, min(due) AS due FROM webhook_outbox GROUP BY team, webhook',
    );
    const heads = rows.map((r) => ({ team: r.team, webhook: r.webhook, due: Number(r.due) })).sort(byEndpoint);
    if (!after) return heads;
    // Endpoints after `after` first, then around to it.
    const cut = heads.findIndex((h) => byEndpoint(h, after) > 0);
    return cut < 0 ? heads : [...heads.slice(cut), ...heads.slice(0, cut)];
  }

  async nextDue(): Promise<number | null> {
    // LIMIT as a parameter: the statement is prepared, not planned at each call (PgQueue.nextDue).
    const [row] = await this.exec.query('SELECT due FROM webhook_outbox ORDER BY due LIMIT $1', [1]);
    return row ? Number(row.due) : null;
  }

  async size(): Promise<number> {
    const [row] = await this.exec.query('SELECT count(*)::int AS n FROM webhook_outbox');
    return Number(row!.n);
  }
}
