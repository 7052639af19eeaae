// The durable delivery queue: entries keyed [dueAtMs, domain, entryId], so "what is due" is a
// range scan from the start of the index, and the scan can pass over a destination it has no room
// for by its key alone, without reading the entry. One index, `queue.by_destination`
// ([team, domain, email, entry] → due), serves both other ways in: a team's entries to one
// destination (queue controls, GET /queue) and — through the domains of the email's recipients —
// an email's entries (a prefix of that key). One index row per entry, not two: each entry placed
// (accepted, claimed, deferred) is two writes, not three (README.md, "Past experiments").
// An entry is moved to its next attempt time (persisted) before each attempt, so a crash
// mid-attempt means a retry. A held entry is keyed at HELD_DUE, past every due time: claims never
// reach it, whatever the size of a held backlog.
import type { Database, Key, LmdbEnv } from './env';
import { ENCODING } from './env';
import type { EmailRec, QueueEntry } from '../email-records';
import type { LmdbQueueHolds } from './queue-holds';
import { HELD_DUE, QUEUE_SCAN_LIMIT, type QueueCursor, type QueuePass, type QueueTx, type QueuedEntry } from '../interface';
import { uuidTime } from '../../ids';

/** The index of an email's entries by email kept before `queue.by_destination` led to them: emptied at open. */
const BY_EMAIL = 'queue.by_email';

/** The destination domain of a recipient address, as enqueue names its entry (sending/enqueue.ts). */
const domainOf = (address: string) => address.slice(address.lastIndexOf('@') + 1);

export class LmdbQueue implements QueueTx {
  private readonly db: Database;
  private readonly byDest: Database;
  constructor(
    private readonly env: LmdbEnv,
    /** The teams' held destinations: a new entry to one is held at once. */
    private readonly holds: LmdbQueueHolds,
    /** An email's record, whose recipients name the destinations its entries can be queued to. */
    private readonly emailOf: (team: string, id: string) => Pick<EmailRec, 'recipients'> | undefined,
  ) {
    this.db = env.db('queue');
    this.byDest = env.db('queue.by_destination');
  }

  /**
   * Entries stored by Posthorn 0.1 were keyed [due, entryId] and indexed by due alone: rewritten
   * once, at open, in the current form. A queue indexed otherwise before — without the destination
   * index, or with rows [team, domain, entry] beside an index by email — gets its one index anew.
   */
  async upgrade(): Promise<number> {
    const old: { key: Key; entry: QueueEntry }[] = [];
    for (const { key, value } of this.db.getRange({})) if ((key as Key[]).length === 2) old.push({ key, entry: value as QueueEntry });
    // Named databases are keys of the root: looked for, not opened (opening would create it).
    const byEmail = this.env.root.doesExist(BY_EMAIL) ? this.env.root.openDB({ name: BY_EMAIL, ...ENCODING }) : null;
    let reindex = !!byEmail || (this.byDest.getCount() === 0 && this.db.getCount() > 0);
    for (const key of this.byDest.getKeys({ limit: 1 })) reindex ||= (key as Key[]).length !== 4;
    if (!old.length && !reindex) return 0;
    await this.env.transaction(() => {
      for (const { key, entry } of old) {
        this.db.remove(key);
        this.db.put([(key as Key[])[0] as number, entry.domain, entry.id], entry);
      }
      for (const key of this.byDest.getKeys({})) this.byDest.remove(key);
      for (const { key, value } of this.db.getRange({})) this.byDest.put(this.destKey(value as QueueEntry), (key as Key[])[0]);
    });
    if (byEmail) await byEmail.drop();
    return old.length;
  }

  private destKey(entry: Pick<QueueEntry, 'team_id' | 'domain' | 'email_id' | 'id'>): Key {
    return [entry.team_id, entry.domain, entry.email_id, entry.id];
  }

  /** Where an entry is now: its key in the queue, from the email index. */
  private placeOf(entry: Pick<QueueEntry, 'team_id' | 'domain' | 'email_id' | 'id'>): Key | undefined {
    const due = this.byDest.get(this.destKey(entry)) as number | undefined;
    return due === undefined ? undefined : [due, entry.domain, entry.id];
  }

  private place(entry: QueueEntry, due: number): void {
    this.db.put([due, entry.domain, entry.id], entry);
    this.byDest.put(this.destKey(entry), due);
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
    this.byDest.remove(this.destKey(entry));
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
    // Its entries are queued to its recipients' domains (sending/enqueue.ts): one prefix of the index each.
    const email = this.emailOf(team, emailId);
    if (!email) return [];
    const out: QueueEntry[] = [];
    for (const domain of new Set(Object.keys(email.recipients).map(domainOf)))
      for (const { key, value } of this.byDest.getRange({ start: [team, domain, emailId, ''], end: [team, domain, emailId, '\uffff'] })) {
        const e = this.db.get([value as number, domain, (key as Key[])[3]]) as QueueEntry | undefined;
        if (e) out.push(e);
      }
    return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  async ofTeam(team: string, { limit, destination, after }: { limit: number; destination?: string; after?: QueueCursor }): Promise<QueuedEntry[]> {
    const out: QueuedEntry[] = [];
    const range =
      destination === undefined
        ? { start: [team, ''], end: [team, '\uffff'] }
        : {
            start: after === undefined ? [team, destination, ''] : [team, destination, after.email_id, `${after.id}\u0000`],
            end: [team, destination, '\uffff'],
          };
    for (const { key, value } of this.byDest.getRange({ ...range, limit })) {
      const [, domain, , id] = key as [string, string, string, string];
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
