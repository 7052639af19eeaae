// The shaping state of destination sites (docs/mail.md §3.1) on PostgreSQL: site → state, shared by
// the nodes — a site that throttles one node is slowed on all of them. The last state written wins.
import { unitOf, type Exec } from './env';
import { parse } from './collection';
import type { SitesTx } from '../interface';
import type { SiteState } from '../delivery-records';

export class PgSites implements SitesTx {
  constructor(private readonly exec: Exec) {}

  bind(exec: Exec): PgSites {
    return new PgSites(exec);
  }

  async get(site: string): Promise<SiteState | undefined> {
    const [row] = await this.exec.query('SELECT value::text AS value FROM sites WHERE site = $1', [site]);
    return row ? parse<SiteState>(row.value) : undefined;
  }

  async all(): Promise<SiteState[]> {
    const rows: { value: string }[] = await this.exec.query('SELECT value::text AS value FROM sites ORDER BY site');
    return rows.map((r) => parse<SiteState>(r.value));
  }

  put(state: SiteState): void {
    unitOf(this.exec).write('INSERT INTO sites (site, value) VALUES ($1, $2::text::json) ON CONFLICT (site) DO UPDATE SET value = excluded.value', [
      state.site,
      JSON.stringify(state),
    ]);
  }

  remove(site: string): void {
    unitOf(this.exec).write('DELETE FROM sites WHERE site = $1', [site]);
  }
}
