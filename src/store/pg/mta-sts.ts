// MTA-STS policies of recipient domains (docs/mail.md §3.2) on PostgreSQL: domain → the policy as
// fetched, install-wide, removed by the sweep once it has expired (RFC 8461 §5.1).
import { unitOf, type Exec } from './env';
import { parse } from './collection';
import type { MtaStsPoliciesTx } from '../interface';
import type { MtaStsPolicy } from '../delivery-records';

export class PgMtaSts implements MtaStsPoliciesTx {
  constructor(private readonly exec: Exec) {}

  bind(exec: Exec): PgMtaSts {
    return new PgMtaSts(exec);
  }

  async get(domain: string): Promise<MtaStsPolicy | undefined> {
    const [row] = await this.exec.query('SELECT value::text AS value FROM mta_sts WHERE domain = $1', [domain]);
    return row ? parse<MtaStsPolicy>(row.value) : undefined;
  }

  put(policy: MtaStsPolicy): void {
    unitOf(this.exec).write(
      'INSERT INTO mta_sts (domain, value, expires) VALUES ($1, $2::text::json, $3) ON CONFLICT (domain) DO UPDATE SET value = excluded.value, expires = excluded.expires',
      [policy.domain, JSON.stringify(policy), policy.expires_at],
    );
  }
}
