// The delivery engine's attempts in flight, by site: one slow destination may hold at most its
// site's share of the worker's slots (shaping.ts Shaper.room counts them), never every one of
// them — its other entries wait in the queue, not in the pool.

/** Identity of an attempt in flight (the worker's key): its destination domain, then the entry. */
export const inFlightKey = (domain: string, id: string) => `${domain}\u0000${id}`;

/** The site of every attempt in flight, by its key. The worker's busy set is the truth: see `count`. */
export class SitesInFlight {
  private readonly sites = new Map<string, string>();

  /** Forget the attempts the worker no longer runs; count those left per site. */
  count(busy: ReadonlySet<string>): Map<string, number> {
    for (const key of this.sites.keys()) if (!busy.has(key)) this.sites.delete(key);
    const perSite = new Map<string, number>();
    for (const site of this.sites.values()) perSite.set(site, (perSite.get(site) ?? 0) + 1);
    return perSite;
  }

  get(key: string): string | undefined {
    return this.sites.get(key);
  }

  set(key: string, site: string): void {
    this.sites.set(key, site);
  }

  /** Attempts in flight to `site` other than `key`. */
  others(site: string, key: string): number {
    let n = 0;
    for (const [k, s] of this.sites) if (s === site && k !== key) n++;
    return n;
  }
}
