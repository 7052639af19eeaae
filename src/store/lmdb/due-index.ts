// Due indexes: [dueAtMs, team, id] → null. They survive restarts; a job reads only the due head.
// One for scheduled emails (`schedule`), one for broadcasts with work to do (`broadcast_schedule`).
import type { Database, Key, LmdbEnv } from './env';
import type { DueIndexTx } from '../interface';

export class LmdbDueIndex implements DueIndexTx {
  private readonly db: Database;

  constructor(
    private readonly env: LmdbEnv,
    readonly name: string,
  ) {
    this.db = env.db(name);
  }

  async size(): Promise<number> {
    return this.db.getCount();
  }

  add(due: number, team: string, id: string): void {
    this.env.assertWriting();
    this.db.put([due, team, id], null);
  }

  remove(due: number, team: string, id: string): void {
    this.env.assertWriting();
    this.db.remove([due, team, id]);
  }

  async due(now: number, limit = 500): Promise<{ due: number; team: string; id: string }[]> {
    return Array.from(this.db.getKeys({ start: [0], end: [now + 1], limit }), (k) => {
      const [due, team, id] = k as Key[] as [number, string, string];
      return { due, team, id };
    });
  }

  async nextDue(): Promise<number | null> {
    this.env.latest();
    for (const key of this.db.getKeys({ limit: 1 })) return (key as Key[])[0] as number;
    return null;
  }
}
