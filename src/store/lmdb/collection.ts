// Typed collections on LMDB: records keyed [team_id, id] (ids are UUIDv7, so a team's records sort
// oldest first and pagination is a range scan), with declared secondary indexes kept in the same
// transaction as the record, and optional retention through the TTL index.
import type { Readable } from 'node:stream';
import type { Database, Key, LmdbEnv } from './env';
import type { TtlIndex } from './ttl';
import { paginate } from '../paginate';
import type { Contents, ContentsTx, Page, PageQuery, Rec, RecordsTx } from '../interface';
import { SPILL_BYTES, type SpillFiles } from './spill';
import { uuidFloor } from '../../ids';
import { SWEEP_BATCH, teamsIn } from './teams';
import type { IndexDef } from '../collections';

interface Stored {
  _expires?: number;
}

/**
 * Retention of a collection whose ids are UUIDv7 made when the record was (emails, events, the
 * request log): no TTL row is written per record; the sweep walks each team's ids older than
 * `minAgeMs` (the least time any record is kept) and deletes those whose `expiresAt` has passed.
 */
export interface RangeRetention {
  minAgeMs: number;
  /** Records are written once and never replaced (events, the request log): a put reads nothing first. */
  appendOnly?: boolean;
}

export class LmdbCollection<T extends Rec, I extends string = never> implements RecordsTx<T, I> {
  private readonly db: Database;
  private readonly idx: Database;
  /**
   * A put needs nothing of the stored record: ranged retention (no TTL row to move) and no index
   * row that a new value could leave behind — each put of an email or event is one write.
   */
  private readonly blind: boolean;

  constructor(
    private readonly env: LmdbEnv,
    private readonly ttl: TtlIndex,
    readonly name: string,
    readonly indexes: IndexDef<T, I>[] = [],
    /** Expiry time (ms) of a record, or null to keep it forever. */
    private readonly expiresAt: ((r: T) => number | null) | null = null,
    /** Inside the deleting transaction: remove what belongs to the record (bodies, blobs). */
    private readonly cascade: ((team: string, id: string) => void) | null = null,
    /** Expiry found by walking ids (no TTL rows) rather than through the TTL index. */
    private readonly ranged: RangeRetention | null = null,
  ) {
    this.db = env.db(name);
    this.idx = env.db(`${name}.idx`);
    this.blind = !!ranged && (!!ranged.appendOnly || indexes.every((d) => d.fixed));
    // Registered in either case: rows of records written before a collection became ranged. Such a
    // row outlives the record's puts (a blind put does not see it): it deletes the record only when
    // the record's own expiry, as it is now, has come — else the ranged sweep does, in its time.
    if (expiresAt)
      ttl.register(name, ([team, id], now) => {
        const rec = ranged ? this.read(String(team), String(id)) : undefined;
        if (rec && (expiresAt(rec) ?? Infinity) > now) return;
        this.delete(String(team), String(id));
      });
  }

  /** Delete the expired records of a ranged collection (the store's sweep). Resolves to how many. */
  async sweepRange(now: number): Promise<number> {
    if (!this.ranged || !this.expiresAt) return 0;
    const end = uuidFloor(now - this.ranged.minAgeMs);
    let removed = 0;
    for (const team of teamsIn(this.db)) {
      let after = '';
      for (;;) {
        const expired: string[] = [];
        let last: string | null = null;
        for (const { key, value } of this.db.getRange({ start: [team, after], end: [team, end], limit: SWEEP_BATCH })) {
          last = String((key as Key[])[1]);
          if ((this.expiresAt(restored(team, last, value as T & Stored)) ?? Infinity) <= now) expired.push(last);
        }
        if (expired.length)
          await this.env.transaction(() => {
            for (const id of expired) this.delete(team, id);
          });
        removed += expired.length;
        if (last === null) break;
        after = `${last}\u0000`;
      }
    }
    return removed;
  }

  /** Synchronous read, for the other LMDB parts of the store. */
  read(team: string, id: string): T | undefined {
    const r = this.db.get([team, id]) as (T & Stored) | undefined;
    return r ? restored(team, id, r) : undefined;
  }

  async get(team: string, id: string): Promise<T | undefined> {
    return this.read(team, id);
  }

  async find(index: I, value: string, team?: string): Promise<T | undefined> {
    const def = this.index(index);
    const hit = this.idx.get(this.uniqueKey(def, value, team)) as [string, string] | undefined;
    return hit ? this.read(hit[0], hit[1]) : undefined;
  }

