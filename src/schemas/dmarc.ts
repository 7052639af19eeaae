// DMARC aggregate reports on the wire (Posthorn; docs/deliverability.md §4, docs/api.md §19):
// GET /domains/{id}/dmarc — who sends in a domain's name, aligned or not, and the policy's next step.
import { Type } from '@sinclair/typebox';
import { Id, Nullable, type Static } from './common';
import { OneOf } from './literals';

export const DmarcQuery = Type.Object({
  days: Type.Optional(
    Type.String({
      pattern: '^(?:[1-9]|[1-8][0-9]|90)$',
      description: 'Days of reports, 1–90 (default 30)',
      error: 'The `days` parameter must be a number from 1 to 90.',
    }),
  ),
});

const Count = Type.Integer({ minimum: 0 });

export const DmarcSource = Type.Object({
  ip: Type.String({ description: 'The source address receivers saw' }),
  ptr: Nullable(Type.String({ description: 'Its reverse DNS name (first PTR), null when it has none' })),
  own: Type.Boolean({ description: "One of Posthorn's sending addresses (the interfaces' public ones and `smtp.hostname`'s)" }),
  messages: Count,
  dmarc_pass: Type.Integer({ minimum: 0, description: 'Messages with aligned DKIM or SPF' }),
  dkim_aligned: Count,
  spf_aligned: Count,
  quarantined: Count,
  rejected: Count,
});

export const DmarcSummary = Type.Object({
  object: Type.Literal('dmarc_summary'),
  domain_id: Id,
  domain: Type.String(),
  days: Type.Integer(),
  record: Nullable(Type.String({ description: 'The DMARC record published at `_dmarc.<domain>` now' })),
  policy: Nullable(OneOf(['none', 'quarantine', 'reject'] as const)),
  rua: Type.String({ description: "The address reports reach Posthorn at (the recommended record's `rua`)" }),
  reports_received: Type.Integer({ minimum: 0, description: 'Reports kept for the domain (retention: at least 90 days)' }),
  totals: Type.Object({ reports: Count, messages: Count, dmarc_pass: Count, dkim_aligned: Count, spf_aligned: Count }),
  sources: Type.Array(DmarcSource, { description: 'By volume, the largest 100' }),
  series: Type.Array(Type.Object({ date: Type.String({ description: 'UTC day, YYYY-MM-DD' }), messages: Count, aligned: Count })),
  step: Type.Object({
    action: OneOf(['publish', 'add_rua', 'fix', 'wait', 'quarantine', 'reject', 'done'] as const),
    message: Type.String(),
    record: Nullable(Type.String({ description: 'The DMARC record to publish for this step' })),
  }),
});
export type DmarcSummary = Static<typeof DmarcSummary>;
