// The durable delivery queue: entries keyed [dueAtMs, domain, entryId], so "what is due" is a
// range scan from the start of the index, and the scan can pass over a destination it has no room
// for by its key alone, without reading the entry. Two indexes: `queue.by_email`
// ([team, email, entry] → [due, domain]) finds an email's entries, `queue.by_destination`
// ([team, domain, entry] → due) a team's entries to one destination (queue controls, GET /queue).
// An entry is moved to its next attempt time (persisted) before each attempt, so a crash
// mid-attempt means a retry. A held entry is keyed at HELD_DUE, past every due time: claims never
// reach it, whatever the size of a held backlog.
import type { Database, Key, LmdbEnv } from './env';
import type { QueueEntry } from '../email-records';
import type { LmdbQueueHolds } from './queue-holds';
import { HELD_DUE, QUEUE_SCAN_LIMIT, type QueuePass, type QueueTx, type QueuedEntry } from '../interface';
import { uuidTime } from '../../ids';

export class LmdbQueue implements QueueTx {
  private readonly db: Database;
  private readonly byEmail: Database;
  private readonly byDest: Database;
  constructor(
    private readonly env: LmdbEnv,
    /** The teams' held destinations: a new entry to one is held at once. */
    private readonly holds: LmdbQueueHolds,
  ) {
    this.db = env.db('queue');
    this.byEmail = env.db('queue.by_email');
    this.byDest = env.db('queue.by_destination');
  }

  /**
   * Entries stored by Posthorn 0.1 were keyed [due, entryId] and indexed by due alone: rewritten
   * once, at open, in the current form. A queue from before the destination index gets it.
   */
  async upgrade(): Promise<number> {
    const old: { key: Key; entry: QueueEntry }[] = [];
    for (const { key, value } of this.db.getRange({})) if ((key as Key[]).length === 2) old.push({ key, entry: value as QueueEntry });
    const unindexed = this.byDest.getCount() === 0 && this.db.getCount() > 0;
    if (!old.length && !unindexed) return 0;
    await this.env.transaction(() => {
      for (const { key, entry } of old) {
        const due = (key as Key[])[0] as number;
        this.db.remove(key);
        this.db.put([due, entry.domain, entry.id], entry);
        this.byEmail.put([entry.team_id, entry.email_id, entry.id], [due, entry.domain]);
      }
      for (const { key, value } of this.db.getRange({})) {
        const e = value as QueueEntry;
        this.byDest.put([e.team_id, e.domain, e.id], (key as Key[])[0]);
      }
    });
    return old.length;
  }

  /** Where an entry is now: its key in the queue, from the email index. */
  private placeOf(entry: Pick<QueueEntry, 'team_id' | 'email_id' | 'id'>): Key | undefined {
    const at = this.byEmail.get([entry.team_id, entry.email_id, entry.id]) as [number, string] | undefined;
    return at && [at[0], at[1], entry.id];
  }

  private place(entry: QueueEntry, due: number): void {
    this.db.put([due, entry.domain, entry.id], entry);
    this.byEmail.put([entry.team_id, entry.email_id, entry.id], [due, entry.domain]);
    this.byDest.put([entry.team_id, entry.domain, entry.id], due);
  }

  put(entry: QueueEntry, due: number): void {
    this.env.assertWriting();
    const prev = this.placeOf(entry);
    if (prev) this.db.remove(prev);
    this.place(entry, entry.held ? HELD_DUE : due);
  }

  add(entry: QueueEntry, due: number): void {
    this.env.assertWriting();
    if (!entry.held && this.holds.held(entry.team_id, entry.domain)) entry = { ...entry, held: 'destination' };
    this.place(entry, entry.held ? HELD_DUE : due);
  }

  remove(entry: QueueEntry): void {
    this.env.assertWriting();
    const at = this.placeOf(entry);
    if (at) this.db.remove(at);
    this.byEmail.remove([entry.team_id, entry.email_id, entry.id]);
    this.byDest.remove([entry.team_id, entry.domain, entry.id]);
  }

  defer(domain: string, entryId: string, from: number, to: number): void {
    this.env.assertWriting();
    const entry = this.db.get([from, domain, entryId]) as QueueEntry | undefined;
    if (!entry || entry.held) return;
    this.db.remove([from, domain, entryId]);
    this.place(entry, to);
  }

  async due(now: number, limit: number, pass?: QueuePass, after = -1): Promise<{ due: number; entry: QueueEntry }[]> {
    const out: { due: number; entry: QueueEntry }[] = [];
    let looked = 0;
    for (const key of this.db.getKeys({ start: [Math.max(0, after)], end: [Math.min(now, HELD_DUE - 1) + 1] })) {
      if (out.length >= limit || ++looked > Math.max(QUEUE_SCAN_LIMIT, limit)) break;
      const [due, domain, id] = key as [number, string, string];
      if (due <= after) continue;
      const verdict = pass?.(domain, id, due);
      if (verdict === 'stop') break;
      if (verdict) continue;
      const entry = this.db.get(key) as QueueEntry | undefined;
      if (entry) out.push({ due, entry });
    }
    return out;
  }

  async nextDue(): Promise<number | null> {
    this.env.latest();
    for (const key of this.db.getKeys({ end: [HELD_DUE], limit: 1 })) return (key as Key[])[0] as number;
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

  async ofTeam(team: string, { limit, destination, after }: { limit: number; destination?: string; after?: string }): Promise<QueuedEntry[]> {
    const out: QueuedEntry[] = [];
    const range =
      destination === undefined
        ? { start: [team, ''], end: [team, '\uffff'] }
        : { start: after === undefined ? [team, destination, ''] : [team, destination, `${after}\u0000`], end: [team, destination, '\uffff'] };
    for (const { key, value } of this.byDest.getRange({ ...range, limit })) {
      const [, domain, id] = key as [string, string, string];
      const due = value as number;
      const entry = this.db.get([due, domain, id]) as QueueEntry | undefined;
      if (entry) out.push({ due: due === HELD_DUE ? null : due, entry });
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