  async findAll(index: I, value: string, team: string): Promise<T[]> {
    const prefix = [this.index(index).name, team, value];
    const out: T[] = [];
    for (const key of this.idx.getKeys({ start: [...prefix, ''] as Key, end: [...prefix, '\uffff'] as Key })) {
      const r = this.read(team, String((key as Key[])[3]));
      if (r) out.push(r);
    }
    return out;
  }

  put(rec: T): void {
    this.env.assertWriting();
    const value = this.blind ? undefined : (this.db.get([rec.team_id, rec.id]) as (T & Stored) | undefined);
    if (value) this.unindex(restored(rec.team_id, rec.id, value, true));
    // Stored without what its key says (compact), with its expiry when it has one.
    const stored = compact(rec as T & Stored) as T & Stored;
    const exp = this.ranged ? null : (this.expiresAt?.(rec) ?? null);
    if (exp !== null) {
      stored._expires = exp;
      this.ttl.add(this.name, [rec.team_id, rec.id], exp);
    }
    for (const def of this.indexes) {
      const v = def.value(rec);
      if (v === null || v === undefined) continue;
      if (def.unique) this.idx.put(this.uniqueKey(def, v, rec.team_id), [rec.team_id, rec.id]);
      else this.idx.put([def.name, rec.team_id, v, rec.id], null);
    }
    this.db.put([rec.team_id, rec.id], stored);
  }

  /**
   * A new record written outside any unit of work (Store.appendLogs): encoded here, inserted by
   * LMDB's writer thread with its next commit, which the promise waits for. Only for a collection
   * whose put is one write of the record (blind, no index, no TTL row).
   */
  append(rec: T): Promise<void> {
    // Blind means ranged retention (no TTL row); without indexes the record is all there is to write.
    if (!this.blind || this.indexes.length) throw new Error(`${this.name}: append needs a blind collection without indexes`);
    return this.db.put([rec.team_id, rec.id], compact(rec)).then(() => undefined);
  }

  remove(team: string, id: string): void {
    this.env.assertWriting();
    this.delete(team, id);
  }

  async page<R = T>(team: string, q: PageQuery, defaultLimit: number | null, map?: (r: T) => R | undefined): Promise<Page<R>> {
    return paginate(this.db, [team], q, defaultLimit, (k, v) => {
      const r = restored(team, String(k[1]), v as T & Stored);
      return map ? map(r) : (r as unknown as R);
    });
  }

  async pageBy<R = T>(index: I, value: string, team: string, q: PageQuery, defaultLimit: number | null, map?: (r: T) => R | undefined): Promise<Page<R>> {
    return paginate(this.idx, [this.index(index).name, team, value], q, defaultLimit, (k) => {
      const r = this.read(team, String(k[3]));
      return r && (map ? map(r) : (r as unknown as R));
    });
  }

  async all(team: string): Promise<T[]> {
    return Array.from(this.db.getRange({ start: [team, ''], end: [team, '\uffff'] }), ({ key, value }) => restoredAt(key, value));
  }

  async count(team: string): Promise<number> {
    // Counted by LMDB over the team's key range: no record is decoded.
    return this.db.getKeysCount({ start: [team, ''], end: [team, '\uffff'] });
  }

  async everything(): Promise<T[]> {
    return Array.from(this.db.getRange({}), ({ key, value }) => restoredAt(key, value));
  }

  /** True when the collection holds no record at all. */
  isEmpty(): boolean {
    for (const _ of this.db.getKeys({ limit: 1 })) return false;
    return true;
  }

  /** Delete inside a transaction (a unit of work, or the TTL sweep). */
  private delete(team: string, id: string): void {
    const value = this.db.get([team, id]) as (T & Stored) | undefined;
    if (!value) return;
    const old = restored(team, id, value, true);
    this.unindex(old);
    this.db.remove([team, id]);
    this.cascade?.(team, id);
  }

  private index(name: I): IndexDef<T, I> {
    const def = this.indexes.find((d) => d.name === name);
    if (!def) throw new Error(`${this.name}: no index ${name}`);
    return def;
  }

  private uniqueKey(def: IndexDef<T, I>, value: string, team?: string): Key {
    if (def.global) return [def.name, value];
    if (team === undefined) throw new Error(`${this.name}.${def.name}: team required`);
    return [def.name, team, value];
  }

  private unindex(old: T & Stored): void {
    if (old._expires !== undefined) this.ttl.drop(this.name, [old.team_id, old.id], old._expires);
    for (const def of this.indexes) {
      const v = def.value(old);
      if (v === null || v === undefined) continue;
      if (def.unique) {
        const key = this.uniqueKey(def, v, old.team_id);
        const cur = this.idx.get(key) as [string, string] | undefined;
        if (cur && cur[1] === old.id) this.idx.remove(key);
      } else this.idx.remove([def.name, old.team_id, v, old.id]);
    }
  }
}

