// Per-install secrets (signed download links, VERP tags, …): 32 random bytes created on first
// use and kept in the store, so links and return paths stay valid across restarts.
import { randomBytes } from 'node:crypto';
import type { StoreEnv } from './env';

export class Secrets {
  private readonly cache = new Map<string, Buffer>();

  constructor(private readonly env: StoreEnv) {}

  async get(name: string): Promise<Buffer> {
    const hit = this.cache.get(name);
    if (hit) return hit;
    const db = this.env.db('meta');
    const key = `secret:${name}`;
    const secret = await this.env.transaction(() => {
      const cur = db.get(key) as Uint8Array | undefined;
      if (cur) return Buffer.from(cur);
      const fresh = randomBytes(32);
      db.put(key, fresh);
      return fresh;
    });
    this.cache.set(name, secret);
    return secret;
  }
}
