// MTA-STS policies of recipient domains (docs/mail.md §3.2): domain → the policy as fetched,
// install-wide (a policy is the recipient domain's, whoever sends there). Each policy leaves
// through the TTL index once its max_age has run out (RFC 8461 §5.1: an expired policy is not applied).
import type { Database, LmdbEnv } from './env';
import type { TtlIndex } from './ttl';
import type { MtaStsPoliciesTx } from '../interface';
import type { MtaStsPolicy } from '../delivery-records';

export class LmdbMtaSts implements MtaStsPoliciesTx {
  private readonly db: Database;

  constructor(
    private readonly env: LmdbEnv,
    private readonly ttl: TtlIndex,
  ) {
    this.db = env.db('mta_sts');
    ttl.register('mta_sts', ([domain]) => {
      // Replaced since (a later fetch): the new policy has its own entry.
      const cur = this.db.get(domain as string) as MtaStsPolicy | undefined;
      if (cur && cur.expires_at <= Date.now()) this.db.remove(domain as string);
    });
  }

  async get(domain: string): Promise<MtaStsPolicy | undefined> {
    return this.db.get(domain) as MtaStsPolicy | undefined;
  }

  put(policy: MtaStsPolicy): void {
    this.env.assertWriting();
    const old = this.db.get(policy.domain) as MtaStsPolicy | undefined;
    if (old) this.ttl.drop('mta_sts', [policy.domain], old.expires_at);
    this.db.put(policy.domain, policy);
    this.ttl.add('mta_sts', [policy.domain], policy.expires_at);
  }
}
