// Emails accepted per team (docs/api.md §6.1) on PostgreSQL: (team, 'h' | 'd', period start) → a
// count. In a unit of work `used` locks the team's two rows (making them first if need be) until
// the unit ends: two nodes accepting for one team take turns, so a limit holds across the cluster.
// Only teams with a limit are read (limits/quota.ts), so only they pay for it.
import { unitOf, type Exec } from './env';
import type { SendCountsTx } from '../interface';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const hourOf = (at: number) => Math.floor(at / HOUR) * HOUR;
const dayOf = (at: number) => Math.floor(at / DAY) * DAY;

export class PgSendCounts implements SendCountsTx {
  constructor(private readonly exec: Exec) {}

  bind(exec: Exec): PgSendCounts {
    return new PgSendCounts(exec);
  }

  async used(team: string, at: number): Promise<{ hour: number; day: number }> {
    const [h, d] = [hourOf(at), dayOf(at)];
    if (this.exec.unit)
      this.exec.write(`INSERT INTO send_counts (team, period, start, n, expires) VALUES ($1, 'h', $2, 0, $3), ($1, 'd', $4, 0, $5) ON CONFLICT DO NOTHING`, [
        team,
        h,
        h + HOUR + DAY,
        d,
        d + DAY + DAY,
      ]);
    const rows: { period: string; n: string }[] = await this.exec.query(
      `SELECT period, n FROM send_counts WHERE team = $1 AND ((period = 'h' AND start = $2) OR (period = 'd' AND start = $3))${this.exec.unit ? ' FOR UPDATE' : ''}`,
      [team, h, d],
    );
    const of = (p: string) => Number(rows.find((r) => r.period === p)?.n ?? 0);
    return { hour: of('h'), day: of('d') };
  }

  add(team: string, at: number, n: number): void {
    const [h, d] = [hourOf(at), dayOf(at)];
    unitOf(this.exec).write(
      `INSERT INTO send_counts (team, period, start, n, expires) VALUES ($1, 'h', $2, $3, $4), ($1, 'd', $5, $3, $6)
       ON CONFLICT (team, period, start) DO UPDATE SET n = send_counts.n + excluded.n`,
      [team, h, n, h + HOUR + DAY, d, d + DAY + DAY],
    );
  }
}
