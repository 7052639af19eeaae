// Due indexes on PostgreSQL: (name, due, team, id) rows in one table, one `name` per index
// (scheduled emails, broadcasts with work to do, imports, automation runs and cleanups). In a unit
// of work `due` claims what it returns (`FOR UPDATE SKIP LOCKED`): a scheduled email is released
// by one node, the other passes over it while that unit runs, and after it the entry is gone.
import { claimed, unitOf, type Exec } from './env';
import type { DueIndexTx } from '../interface';

export class PgDueIndex implements DueIndexTx {
  constructor(
    readonly name: string,
    private readonly exec: Exec,
  ) {}

  bind(exec: Exec): PgDueIndex {
    return new PgDueIndex(this.name, exec);
  }

  add(due: number, team: string, id: string): void {
    unitOf(this.exec).write('INSERT INTO due_index (name, due, team, id) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING', [this.name, due, team, id]);
  }

  remove(due: number, team: string, id: string): void {
    unitOf(this.exec).write('DELETE FROM due_index WHERE name = $1 AND due = $2 AND team = $3 AND id = $4', [this.name, due, team, id]);
  }

  async due(now: number, limit = 500): Promise<{ due: number; team: string; id: string }[]> {
    const rows: { due: string; team: string; id: string }[] = await this.exec.query(
      `SELECT due, team, id FROM due_index WHERE name = $1 AND due <= $2 ORDER BY due, team, id LIMIT $3${claimed(this.exec)}`,
      [this.name, now, limit],
    );
    return rows.map((r) => ({ due: Number(r.due), team: r.team, id: r.id }));
  }

  async nextDue(): Promise<number | null> {
    const [row] = await this.exec.query('SELECT due FROM due_index WHERE name = $1 ORDER BY due LIMIT 1', [this.name]);
    return row ? Number(row.due) : null;
  }

  async size(): Promise<number> {
    const [row] = await this.exec.query('SELECT count(*)::int AS n FROM due_index WHERE name = $1', [this.name]);
    return Number(row!.n);
  }
}
