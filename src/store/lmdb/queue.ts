// The durable delivery queue: entries keyed [dueAtMs, entryId], so "what is due" is a range scan
// from the start of the index; `queue.by_email` finds an email's entries. An entry is moved to its
// next attempt time (persisted) before each attempt, so a crash mid-attempt means a retry.
import type { Database, Key, LmdbEnv } from './env';
import type { QueueEntry } from '../email-records';
import type { QueueTx } from '../interface';
import { uuidTime } from '../../ids';

export class LmdbQueue implements QueueTx {
  private readonly db: Database;
  private readonly byEmail: Database;

  constructor(private readonly env: LmdbEnv) {
    this.db = env.db('queue');
    this.byEmail = env.db('queue.by_email');
  }

  put(entry: QueueEntry, due: number): void {
    this.env.assertWriting();
    const prev = this.byEmail.get([entry.team_id, entry.email_id, entry.id]) as number | undefined;
    if (prev !== undefined) this.db.remove([prev, entry.id]);
    this.db.put([due, entry.id], entry);
    this.byEmail.put([entry.team_id, entry.email_id, entry.id], due);
  }

  remove(entry: QueueEntry): void {
    this.env.assertWriting();
    const due = this.byEmail.get([entry.team_id, entry.email_id, entry.id]) as number | undefined;
    if (due !== undefined) this.db.remove([due, entry.id]);
    this.byEmail.remove([entry.team_id, entry.email_id, entry.id]);
  }

  async due(now: number, limit: number): Promise<{ due: number; entry: QueueEntry }[]> {
    return Array.from(this.db.getRange({ start: [0], end: [now + 1], limit }), ({ key, value }) => ({
      due: (key as Key[])[0] as number,
      entry: value as QueueEntry,
    }));
  }

  async nextDue(): Promise<number | null> {
    for (const key of this.db.getKeys({ limit: 1 })) return (key as Key[])[0] as number;
    return null;
  }

  async entriesOf(team: string, emailId: string): Promise<QueueEntry[]> {
    const out: QueueEntry[] = [];
    for (const { key, value } of this.byEmail.getRange({ start: [team, emailId, ''], end: [team, emailId, '\uffff'] })) {
      const e = this.db.get([value as number, (key as Key[])[2]]) as QueueEntry | undefined;
      if (e) out.push(e);
    }
    return out;
  }

  async size(): Promise<number> {
    return this.db.getCount();
  }

  async stats(now: number): Promise<{ ready: number; waiting: number; oldest: number | null }> {
    const total = this.db.getCount();
    const ready = this.db.getCount({ start: [0], end: [now + 1] });
    // Entry ids are UUIDv7: the smallest id is the entry queued first; its first 48 bits are that time.
    let first: string | null = null;
    for (const key of this.db.getKeys()) {
      const id = String((key as Key[])[1]);
      if (first === null || id < first) first = id;
    }
    const oldest = first === null ? null : uuidTime(first);
    return { ready, waiting: total - ready, oldest };
  }
}
