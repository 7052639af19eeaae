// The automation trigger inbox (../interface.ts AutomationTriggers): [id] → trigger. Ids are
// UUIDv7, so the head of the database is the oldest trigger; the back office reads a bounded batch
// of it and removes each trigger in the unit of work that starts its runs.
import type { Database, LmdbEnv } from './env';
import type { AutomationTriggersTx } from '../interface';
import type { TriggerRec } from '../automation-records';

export class LmdbAutomationTriggers implements AutomationTriggersTx {
  private readonly db: Database;

  constructor(private readonly env: LmdbEnv) {
    this.db = env.db('automation_triggers');
  }

  async next(limit: number): Promise<TriggerRec[]> {
    return Array.from(this.db.getRange({ limit }), ({ value }) => value as TriggerRec);
  }

  async size(): Promise<number> {
    return this.db.getCount();
  }

  add(t: TriggerRec): void {
    this.env.assertWriting();
    this.db.put([t.id], t);
  }

  remove(id: string): void {
    this.env.assertWriting();
    this.db.remove([id]);
  }
}
