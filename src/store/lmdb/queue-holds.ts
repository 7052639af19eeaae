// Destinations held per team (docs/api.md §19.7): [team, destination] → the hold. Their queue
// entries are kept out of the due range (queue.ts); the delivery engine reads every hold at each
// claim to hold entries queued to them since, so this stays a handful of records.
import type { Database, Key, LmdbEnv } from './env';
import type { QueueHoldsTx } from '../interface';
import type { QueueHold } from '../delivery-records';

export class LmdbQueueHolds implements QueueHoldsTx {
  private readonly db: Database;

  constructor(private readonly env: LmdbEnv) {
    this.db = env.db('queue_holds');
  }

  async has(team: string, destination: string): Promise<boolean> {
    return this.held(team, destination);
  }

  /** `has`, at once: for the queue, which holds a new entry to a held destination as it adds it. */
  held(team: string, destination: string): boolean {
    // Its presence is the answer: the record is not decoded.
    return this.db.doesExist([team, destination]);
  }

  async list(team: string): Promise<QueueHold[]> {
    return [...this.db.getRange({ start: [team, ''], end: [team, '\uffff'] })].map(({ value }) => value as QueueHold);
  }

  async all(): Promise<QueueHold[]> {
    return [...this.db.getRange({})].map(({ value }) => value as QueueHold);
  }

  hold(h: QueueHold): void {
    this.env.assertWriting();
    this.db.put([h.team_id, h.destination] as Key, h);
  }

  release(team: string, destination: string): void {
    this.env.assertWriting();
    this.db.remove([team, destination]);
  }
}
