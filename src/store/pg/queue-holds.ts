// Destinations held per team (docs/api.md §19.7) on PostgreSQL: (team, destination) → the hold.
// Their queue entries are kept out of the due range (queue.ts); a handful of rows.
import { unitOf, type Exec } from './env';
import { parse } from './collection';
import type { QueueHoldsTx } from '../interface';
import type { QueueHold } from '../delivery-records';

export class PgQueueHolds implements QueueHoldsTx {
  constructor(private readonly exec: Exec) {}

  bind(exec: Exec): PgQueueHolds {
    return new PgQueueHolds(exec);
  }

  async has(team: string, destination: string): Promise<boolean> {
    return (await this.exec.query('SELECT 1 FROM queue_holds WHERE team = $1 AND destination = $2', [team, destination])).length > 0;
  }

  async list(team: string): Promise<QueueHold[]> {
    const rows: { value: string }[] = await this.exec.query('SELECT value::text AS value FROM queue_holds WHERE team = $1 ORDER BY destination', [team]);
    return rows.map((r) => parse<QueueHold>(r.value));
  }

  async all(): Promise<QueueHold[]> {
    const rows: { value: string }[] = await this.exec.query('SELECT value::text AS value FROM queue_holds ORDER BY team, destination');
    return rows.map((r) => parse<QueueHold>(r.value));
  }

  hold(h: QueueHold): void {
    unitOf(this.exec).write(
      'INSERT INTO queue_holds (team, destination, value) VALUES ($1, $2, $3::text::json) ON CONFLICT (team, destination) DO UPDATE SET value = excluded.value',
      [h.team_id, h.destination, JSON.stringify(h)],
    );
  }

  release(team: string, destination: string): void {
    unitOf(this.exec).write('DELETE FROM queue_holds WHERE team = $1 AND destination = $2', [team, destination]);
  }
}
