// The incoming queue on LMDB: [team, first email id] → the batch as accepted (email-records.ts IncomingRec).
// A team's requests sort oldest first (UUIDv7 ids); every team's, team by team.
import type { Key, LmdbEnv, Database } from './env';
import type { IncomingTx } from '../interface';
import type { IncomingRec } from '../email-records';

export class LmdbIncoming implements IncomingTx {
  private readonly db: Database;

  constructor(private readonly env: LmdbEnv) {
    this.db = env.db('incoming');
  }

  add(rec: IncomingRec): void {
    this.env.assertWriting();
    this.db.put([rec.team_id, rec.id], rec);
  }

  async take(team: string, id: string): Promise<IncomingRec | undefined> {
    this.env.assertWriting();
    const rec = this.db.get([team, id]) as IncomingRec | undefined;
    if (rec) this.db.remove([team, id]);
    return rec;
  }

  async waiting(team: string | null, limit: number): Promise<{ team: string; id: string }[]> {
    // Outside a unit of work: see what the other thread committed a moment ago.
    this.env.latest();
    const range = team === null ? { limit } : { start: [team, ''] as Key, end: [team, '\uffff'] as Key, limit };
    return Array.from(this.db.getKeys(range), (key) => {
      const [t, id] = key as string[];
      return { team: t!, id: id! };
    });
  }

  async count(): Promise<number> {
    this.env.latest();
    return this.db.getCount();
  }
}
