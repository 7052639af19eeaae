// Reads of small, hot, rarely written collections (domains, API keys) kept in memory: every send
// looks up its API key and its sending domain, and decoding those records (a domain carries its
// DKIM private key) cost more than the rest of the lookup. Only reads outside a unit of work go
// through the cache — a unit of work reads its own writes from the backend — and the backend
// clears it after every commit of its own that wrote the collection. Writes by another process (the
// CLI beside a running server) are seen once an entry is `TTL_MS` old; another node of a cluster
// clears this cache with its commit's notification (store/pg/signals.ts), the TTL as the fallback.
// Misses are not cached: a record created elsewhere is found at once.
import type { Page, PageQuery, Rec, Records } from './interface';

/** How long a cached record may be served without being read again. */
export const TTL_MS = 5_000;
/** Entries kept at most (the oldest go first): memory stays bounded whatever the number of keys. */
export const MAX_ENTRIES = 10_000;

export class CachedRecords<T extends Rec, I extends string = never> implements Records<T, I> {
  private readonly entries = new Map<string, { rec: T; at: number }>();

  constructor(private readonly inner: Records<T, I>) {}

  /** Forget everything (the collection was written). */
  clear(): void {
    this.entries.clear();
  }

  private async cached(key: string, load: () => Promise<T | undefined>): Promise<T | undefined> {
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit && now - hit.at < TTL_MS) return hit.rec;
    const rec = await load();
    if (rec === undefined) this.entries.delete(key);
    else {
      if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(key, { rec, at: now });
    }
    return rec;
  }

  get(team: string, id: string): Promise<T | undefined> {
    return this.cached(`id\u0000${team}\u0000${id}`, () => this.inner.get(team, id));
  }

  find(index: I, value: string, team?: string): Promise<T | undefined> {
    return this.cached(`${index}\u0000${team ?? ''}\u0000${value}`, () => this.inner.find(index, value, team));
  }

  findAll(index: I, value: string, team: string): Promise<T[]> {
    return this.inner.findAll(index, value, team);
  }

  page<R = T>(team: string, q: PageQuery, defaultLimit: number | null, map?: (r: T) => R | undefined): Promise<Page<R>> {
    return this.inner.page(team, q, defaultLimit, map);
  }

  pageBy<R = T>(index: I, value: string, team: string, q: PageQuery, defaultLimit: number | null, map?: (r: T) => R | undefined): Promise<Page<R>> {
    return this.inner.pageBy(index, value, team, q, defaultLimit, map);
  }

  count(team: string): Promise<number> {
    return this.inner.count(team);
  }

  all(team: string): Promise<T[]> {
    return this.inner.all(team);
  }

  everything(): Promise<T[]> {
    return this.inner.everything();
  }
}
