// The durable delivery queue: entries keyed [dueAtMs, domain, entryId], so "what is due" is a
// range scan from the start of the index, and the scan can pass over a destination it has no room
// for by its key alone, without reading the entry; `queue.by_email` ([team, email, entry] →
// [due, domain]) finds an email's entries. An entry is moved to its next attempt time (persisted)
// before each attempt, so a crash mid-attempt means a retry.
import type { Database, Key, LmdbEnv } from './env';
import type { QueueEntry } from '../email-records';
import type { QueueTx } from '../interface';
import { uuidTime } from '../../ids';

/** Keys looked at per `due` call at most, entries passed over included. */
const SCAN_LIMIT = 5000;

export class LmdbQueue implements QueueTx {
  private readonly db: Database;
  private readonly byEmail: Database;

  constructor(private readonly env: LmdbEnv) {
    this.db = env.db('queue');
    this.byEmail = env.db('queue.by_email');
  }

  /**
   * Entries stored by Posthorn 0.1 were keyed [due, entryId] and indexed by due alone: rewritten
   * once, at open, in the current form.
   */
  async upgrade(): Promise<number> {
    const old: { key: Key; entry: QueueEntry }[] = [];
    for (const { key, value } of this.db.getRange({})) if ((key as Key[]).length === 2) old.push({ key, entry: value as QueueEntry });
    if (!old.length) return 0;
    await this.env.transaction(() => {
      for (const { key, entry } of old) {
        const due = (key as Key[])[0] as number;
        this.db.remove(key);
        this.db.put([due, entry.domain, entry.id], entry);
        this.byEmail.put([entry.team_id, entry.email_id, entry.id], [due, entry.domain]);
      }
    });
    return old.length;
  }

  /** Where an entry is now: its key in the queue, from the email index. */
  private placeOf(entry: QueueEntry): Key | undefined {
    const at = this.byEmail.get([entry.team_id, entry.email_id, entry.id]) as [number, string] | undefined;
    return at && [at[0], at[1], entry.id];
  }

  put(entry: QueueEntry, due: number): void {
    this.env.assertWriting();
    const prev = this.placeOf(entry);
    if (prev) this.db.remove(prev);
    this.db.put([due, entry.domain, entry.id], entry);
    this.byEmail.put([entry.team_id, entry.email_id, entry.id], [due, entry.domain]);
  }

  remove(entry: QueueEntry): void {
    this.env.assertWriting();
    const at = this.placeOf(entry);
    if (at) this.db.remove(at);
    this.byEmail.remove([entry.team_id, entry.email_id, entry.id]);
  }

  async due(now: number, limit: number, pass?: (domain: string, entryId: string) => boolean): Promise<{ due: number; entry: QueueEntry }[]> {
    const out: { due: number; entry: QueueEntry }[] = [];
    let looked = 0;
    for (const key of this.db.getKeys({ start: [0], end: [now + 1] })) {
      if (out.length >= limit || ++looked > Math.max(SCAN_LIMIT, limit)) break;
      const [due, domain, id] = key as [number, string, string];
      if (pass?.(domain, id)) continue;
      const entry = this.db.get(key) as QueueEntry | undefined;
      if (entry) out.push({ due, entry });
    }
    return out;
  }

  async nextDue(): Promise<number | null> {
    for (const key of this.db.getKeys({ limit: 1 })) return (key as Key[])[0] as number;
    return null;
  }

  async entriesOf(team: string, emailId: string): Promise<QueueEntry[]> {
    const out: QueueEntry[] = [];
    for (const { key, value } of this.byEmail.getRange({ start: [team, emailId, ''], end: [team, emailId, '\uffff'] })) {
      const [due, domain] = value as [number, string];
      const e = this.db.get([due, domain, (key as Key[])[2]]) as QueueEntry | undefined;
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
      const id = String((key as Key[])[2]);
      if (first === null || id < first) first = id;
    }
    const oldest = first === null ? null : uuidTime(first);
    return { ready, waiting: total - ready, oldest };
  }
}
