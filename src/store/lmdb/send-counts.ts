// Emails accepted per team (docs/api.md §6.1): [team, 'h', hour start] and [team, 'd', day start]
// → a count, each leaving through the TTL index once its period is long over. Two small rows per
// team and period: the sending core reads and counts them once per unit of work, not per email.
import type { Database, Key, LmdbEnv } from './env';
import type { TtlIndex } from './ttl';
import type { SendCountsTx } from '../interface';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export class LmdbSendCounts implements SendCountsTx {
  private readonly db: Database;

  constructor(
    private readonly env: LmdbEnv,
    private readonly ttl: TtlIndex,
  ) {
    this.db = env.db('send_counts');
    ttl.register('send_counts', (key) => this.db.remove(key as never));
  }

  async used(team: string, at: number): Promise<{ hour: number; day: number }> {
    const [h, d] = keys(team, at);
    return { hour: (this.db.get(h) as number | undefined) ?? 0, day: (this.db.get(d) as number | undefined) ?? 0 };
  }

  add(team: string, at: number, n: number): void {
    this.env.assertWriting();
    const [h, d] = keys(team, at);
    this.bump(h, hourOf(at) + HOUR, n);
    this.bump(d, dayOf(at) + DAY, n);
  }

  /** Add to one period's count; a new row is swept a day after its period ends. */
  private bump(key: Key, periodEnd: number, n: number): void {
    const cur = this.db.get(key) as number | undefined;
    if (cur === undefined) this.ttl.add('send_counts', key as Key[], periodEnd + DAY);
    this.db.put(key, (cur ?? 0) + n);
  }
}

const hourOf = (at: number) => Math.floor(at / HOUR) * HOUR;
const dayOf = (at: number) => Math.floor(at / DAY) * DAY;
const keys = (team: string, at: number): [Key, Key] => [[team, 'h', hourOf(at)] as Key, [team, 'd', dayOf(at)] as Key];
