// TTL index: one ordered database keyed [expiresAtMs, namespace, ...key]. A sweep reads only the
// expired prefix of that index (never a full scan of the data) and asks each namespace's owner to
// delete the record. Used for retention (30 days) and idempotency keys (24 h).
import type { Database, Key, LmdbEnv } from './env';

/** Deletes the record of `key`, expired at `now` (the sweep's time). */
export type Expirer = (key: Key[], now: number) => void;

export class TtlIndex {
  private readonly db: Database;
  private readonly expirers = new Map<string, Expirer>();

  constructor(private readonly env: LmdbEnv) {
    this.db = env.db('_ttl');
  }

  /** Register the function that deletes an expired record of `namespace` (inside the sweep's transaction). */
  register(namespace: string, expire: Expirer): void {
    this.expirers.set(namespace, expire);
  }

  /** Inside a transaction: schedule `key` of `namespace` for deletion at `expiresAt` (ms). */
  add(namespace: string, key: Key[], expiresAt: number): void {
    this.db.put([expiresAt, namespace, ...key] as Key, null);
  }

  /** Inside a transaction: forget a scheduled deletion (record deleted or given a new expiry). */
  drop(namespace: string, key: Key[], expiresAt: number): void {
    this.db.remove([expiresAt, namespace, ...key] as Key);
  }

  /** Delete everything expired at `now`, in bounded transactions. Returns the number removed. */
  async sweep(now = Date.now(), batch = 1000): Promise<number> {
    let removed = 0;
    for (;;) {
      const due = Array.from(this.db.getKeys({ start: [0], end: [now + 1], limit: batch })) as unknown as Key[][];
      if (due.length === 0) return removed;
      await this.env.transaction(() => {
        for (const k of due) {
          // Re-dated since it was read (its TTL entry moved): not expired after all.
          if (!this.db.doesExist(k as unknown as Key)) continue;
          const [, namespace, ...key] = k as unknown as [number, string, ...Key[]];
          this.expirers.get(namespace)?.(key, now);
          this.db.remove(k as unknown as Key);
        }
      });
      removed += due.length;
      if (due.length < batch) return removed;
    }
  }
}
