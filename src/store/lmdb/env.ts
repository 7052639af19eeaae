// The LMDB environment: one memory-mapped file under data_dir holding every named database.
// Commits are synchronous to disk (fdatasync per commit), so an awaited unit of work survives
// kill -9; units of work issued in the same tick share one commit, so concurrent requests batch.
import { open, type RootDatabase, type Database, type Key } from 'lmdb';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { trimEvery } from './map-trim';

export type { Key, Database };

// msgpackr stores an object with a known set of keys as a shared "record" structure, which pays off
// for Posthorn's records (fixed, snake_case field names) but not for maps keyed by data — an email's
// recipients by address, clicks by URL, attachments by id, custom headers by name: each new key set
// would become a new structure. Those are written as plain maps. Either form decodes the same.
// The first key decides (every object is looked at, so this stays cheap): a record's field names
// are all snake_case; a map keyed by data starts with an address, a URL, an id or a header name.
const FIELD_NAME = /^[a-z_][a-z0-9_]*$/;
function useRecords(o: object): boolean {
  for (const k in o) return FIELD_NAME.test(k);
  return true;
}

/** How every database of the environment encodes values (and a backup's copy reads them). */
export const ENCODING = { sharedStructuresKey: Symbol.for('structures'), useRecords, mapsAsObjects: true } as const;

/**
 * Databases whose values of 1,000 bytes and more are LZ4-compressed as they are written (lmdb-js
 * `compression`; smaller values, and those written before, are read as they are): the request log,
 * whose batch requests keep bodies of tens of kilobytes, a hundred near-repeats of one email each.
 */
const COMPRESSED = new Set(['logs']);

/** A patient unit of work waiting for its thread's next batch (LmdbEnv.transaction, group commit). */
interface Queued {
  fn: () => unknown;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

/** Room for the named databases of every collection, present and to come. */
export const MAX_DBS = 128;

export class LmdbEnv {
  readonly root: RootDatabase;
  private readonly dbs = new Map<string, Database>();
  /** True while a unit of work's callback runs: the only time writes are allowed. */
  private writing = 0;

  /** Group commit of patient units: those waiting for the next batch, and whether one is under way. */
  private queued: Queued[] = [];
  private inFlight = false;
  private drained: (() => void)[] = [];
  /** Stops releasing the map's pages from RSS (map-trim.ts). */
  private readonly stopTrim: () => void;

  constructor(readonly dataDir: string) {
    mkdirSync(dataDir, { recursive: true });
    const path = resolve(dataDir, 'posthorn.mdb');
    this.root = open({
      path,
      // 1 TiB of address space; the file only grows as data is written.
      mapSize: 2 ** 40,
      // Named databases: two per collection (records and indexes) and a few more, 81 in all (store/collections.ts lists them).
      maxDbs: MAX_DBS,
      // Structured records with shared msgpack structures.
      ...ENCODING,
    });
    // Pages read stay in RSS until released: the whole file, in time (map-trim.ts).
    this.stopTrim = trimEvery(path);
  }

  db(name: string): Database {
    let db = this.dbs.get(name);
    if (!db) {
      db = this.root.openDB({ name, ...ENCODING, ...(COMPRESSED.has(name) ? { compression: true } : {}) });
      this.dbs.set(name, db);
    }
    return db;
  }

  /**
   * Run `fn` inside one write transaction; resolves after the commit is flushed to disk. Reads
   * inside `fn` see its own writes. lmdb-js runs the callbacks of one batch one after another in
   * a single write transaction, awaiting each (so an async `fn` that awaits only resolved reads runs
   * to its end before the next starts), and keeps the writes of a callback that throws: each `fn`
   * therefore runs in a child transaction, which a throw aborts.
   *
   * lmdb-js makes a write transaction of what each turn of the event loop issued, and a commit
   * writes every page it touched — each database's path from its root to the leaves written, and
   * the free list — whatever it holds. A `patient` unit (Store.write's WriteOptions) issued while
   * this thread's last batch of patient units is under way waits and goes with the others in the
   * next (group commit): the delivery engine's claims and outcomes wrote about a quarter fewer bytes
   * per delivered email so, with less CPU on every thread (README.md, "Past experiments"). Other
   * units are issued at once: inbound mail, waiting behind a commit under way, was stored a
   * fifth slower.
   */
  transaction<T>(fn: () => T | Promise<T>, patient = false): Promise<T> {
    if (!patient) return this.run(fn);
    return new Promise<T>((resolve, reject) => {
      this.queued.push({ fn, resolve, reject } as Queued);
      // The units issued by the same task join the first: a microtask runs after all of them.
      if (this.queued.length === 1 && !this.inFlight) queueMicrotask(() => this.startBatch());
    });
  }

  /** Every patient unit waiting, issued in one tick: lmdb-js puts them in one write transaction. */
  private startBatch(): void {
    if (this.queued.length === 0 || this.inFlight) return;
    const batch = this.queued;
    this.queued = [];
    this.inFlight = true;
    void Promise.all(batch.map((q) => this.settled(q))).then(() => {
      this.inFlight = false;
      this.startBatch();
      if (!this.inFlight) for (const d of this.drained.splice(0)) d();
    });
  }

  /** One queued unit run to its end; a throw before its promise (a closed environment) is its failure too. */
  private settled(q: Queued): Promise<void> {
    let p: Promise<unknown>;
    try {
      p = this.run(q.fn);
    } catch (e) {
      p = Promise.reject(e);
    }
    return p.then(q.resolve, q.reject);
  }

  private run<T>(fn: () => T | Promise<T>): Promise<T> {
    return this.root.transaction(() =>
      this.root.childTransaction(async () => {
        this.writing++;
        try {
          return await fn();
        } finally {
          this.writing--;
        }
      }),
    ) as Promise<T>;
  }

  /**
   * The next read sees the latest commit, also one made by another thread or process. lmdb-js keeps
   * a thread's read snapshot until its next timer tick; a worker woken by a message after another
   * thread's commit may run before that tick (test/store/fresh-reads.test.ts). Inside a unit of
   * work reads already see the latest state.
   */
  latest(): void {
    if (this.writing === 0) this.root.resetReadTxn();
  }

  /** Writes outside a unit of work would escape its atomicity: refuse them loudly. */
  assertWriting(): void {
    if (this.writing === 0) throw new Error('store write outside a unit of work (use store.write)');
  }

  /** Resolves once every write issued so far is committed. */
  async committed(): Promise<void> {
    if (this.inFlight || this.queued.length) await new Promise<void>((resolve) => this.drained.push(resolve));
    await this.root.committed;
  }

  async close(): Promise<void> {
    this.stopTrim();
    await this.committed();
    await this.root.close();
  }
}
