// Idempotency records (docs/api.md §5): [team, endpoint, key] → the fingerprint of the first
// request and its stored answer, expiring 24 h after the first request through the TTL index.
// Written in the same transaction as the emails the request created, so a replay after a crash
// can never send twice.
import type { Database, LmdbEnv } from './env';
import type { TtlIndex } from './ttl';
import { IDEMPOTENCY_TTL_MS, type IdempotencyRecord, type IdempotencyTx } from '../interface';

export class LmdbIdempotency implements IdempotencyTx {
  private readonly db: Database;

  constructor(
    private readonly env: LmdbEnv,
    private readonly ttl: TtlIndex,
  ) {
    this.db = env.db('idempotency');
    ttl.register('idempotency', (key) => this.db.remove(key as never));
  }

  async get(team: string, endpoint: string, key: string, now = Date.now()): Promise<IdempotencyRecord | undefined> {
    const r = this.db.get([team, endpoint, key]) as IdempotencyRecord | undefined;
    // Not yet swept but expired: treat as gone.
    return r && now - r.created_at < IDEMPOTENCY_TTL_MS ? r : undefined;
  }

  put(team: string, endpoint: string, key: string, rec: IdempotencyRecord): void {
    this.env.assertWriting();
    const old = this.db.get([team, endpoint, key]) as IdempotencyRecord | undefined;
    if (old) this.ttl.drop('idempotency', [team, endpoint, key], old.created_at + IDEMPOTENCY_TTL_MS);
    this.db.put([team, endpoint, key], rec);
    this.ttl.add('idempotency', [team, endpoint, key], rec.created_at + IDEMPOTENCY_TTL_MS);
  }
}
