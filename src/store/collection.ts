// Typed collections: records keyed [team_id, id] (ids are UUIDv7, so a team's records sort oldest
// first and pagination is a range scan), with declared secondary indexes kept in the same
// transaction as the record, and optional TTL (retention) through the TTL index.
import type { Database, Key } from 'lmdb';
import type { StoreEnv } from './env';
import type { TtlIndex } from './ttl';
import { paginate, type Page, type PageQuery } from './paginate';

export interface Rec {
  id: string;
  team_id: string;
  created_at: string;
}

export interface IndexDef<T> {
  name: string;
  /** Index value(s) of a record; null/undefined = not indexed. */
  value: (r: T) => string | null | undefined;
  /** unique: one record per value; global: across teams (e.g. domain names, API key hashes). */
  unique?: boolean;
  global?: boolean;
}

interface Stored {
  _expires?: number;
}

export class Collection<T extends Rec> {
  readonly db: Database;
  private readonly idx: Database;

  constructor(
    private readonly env: StoreEnv,
    private readonly ttl: TtlIndex,
    readonly name: string,
    private readonly indexes: IndexDef<T>[] = [],
    /** Expiry time (ms) of a record, or null to keep it forever. */
    private readonly expiresAt: ((r: T) => number | null) | null = null,
    /** Inside the deleting transaction: remove what belongs to the record (bodies, blobs). */
    private readonly cascade: ((team: string, id: string) => void) | null = null,
  ) {
    this.db = env.db(name);
    this.idx = env.db(`${name}.idx`);
    if (expiresAt) ttl.register(name, ([team, id]) => this.removeInTxn(String(team), String(id)));
  }

  get(team: string, id: string): T | undefined {
    const r = this.db.get([team, id]) as (T & Stored) | undefined;
    return r ? strip(r) : undefined;
  }

  /** Look a record up by a unique index value. */
  find(index: string, value: string, team?: string): T | undefined {
    const def = this.index(index);
    const hit = this.idx.get(this.uniqueKey(def, value, team)) as [string, string] | undefined;
    return hit ? this.get(hit[0], hit[1]) : undefined;
  }

  /** Records whose non-unique index equals `value`, oldest first. */
  *findAll(index: string, value: string, team: string): Iterable<T> {
    const def = this.index(index);
    const prefix = [def.name, team, value];
    for (const key of this.idx.getKeys({ start: [...prefix, ''] as Key, end: [...prefix, '\uffff'] as Key })) {
      const id = (key as string[])[3];
      const r = this.get(team, id);
      if (r) yield r;
    }
  }

  /** Inside a transaction: insert or replace, keeping indexes and TTL in step. */
  putInTxn(rec: T): void {
    const old = this.db.get([rec.team_id, rec.id]) as (T & Stored) | undefined;
    if (old) this.unindex(old);
    const stored: T & Stored = { ...rec };
    delete stored._expires;
    const exp = this.expiresAt?.(rec) ?? null;
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

  /** Inside a transaction: delete; returns whether it existed. */
  removeInTxn(team: string, id: string): boolean {
    const old = this.db.get([team, id]) as (T & Stored) | undefined;
    if (!old) return false;
    this.unindex(old);
    this.db.remove([team, id]);
    this.cascade?.(team, id);
    return true;
  }

  /** Insert or replace, durably (resolves after the flushed commit). */
  put(rec: T): Promise<T> {
    return this.env.transaction(() => {
      this.putInTxn(rec);
      return rec;
    });
  }

  remove(team: string, id: string): Promise<boolean> {
    return this.env.transaction(() => this.removeInTxn(team, id));
  }

  /** One page of a team's records, newest first. */
  page<R = T>(team: string, q: PageQuery, defaultLimit: number | null, map?: (r: T) => R | undefined): Page<R> {
    return paginate(this.db, [team], q, defaultLimit, (_k, v) => {
      const r = strip(v as T & Stored);
      return map ? map(r) : (r as unknown as R);
    });
  }

  /**
   * One page of a team's records whose non-unique index equals `value`, newest first (by id, so
   * the ids must be time-ordered).
   */
  pageBy<R = T>(index: string, value: string, team: string, q: PageQuery, defaultLimit: number | null, map?: (r: T) => R | undefined): Page<R> {
    const def = this.index(index);
    return paginate(this.idx, [def.name, team, value], q, defaultLimit, (k) => {
      const r = this.get(team, String(k[3]));
      return r && (map ? map(r) : (r as unknown as R));
    });
  }

  /** Every record of a team, oldest first. */
  *all(team: string): Iterable<T> {
    for (const { value } of this.db.getRange({ start: [team, ''], end: [team, '\uffff'] })) yield strip(value as T & Stored);
  }

  /** Every record of every team (background jobs only: re-checks, recovery). */
  *everything(): Iterable<T> {
    for (const { value } of this.db.getRange({})) yield strip(value as T & Stored);
  }

  private index(name: string): IndexDef<T> {
    const def = this.indexes.find((d) => d.name === name);
    if (!def) throw new Error(`${this.name}: no index ${name}`);
    return def;
  }

  private uniqueKey(def: IndexDef<T>, value: string, team?: string): Key {
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

function strip<T>(r: T & Stored): T {
  if (r._expires === undefined) return r;
  const { _expires, ...rest } = r;
  return rest as T;
}
