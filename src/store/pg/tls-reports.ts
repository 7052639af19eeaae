// TLS-RPT data (RFC 8460, docs/api.md §19.8) on PostgreSQL: (team, day, policy domain) → the team's
// TLS sessions that day to that domain. Every node's attempts add to the same rows: `add` is one
// call of `posthorn_tls_add` (schema.ts), which merges under the row's lock.
import { unitOf, type Exec } from './env';
import { parse } from './collection';
import type { TlsReportsTx, TlsReportCursor } from '../interface';
import { MAX_TLS_FAILURE_KINDS, type TlsFailure, type TlsReportDay, type TlsReportPolicy } from '../delivery-records';

const DAY = 86_400_000;

/** `YYYY-MM-DD` → days since the epoch. */
const dayNumber = (day: string) => Math.floor(Date.parse(`${day}T00:00:00Z`) / DAY);

export class PgTlsReports implements TlsReportsTx {
  constructor(
    private readonly exec: Exec,
    private readonly keepMs: number,
  ) {}

  bind(exec: Exec): PgTlsReports {
    return new PgTlsReports(exec, this.keepMs);
  }

  async get(team: string, day: string, domain: string): Promise<TlsReportDay | undefined> {
    const [row] = await this.exec.query('SELECT value::text AS value FROM tls_reports WHERE team = $1 AND day_n = $2 AND domain = $3', [
      team,
      dayNumber(day),
      domain,
    ]);
    return row ? parse<TlsReportDay>(row.value) : undefined;
  }

  async list(team: string, q: { limit: number; since?: string; until?: string; after?: TlsReportCursor }): Promise<TlsReportDay[]> {
    const params: unknown[] = [team];
    const where = ['team = $1'];
    if (q.until) where.push(`day_n <= $${params.push(dayNumber(q.until))}`);
    if (q.since) where.push(`day_n >= $${params.push(dayNumber(q.since))}`);
    if (q.after) {
      const d = params.push(dayNumber(q.after.day));
      const dom = params.push(q.after.domain);
      where.push(`(day_n < $${d} OR (day_n = $${d} AND domain > $${dom}))`);
    }
    const rows: { value: string }[] = await this.exec.query(
      `SELECT value::text AS value FROM tls_reports WHERE ${where.join(' AND ')} ORDER BY day_n DESC, domain LIMIT $${params.push(q.limit)}`,
      params,
    );
    return rows.map((r) => parse<TlsReportDay>(r.value));
  }

  add(team: string, day: string, domain: string, policy: TlsReportPolicy, success: number, failures: TlsFailure[]): void {
    const n = dayNumber(day);
    unitOf(this.exec).write('SELECT posthorn_tls_add($1, $2, $3, $4, $5::text::jsonb, $6, $7::text::jsonb, $8, $9)', [
      team,
      n,
      day,
      domain,
      JSON.stringify(policy),
      success,
      JSON.stringify(failures),
      (n + 1) * DAY + this.keepMs,
      MAX_TLS_FAILURE_KINDS,
    ]);
  }
}