/** What a stored body holds besides text: the message bytes and attachment payloads. */
export interface ByteFields {
  raw?: Uint8Array;
  files: Record<string, Uint8Array>;
}

/** In LMDB for a spilled body: its byte fields are files (spill.ts), listed by size (`raw` -1: none). */
interface SpillNote {
  _spill?: { raw: number; files: Record<string, number> };
}

const sizeOf = (c: ByteFields) => (c.raw?.byteLength ?? 0) + Object.values(c.files).reduce((n, f) => n + f.byteLength, 0);
/** The byte fields' size of a stored body, those it keeps in files included. */
const spilledSize = (v: ByteFields & SpillNote) =>
  v._spill ? Math.max(0, v._spill.raw) + Object.values(v._spill.files).reduce((n, f) => n + f, 0) : sizeOf(v);

const EMPTY = new Uint8Array(0);
const filePart = (attachment: string) => `file-${attachment}`;

/**
 * Bodies kept apart from their records ([team, id] → content), removed with them. Bodies larger
 * than SPILL_BYTES keep their byte fields in files (spill.ts), read only when asked for.
 */
export class LmdbContents<C extends ByteFields> implements ContentsTx<C>, Contents<C> {
  private readonly db: Database;
  /** Large bodies whose files are written (stage) and whose record is not yet put: `team/id` → note. */
  private readonly staged = new Map<string, { raw: number; files: Record<string, number> }>();

  constructor(
    private readonly env: LmdbEnv,
    private readonly name: string,
    private readonly spill: SpillFiles,
  ) {
    this.db = env.db(name);
  }

  async get(team: string, id: string): Promise<C | undefined> {
    const v = this.db.get([team, id]) as (C & SpillNote) | undefined;
    return v && this.whole(team, id, v);
  }

  /** A stored body with what it keeps in files read back. */
  private async whole(team: string, id: string, v: C & SpillNote): Promise<C> {
    if (!v._spill) return v;
    const { _spill, ...rest } = v;
    const files: Record<string, Uint8Array> = {};
    for (const att of Object.keys(_spill.files)) files[att] = (await this.spill.read(this.name, team, id, filePart(att))) ?? EMPTY;
    const out = { ...rest, files } as unknown as C;
    if (_spill.raw >= 0) out.raw = (await this.spill.read(this.name, team, id, 'raw')) ?? EMPTY;
    return out;
  }

  async raw(team: string, id: string): Promise<Uint8Array | undefined> {
    const v = this.db.get([team, id]) as (C & SpillNote) | undefined;
    if (!v?._spill) return v?.raw;
    return v._spill.raw >= 0 ? this.spill.read(this.name, team, id, 'raw') : undefined;
  }

  async byteSize(team: string, id: string): Promise<number | undefined> {
    const v = this.db.get([team, id]) as (C & SpillNote) | undefined;
    return v && spilledSize(v);
  }

  async sized(team: string, id: string, below: number): Promise<{ size: number; content?: C } | undefined> {
    const v = this.db.get([team, id]) as (C & SpillNote) | undefined;
    if (!v) return undefined;
    const size = spilledSize(v);
    return size < below ? { size, content: await this.whole(team, id, v) } : { size };
  }

  async file(team: string, id: string, attachment: string): Promise<Uint8Array | undefined> {
    const v = this.db.get([team, id]) as (C & SpillNote) | undefined;
    if (!v?._spill) return v?.files[attachment];
    if (!Object.hasOwn(v._spill.files, attachment)) return undefined;
    return this.spill.read(this.name, team, id, filePart(attachment));
  }

  async getOpening(
    team: string,
    id: string,
    attachments: readonly string[],
    slice: number,
  ): Promise<{ content: C; open: Record<string, () => Readable> } | undefined> {
    const v = this.db.get([team, id]) as (C & SpillNote) | undefined;
    if (!v) return undefined;
    if (!v._spill) return { content: v, open: {} };
    const { _spill, ...rest } = v;
    const files: Record<string, Uint8Array> = {};
    const open: Record<string, () => Readable> = {};
    for (const att of Object.keys(_spill.files)) {
      if (attachments.includes(att)) open[att] = () => this.spill.open(this.name, team, id, filePart(att), slice);
      else files[att] = (await this.spill.read(this.name, team, id, filePart(att))) ?? EMPTY;
    }
    const content = { ...rest, files } as unknown as C;
    if (_spill.raw >= 0) content.raw = (await this.spill.read(this.name, team, id, 'raw')) ?? EMPTY;
    return { content, open };
  }

