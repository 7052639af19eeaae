// TLS-RPT data (RFC 8460, docs/api.md §19.8): [team, -dayNumber, policy domain] → the team's TLS
// sessions that day to that domain. The negated day number makes a forward scan newest day first
// with domains in order; each day's row leaves through the TTL index after the retention period.
import type { Database, Key, LmdbEnv } from './env';
import type { TtlIndex } from './ttl';
import type { TlsReportsTx, TlsReportCursor } from '../interface';
import { MAX_TLS_FAILURE_KINDS, type TlsFailure, type TlsReportDay, type TlsReportPolicy } from '../delivery-records';

const DAY = 86_400_000;

/** `YYYY-MM-DD` → days since the epoch. */
const dayNumber = (day: string) => Math.floor(Date.parse(`${day}T00:00:00Z`) / DAY);

const sameKind = (a: TlsFailure, b: TlsFailure) =>
  a.result_type === b.result_type &&
  a.receiving_mx_hostname === b.receiving_mx_hostname &&
  a.receiving_ip === b.receiving_ip &&
  a.failure_reason_code === b.failure_reason_code;

export class LmdbTlsReports implements TlsReportsTx {
  private readonly db: Database;

  constructor(
    private readonly env: LmdbEnv,
    private readonly ttl: TtlIndex,
    private readonly keepMs: number,
  ) {
    this.db = env.db('tls_reports');
    ttl.register('tls_reports', (key) => this.db.remove(key as never));
  }

  async get(team: string, day: string, domain: string): Promise<TlsReportDay | undefined> {
    return this.db.get([team, -dayNumber(day), domain]) as TlsReportDay | undefined;
  }

  async list(team: string, q: { limit: number; since?: string; until?: string; after?: TlsReportCursor }): Promise<TlsReportDay[]> {
    // Keys ascend from the newest day: start at the later of `until` and the cursor.
    const fromUntil: Key[] = [team, q.until ? -dayNumber(q.until) : -1e9];
    const fromCursor: Key[] | null = q.after ? [team, -dayNumber(q.after.day), `${q.after.domain}\u0000`] : null;
    const start = fromCursor && (fromCursor[1] as number) >= (fromUntil[1] as number) ? fromCursor : fromUntil;
    const end: Key[] = [team, q.since ? -dayNumber(q.since) + 1 : 1e9];
    return Array.from(this.db.getRange({ start: start as Key, end: end as Key, limit: q.limit }), ({ value }) => value as TlsReportDay);
  }

  add(team: string, day: string, domain: string, policy: TlsReportPolicy, success: number, failures: TlsFailure[]): void {
    this.env.assertWriting();
    const n = dayNumber(day);
    const key: Key[] = [team, -n, domain];
    const cur = this.db.get(key as Key) as TlsReportDay | undefined;
    if (!cur) this.ttl.add('tls_reports', key, (n + 1) * DAY + this.keepMs);
    const next: TlsReportDay = cur
      ? { ...cur, policy, success: cur.success + success, failure: cur.failure, failures: cur.failures.map((f) => ({ ...f })) }
      : { team_id: team, day, domain, policy, success, failure: 0, failures: [] };
    for (const f of failures) {
      next.failure += f.count;
      const kind = next.failures.find((k) => sameKind(k, f));
      if (kind) kind.count += f.count;
      else if (next.failures.length < MAX_TLS_FAILURE_KINDS) next.failures.push({ ...f });
    }
    this.db.put(key as Key, next);
  }
}
