// Due indexes: [dueAtMs, team, id] → null. Survive restarts; a job reads only the due head.
// One for scheduled emails (`schedule`), one for broadcasts with work to do (`broadcast_schedule`).
import type { Database, Key } from 'lmdb';
import type { StoreEnv } from './env';

export class Schedule {
  private readonly db: Database;

  constructor(env: StoreEnv, name = 'schedule') {
    this.db = env.db(name);
  }

  addInTxn(due: number, team: string, id: string): void {
    this.db.put([due, team, id], null);
  }

  removeInTxn(due: number, team: string, id: string): void {
    this.db.remove([due, team, id]);
  }

  due(now: number, limit = 500): { due: number; team: string; id: string }[] {
    return Array.from(this.db.getKeys({ start: [0], end: [now + 1], limit }), (k) => {
      const [due, team, id] = k as Key[] as [number, string, string];
      return { due, team, id };
    });
  }

  nextDue(): number | null {
    for (const key of this.db.getKeys({ limit: 1 })) return (key as Key[])[0] as number;
    return null;
  }
}
