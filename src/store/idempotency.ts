// Idempotency records (api-reference §5): [team, endpoint, key] → the fingerprint of the first
// request and its stored answer, expiring 24 h after the first request through the TTL index.
// Written in the same transaction as the emails the request created, so a replay after a crash
// can never send twice.
import type { Database } from 'lmdb';
import type { StoreEnv } from './env';
import type { TtlIndex } from './ttl';

export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;

export interface IdempotencyRecord {
  fingerprint: string;
  status: number;
  body: unknown;
  created_at: number;
}

export class IdempotencyStore {
  private readonly db: Database;

  constructor(env: StoreEnv, private readonly ttl: TtlIndex) {
    this.db = env.db('idempotency');
    ttl.register('idempotency', (key) => this.db.remove(key as never));
  }

  get(team: string, endpoint: string, key: string, now = Date.now()): IdempotencyRecord | undefined {
    const r = this.db.get([team, endpoint, key]) as IdempotencyRecord | undefined;
    // Not yet swept but expired: treat as gone.
    return r && now - r.created_at < IDEMPOTENCY_TTL_MS ? r : undefined;
  }

  putInTxn(team: string, endpoint: string, key: string, rec: IdempotencyRecord): void {
    const old = this.db.get([team, endpoint, key]) as IdempotencyRecord | undefined;
    if (old) this.ttl.drop('idempotency', [team, endpoint, key], old.created_at + IDEMPOTENCY_TTL_MS);
    this.db.put([team, endpoint, key], rec);
    this.ttl.add('idempotency', [team, endpoint, key], rec.created_at + IDEMPOTENCY_TTL_MS);
  }
}
