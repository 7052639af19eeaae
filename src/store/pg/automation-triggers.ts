// The automation trigger inbox on PostgreSQL: (id) → trigger, oldest first (UUIDv7). In a unit of
// work `next` claims the batch it returns (`FOR UPDATE SKIP LOCKED`): two nodes taking triggers at
// once take different ones, and each trigger leaves in the unit that acts on it.
import { claimed, unitOf, type Exec } from './env';
import { parse } from './collection';
import type { AutomationTriggersTx } from '../interface';
import type { TriggerRec } from '../automation-records';

export class PgAutomationTriggers implements AutomationTriggersTx {
  constructor(private readonly exec: Exec) {}

  bind(exec: Exec): PgAutomationTriggers {
    return new PgAutomationTriggers(exec);
  }

  async next(limit: number): Promise<TriggerRec[]> {
    const rows: { value: string }[] = await this.exec.query(`SELECT value::text AS value FROM automation_triggers ORDER BY id LIMIT $1${claimed(this.exec)}`, [
      limit,
    ]);
    return rows.map((r) => parse<TriggerRec>(r.value));
  }

  async size(): Promise<number> {
    const [row] = await this.exec.query('SELECT count(*)::int AS n FROM automation_triggers');
    return Number(row!.n);
  }

  add(t: TriggerRec): void {
    unitOf(this.exec).write('INSERT INTO automation_triggers (id, value) VALUES ($1, $2::text::json) ON CONFLICT (id) DO UPDATE SET value = excluded.value', [
      t.id,
      JSON.stringify(t),
    ]);
  }

  remove(id: string): void {
    unitOf(this.exec).write('DELETE FROM automation_triggers WHERE id = $1', [id]);
  }
}
