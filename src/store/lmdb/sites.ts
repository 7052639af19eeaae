// The shaping state of destination sites (docs/mail.md §3.1): site → state, written by the delivery
// engine when a site throttles and when it recovers, read by its claims and by GET /queue.
import type { Database, LmdbEnv } from './env';
import type { SitesTx } from '../interface';
import type { SiteState } from '../delivery-records';

export class LmdbSites implements SitesTx {
  private readonly db: Database;

  constructor(private readonly env: LmdbEnv) {
    this.db = env.db('sites');
  }

  async get(site: string): Promise<SiteState | undefined> {
    return this.db.get(site) as SiteState | undefined;
  }

  async all(): Promise<SiteState[]> {
    return [...this.db.getRange({})].map(({ value }) => value as SiteState);
  }

  put(state: SiteState): void {
    this.env.assertWriting();
    this.db.put(state.site, state);
  }

  remove(site: string): void {
    this.env.assertWriting();
    this.db.remove(site);
  }
}
