// Deliverability on the wire (Posthorn): bounce classes, incidents of the sender (docs/api.md §19.9)
// and the doctor's checks (docs/deliverability.md §2).
import { Type } from '@sinclair/typebox';
import { Id, List, Nullable, PageQuery, Timestamp, type Static } from './common';
import { OneOf } from './literals';
import { BOUNCE_CLASSES } from '../mail/bounce-class-names';

/** A bounce class (README.md, "Bounce classes and incidents"). */
export const BounceClassName = OneOf(BOUNCE_CLASSES, { error: `A bounce class is one of ${BOUNCE_CLASSES.join(', ')}.` });

/** What a listing incident is about. */
export const IncidentListing = Type.Object({
  zone: Type.String({ description: 'The blocklist zone, as configured' }),
  target: Type.String({ description: 'The listed sending address or domain' }),
  target_type: OneOf(['ip', 'domain'] as const),
  codes: Type.Array(Type.String(), { description: "The zone's A answers (RFC 5782 §2.3)" }),
  meaning: Type.String({ description: 'The codes decoded from the documented zone table' }),
  reason: Nullable(Type.String({ description: "The zone's TXT answer" })),
  delisting_url: Nullable(Type.String({ description: "The list's lookup and removal page" })),
});

/** An incident of the sender: replies of one site that speak of its reputation or authentication. */
export const Incident = Type.Object({
  object: Type.Literal('incident'),
  id: Id,
  kind: OneOf(['reply', 'listing'] as const, {
    description: '`reply`: replies of a site; `listing`: a DNS blocklist lists a sending address or domain (docs/deliverability.md §3.1)',
  }),
  listing: Nullable(IncidentListing),
  class: OneOf(['reputation', 'authentication'] as const),
  site: Type.String({ description: 'The shaping site that answered (docs/mail.md §3.1): `google`, `microsoft`, or a domain; for a listing, its zone' }),
  status: OneOf(['open', 'closed'] as const, {
    description: 'Open while the site gives such replies, closed after 24 hours without one; a listing is open until the zone answers clean',
  }),
  created_at: Timestamp,
  last_seen_at: Timestamp,
  closed_at: Nullable(Timestamp),
  count: Type.Integer({ description: 'Replies counted on it' }),
  reply: Type.String({ description: 'The first reply, as the remote host said it' }),
  last_reply: Type.String(),
  code: Nullable(Type.Integer({ description: 'The reply code; null for a listing' })),
  enhanced_code: Nullable(Type.String()),
  remote_host: Nullable(Type.String()),
  remote_ip: Nullable(Type.String()),
  sending_ip: Nullable(Type.String()),
  domain: Nullable(Type.String({ description: 'The sending domain of the email that drew the first reply, or the listed domain; null for a listed address' })),
  email_id: Nullable(Id, { description: 'The email that drew the first reply; null for a listing' }),
  links: Type.Array(Type.String(), { description: 'Delisting or remediation links the replies name' }),
  suspended_until: Nullable(Timestamp),
});
export type Incident = Static<typeof Incident>;

export const IncidentList = List(Incident);

export const IncidentListQuery = Type.Composite([
  PageQuery,
  Type.Object({ status: Type.Optional(OneOf(['open', 'closed'] as const, { error: 'The `status` parameter must be open or closed.' })) }),
]);

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

/** One blocklist zone's answer on one sending address or domain (docs/deliverability.md §3). */
export const BlocklistStatus = Type.Object({
  zone: Type.String(),
  target: Type.String({ description: 'The sending address or domain asked about' }),
  target_type: OneOf(['ip', 'domain'] as const),
  status: OneOf(['listed', 'clean', 'unknown'] as const, {
    description: '`unknown`: the zone timed out, failed or refused the query — never counted as listed or clean',
  }),
  codes: Type.Array(Type.String(), { description: 'The A answers of a listing' }),
  meaning: Nullable(Type.String({ description: "A listing's codes decoded from the documented zone table" })),
  reason: Nullable(Type.String({ description: "The zone's TXT answer of a listing, or why the status is unknown" })),
  delisting_url: Nullable(Type.String({ description: "The list's lookup and removal page, for the documented zones" })),
});

export type BlocklistStatus = Static<typeof BlocklistStatus>;

export const DeliverabilityChecks = Type.Object({
  object: Type.Literal('deliverability_checks'),
  checked_at: Timestamp,
  status: OneOf(['pass', 'warn', 'fail'] as const, { description: 'The worst status of the checks' }),
  checks: Type.Array(DeliverabilityCheck),
  blocklists: Type.Array(BlocklistStatus, { description: "Each zone's answer on each sending address and each of the team's sending domains" }),
});

/** Problems that keep this configuration from delivering at all (docs/deliverability.md §1.1): the start-up warning. */
export const DeliverabilitySetup = Type.Object({
  object: Type.Literal('deliverability_setup'),
  problems: Type.Array(DeliverabilityCheck),
});
export type DeliverabilityChecks = Static<typeof DeliverabilityChecks>;

export const DeliverabilityChecksQuery = Type.Object({
  refresh: Type.Optional(OneOf(['true', 'false'] as const, { error: 'The `refresh` parameter must be true or false.' })),
});
