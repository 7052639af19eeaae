// A cache of DNS answers that keeps each no longer than its TTL allows: the TTL of the records
// (RFC 1035 §3.2.1; 0 = use for this lookup only, never cached), or for a negative answer
// (NXDOMAIN, or NODATA: no records of the type) the lesser of the SOA record's TTL and its MINIMUM
// field (RFC 2308 §5; a negative answer without an SOA is not cached). Errors are never cached.
// TTLs are capped (MAX_TTL_S), and the cache is bounded in entries and bytes, the least recently
// used entry going first, so memory stays bounded whatever names the mail makes it look up.

/** Longest time any answer is kept, however long its TTL. */
export const MAX_TTL_S = 3600;
export const MAX_ENTRIES = 10_000;
/** Bytes of answers held, counted as the size of the DNS messages they came in. */
export const MAX_BYTES = 8 * 1024 * 1024;

export interface CacheLimits {
  entries: number;
  bytes: number;
}

interface Entry<T> {
  expires: number;
  value: T;
  size: number;
}

export class DnsCache<T> {
  /** In least-recently-used order: a hit moves its entry to the end. */
  private readonly entries = new Map<string, Entry<T>>();
  private bytes = 0;

  constructor(
    private readonly limits: CacheLimits = { entries: MAX_ENTRIES, bytes: MAX_BYTES },
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: string): T | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    this.entries.delete(key);
    if (e.expires <= this.now()) {
      this.bytes -= e.size;
      return undefined;
    }
    this.entries.set(key, e);
    return e.value;
  }

  /** Keep `value` for `ttlS` seconds (capped); 0 or less keeps nothing. */
  set(key: string, value: T, ttlS: number, size: number): void {
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.bytes -= old.size;
    }
    if (!(ttlS > 0) || size > this.limits.bytes) return;
    this.entries.set(key, { expires: this.now() + Math.min(ttlS, MAX_TTL_S) * 1000, value, size });
    this.bytes += size;
    for (const [k, e] of this.entries) {
      if (this.entries.size <= this.limits.entries && this.bytes <= this.limits.bytes) break;
      this.entries.delete(k);
      this.bytes -= e.size;
    }
  }
}