  async stage(team: string, id: string, content: C): Promise<void> {
    if (sizeOf(content) <= SPILL_BYTES) return;
    if (content.raw) await this.spill.writeAsync(this.name, team, id, 'raw', content.raw);
    const files: Record<string, number> = {};
    for (const [att, bytes] of Object.entries(content.files)) {
      await this.spill.writeAsync(this.name, team, id, filePart(att), bytes);
      files[att] = bytes.byteLength;
    }
    this.staged.set(`${team}/${id}`, { raw: content.raw ? content.raw.byteLength : -1, files });
  }

  unstage(team: string, id: string, committed: boolean): void {
    const note = this.staged.get(`${team}/${id}`);
    if (!note) return;
    this.staged.delete(`${team}/${id}`);
    // No record names them, and none will: straight to the trash.
    if (!committed) this.spill.trash(this.name, team, id, [...(note.raw >= 0 ? ['raw'] : []), ...Object.keys(note.files).map(filePart)]);
  }

  put(team: string, id: string, content: C): void {
    this.env.assertWriting();
    if (sizeOf(content) <= SPILL_BYTES) return void this.db.put([team, id], content);
    const staged = this.staged.get(`${team}/${id}`);
    if (staged) {
      // Written and fsynced before this unit of work began (stage): the record only names them.
      const { raw, ...rest } = content;
      return void this.db.put([team, id], { ...rest, files: {}, _spill: staged });
    }
    // Files first, fsynced: the commit that names them comes after.
    if (content.raw) this.spill.write(this.name, team, id, 'raw', content.raw);
    const files: Record<string, number> = {};
    for (const [att, bytes] of Object.entries(content.files)) {
      this.spill.write(this.name, team, id, filePart(att), bytes);
      files[att] = bytes.byteLength;
    }
    const { raw, ...rest } = content;
    this.db.put([team, id], { ...rest, files: {}, _spill: { raw: raw ? raw.byteLength : -1, files } });
  }

  /** Inside the transaction deleting the record it belongs to; its files go once that commits. */
  drop(team: string, id: string): void {
    const v = this.db.get([team, id]) as (C & SpillNote) | undefined;
    this.db.remove([team, id]);
    if (!v?._spill) return;
    const parts = [...(v._spill.raw >= 0 ? ['raw'] : []), ...Object.keys(v._spill.files).map(filePart)];
    void this.env.committed().then(() => {
      // Only if the deletion did commit (a unit of work that threw keeps the record).
      if (this.db.get([team, id]) === undefined) this.spill.trash(this.name, team, id, parts);
    });
  }

  /** Records with spilled files, and their parts (backups). */
  *spilled(): Iterable<{ team: string; id: string; parts: string[] }> {
    for (const { key, value } of this.db.getRange({})) {
      const note = (value as SpillNote)._spill;
      const [team, id] = key as Key[];
      if (note) yield { team: String(team), id: String(id), parts: [...(note.raw >= 0 ? ['raw'] : []), ...Object.keys(note.files).map(filePart)] };
    }
  }

  /** Does the record exist? (the start-up sweep of orphan files) */
  has(team: string, id: string): boolean {
    return this.db.doesExist([team, id]);
  }

  get collection(): string {
    return this.name;
  }
}

/**
 * A record as stored: without `id` and `team_id`, which its key [team_id, id] holds — 74 bytes of
 * every email, event and log entry, about a fifth of an event's (README.md "Past experiments":
 * memory with 100,000 emails queued). Records stored before keep them; `restored` reads both.
 */
function compact<T extends Rec>(r: T & Stored): Stored {
  const { id, team_id, _expires, ...rest } = r;
  return rest as Stored;
}

/**
 * A stored record as callers know it: `id` and `team_id` from its key, first as records are made,
 * and its `_expires` left out (kept only with `withExpiry`, for unindex). A record stored whole
 * (before compact) reads the same.
 */
function restored<T>(team: string, id: string, v: T & Stored, withExpiry = false): T & Stored {
  let r = v;
  if (!withExpiry && v._expires !== undefined) {
    const { _expires, ...rest } = v;
    r = rest as T & Stored;
  }
  return (r as { id?: unknown }).id !== undefined ? r : ({ id, team_id: team, ...r } as T & Stored);
}

/** `restored` of an entry read by range ([team, id] key): also a backup's copy (dump.ts). */
export function restoredAt<T>(key: Key, value: unknown): T {
  const [team, id] = key as [string, string];
  return restored(String(team), String(id), value as T & Stored);
}
