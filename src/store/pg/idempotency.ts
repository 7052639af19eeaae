// Idempotency records on PostgreSQL (docs/api.md §5): the primary key (team, endpoint, key) is
// what makes a key hold across nodes. A put takes the key only while no live record holds it (an
// expired one is replaced); when another node's request stored it first, the unit of work fails
// with IdempotencyKeyTaken and the request answers with the stored outcome instead.
import { unitOf, type Exec } from './env';
import { parse } from './collection';
import { IDEMPOTENCY_TTL_MS, type IdempotencyRecord, type IdempotencyTx } from '../interface';

export class PgIdempotency implements IdempotencyTx {
  constructor(private readonly exec: Exec) {}

  bind(exec: Exec): PgIdempotency {
    return new PgIdempotency(exec);
  }

  async get(team: string, endpoint: string, key: string, now = Date.now()): Promise<IdempotencyRecord | undefined> {
    const [row] = await this.exec.query('SELECT rec::text AS rec FROM idempotency WHERE team = $1 AND endpoint = $2 AND key = $3 AND expires > $4', [
      team,
      endpoint,
      key,
      now,
    ]);
    return row ? parse<IdempotencyRecord>(row.rec) : undefined;
  }

  put(team: string, endpoint: string, key: string, rec: IdempotencyRecord): void {
    unitOf(this.exec).write(
      `WITH w AS (
         INSERT INTO idempotency (team, endpoint, key, rec, created_at, expires) VALUES ($1, $2, $3, $4::text::json, $5, $6)
         ON CONFLICT (team, endpoint, key) DO UPDATE SET rec = excluded.rec, created_at = excluded.created_at, expires = excluded.expires
         WHERE idempotency.expires <= excluded.created_at
         RETURNING 1)
       SELECT posthorn_expect(count(*), 1, 'PH001') FROM w`,
      [team, endpoint, key, JSON.stringify(rec), rec.created_at, rec.created_at + IDEMPOTENCY_TTL_MS],
    );
  }
}
