// Scheduled sends: [dueAtMs, team, emailId] → null. Survives restarts; the scheduler reads only
// the due head of the index.
import type { Database, Key } from 'lmdb';
import type { StoreEnv } from './env';

export class Schedule {
  private readonly db: Database;

  constructor(env: StoreEnv) {
    this.db = env.db('schedule');
  }

  addInTxn(due: number, team: string, emailId: string): void {
    this.db.put([due, team, emailId], null);
  }

  removeInTxn(due: number, team: string, emailId: string): void {
    this.db.remove([due, team, emailId]);
  }

  due(now: number, limit = 500): { due: number; team: string; emailId: string }[] {
    return Array.from(this.db.getKeys({ start: [0], end: [now + 1], limit }), (k) => {
      const [due, team, emailId] = k as Key[] as [number, string, string];
      return { due, team, emailId };
    });
  }

  nextDue(): number | null {
    for (const key of this.db.getKeys({ limit: 1 })) return (key as Key[])[0] as number;
    return null;
  }
}
