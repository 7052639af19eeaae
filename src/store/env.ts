// The LMDB environment: one memory-mapped file under data_dir holding every named database.
// Commits are synchronous to disk (fdatasync per commit), so an awaited write survives kill -9;
// writes issued in the same tick share one commit, so concurrent requests batch naturally.
import { open, type RootDatabase, type Database, type Key } from 'lmdb';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

export type { Key };

export class StoreEnv {
  readonly root: RootDatabase;
  private readonly dbs = new Map<string, Database>();

  constructor(readonly dataDir: string) {
    mkdirSync(dataDir, { recursive: true });
    this.root = open({
      path: join(dataDir, 'posthorn.mdb'),
      // 1 TiB of address space; the file only grows as data is written.
      mapSize: 2 ** 40,
      maxDbs: 64,
      // Structured records with shared msgpack structures.
      sharedStructuresKey: Symbol.for('structures'),
    });
  }

  db(name: string): Database {
    let db = this.dbs.get(name);
    if (!db) {
      db = this.root.openDB({ name, sharedStructuresKey: Symbol.for('structures') });
      this.dbs.set(name, db);
    }
    return db;
  }

  /**
   * Run `fn` inside one write transaction; resolves after the commit is flushed to disk.
   * Reads inside `fn` see the transaction's own writes, so check-then-write is atomic. If `fn`
   * throws, its writes are rolled back: lmdb-js keeps the writes of a throwing async-transaction
   * callback, so `fn` runs in a child transaction, which it does abort.
   */
  transaction<T>(fn: () => T): Promise<T> {
    return this.root.transaction(() => this.root.childTransaction(fn)) as Promise<T>;
  }

  /** Resolves once every write issued so far is committed (read-your-writes for unawaited puts). */
  get committed(): Promise<unknown> {
    return this.root.committed;
  }

  async close(): Promise<void> {
    await this.root.committed;
    await this.root.close();
  }
}
