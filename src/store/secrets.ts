// Per-install secrets (signed download links, VERP tags, …): 32 random bytes created on first
// use and kept in the store's `meta` database, so links and return paths stay valid across
// restarts and move with backups.
import { randomBytes } from 'node:crypto';
import type { StoreEnv } from './env';

export class Secrets {
  private readonly cache = new Map<string, Buffer>();

  constructor(private readonly env: StoreEnv) {}

  /** The secret called `name`, created atomically on first use (one synchronous write, once). */
  get(name: string): Buffer {
    const hit = this.cache.get(name);
    if (hit) return hit;
    const db = this.env.db('meta');
    const key = `secret:${name}`;
    const stored = db.get(key) as Uint8Array | undefined;
    const secret = Buffer.from(
      stored ??
        (this.env.root.transactionSync(() => {
          const cur = db.get(key) as Uint8Array | undefined;
          if (cur) return cur;
          const fresh = randomBytes(32);
          db.put(key, fresh);
          return fresh;
        }) as Uint8Array),
    );
    this.cache.set(name, secret);
    return secret;
  }
}
