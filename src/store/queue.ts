// The durable delivery queue: entries keyed [dueAtMs, entryId], so "what is due" is a range scan
// from the start of the index. An entry is moved to its next attempt time (persisted) before
// each attempt, so a crash mid-attempt means a retry, never a silent drop (SPEC.md §2).
import type { Database, Key } from 'lmdb';
import type { StoreEnv } from './env';
import type { QueueEntry } from './email-records';

export class DeliveryQueue {
  private readonly db: Database;
  private readonly byEmail: Database;

  constructor(env: StoreEnv) {
    this.db = env.db('queue');
    this.byEmail = env.db('queue.by_email');
  }

  /** Inside a transaction: add or move an entry to `due` (ms). */
  putInTxn(entry: QueueEntry, due: number): void {
    const prev = this.byEmail.get([entry.team_id, entry.email_id, entry.id]) as number | undefined;
    if (prev !== undefined) this.db.remove([prev, entry.id]);
    this.db.put([due, entry.id], entry);
    this.byEmail.put([entry.team_id, entry.email_id, entry.id], due);
  }

  /** Inside a transaction: the entry is finished (every recipient delivered or bounced). */
  removeInTxn(entry: QueueEntry): void {
    const due = this.byEmail.get([entry.team_id, entry.email_id, entry.id]) as number | undefined;
    if (due !== undefined) this.db.remove([due, entry.id]);
    this.byEmail.remove([entry.team_id, entry.email_id, entry.id]);
  }

  /** Entries due at `now`, earliest first. */
  due(now: number, limit: number): { due: number; entry: QueueEntry }[] {
    return Array.from(this.db.getRange({ start: [0], end: [now + 1], limit }), ({ key, value }) => ({
      due: (key as Key[])[0] as number,
      entry: value as QueueEntry,
    }));
  }

  /** Due time of the earliest entry, or null when the queue is empty. */
  nextDue(): number | null {
    for (const key of this.db.getKeys({ limit: 1 })) return (key as Key[])[0] as number;
    return null;
  }

  /** The live entries of one email. */
  entriesOf(team: string, emailId: string): QueueEntry[] {
    const out: QueueEntry[] = [];
    for (const { key, value } of this.byEmail.getRange({ start: [team, emailId, ''], end: [team, emailId, '\uffff'] })) {
      const e = this.db.get([value as number, (key as Key[])[2]]) as QueueEntry | undefined;
      if (e) out.push(e);
    }
    return out;
  }

  size(): number {
    return this.db.getCount();
  }
}
