// Deliverability on the wire (Posthorn): the doctor's checks (docs/deliverability.md §2).
import { Type } from '@sinclair/typebox';
import { Timestamp, type Static } from './common';
import { OneOf } from './literals';

/** One check: the shape `posthorn doctor --json` prints too. */
export const DeliverabilityCheck = Type.Object({
  name: Type.String({
    description:
      '`smtp_hostname`, `public_url`, `sending_addresses`, `ptr:<ip>`, `smtp_certificate`, `outbound_port_25`, `dnsbl:<ip>`, `spf:<domain>`, `dkim:<domain>`, `dmarc:<domain>`, `dbl:<domain>`',
  }),
  status: OneOf(['pass', 'warn', 'fail'] as const),
  evidence: Type.String({ description: 'What was looked at and found' }),
  fix: Type.String({ description: 'What to do, in one sentence; empty when the check passes' }),
});

export const DeliverabilityChecks = Type.Object({
  object: Type.Literal('deliverability_checks'),
  checked_at: Timestamp,
  status: OneOf(['pass', 'warn', 'fail'] as const, { description: 'The worst status of the checks' }),
  checks: Type.Array(DeliverabilityCheck),
});
export type DeliverabilityChecks = Static<typeof DeliverabilityChecks>;

export const DeliverabilityChecksQuery = Type.Object({
  refresh: Type.Optional(OneOf(['true', 'false'] as const, { error: 'The `refresh` parameter must be true or false.' })),
});
