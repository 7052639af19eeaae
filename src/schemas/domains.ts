// Domains and domain claims on the wire (docs/api.md §9). The types of the fields are checked here;
// what needs their meaning — a domain name (IDNA), the region (Resend's own `invalid_region`), the
// return-path and tracking labels, the capabilities together — is src/domains/create.ts and
// validate.ts, whose messages differ from a wrong type's.
import { Type } from '@sinclair/typebox';
import { Id, List, Nullable, Timestamp, type Static } from './common';
import { OneOf } from './literals';

/** The regions a domain may name (docs/api.md §9.1): only a label here, all served the same. */
export const REGIONS = ['us-east-1', 'eu-west-1', 'sa-east-1', 'ap-northeast-1'] as const;

const Enabled = OneOf(['enabled', 'disabled']);
const Capability = OneOf(['enabled', 'disabled'], { error: 'The `{field}` field must be "enabled" or "disabled".' });
const Tls = OneOf(['opportunistic', 'enforced'], { error: 'The `tls` field must be "opportunistic" or "enforced".' });
const Bool = (name: string) => Type.Boolean({ error: `The \`${name}\` field must be a boolean.` });
const TrackingSubdomain = Type.Union([Type.String(), Type.Null()], {
  error: 'The `tracking_subdomain` field must be a string.',
  description: 'One DNS label: the tracking links host, a CNAME to `public_url`',
});
const Capabilities = Type.Object({ sending: Type.Optional(Capability), receiving: Type.Optional(Capability) });

/** The fields of POST /domains that a domain claim takes too (docs/api.md §9.1, §9.9). */
const domainFields = {
  name: Type.String({ error: 'The `name` field must be a string.', description: 'A domain name; IDN names are stored in their ASCII form' }),
  region: Type.Optional(Type.String({ description: `One of ${REGIONS.join(', ')} (default us-east-1)` })),
  custom_return_path: Type.Optional(Type.String({ error: 'The `custom_return_path` field must be a string.', description: 'One DNS label (default `send`)' })),
  open_tracking: Type.Optional(Bool('open_tracking')),
  click_tracking: Type.Optional(Bool('click_tracking')),
  tracking_subdomain: Type.Optional(TrackingSubdomain),
};

/** Posthorn: the pool of sending IPs a domain's mail leaves from (README "Sending IPs and warm-up"). */
const Pool = Type.String({ error: 'The `pool` field must be a string.', description: 'A pool of `delivery.ips` (default `default`)' });

export const CreateDomainRequest = Type.Object({
  ...domainFields,
  tls: Type.Optional(Tls),
  capabilities: Type.Optional(Capabilities),
  pool: Type.Optional(Pool),
});
export type CreateDomainRequest = Static<typeof CreateDomainRequest>;

export const DomainClaimRequest = Type.Object(domainFields);

export const UpdateDomainRequest = Type.Object({
  open_tracking: Type.Optional(Bool('open_tracking')),
  click_tracking: Type.Optional(Bool('click_tracking')),
  tls: Type.Optional(Tls),
  tracking_subdomain: Type.Optional(TrackingSubdomain),
  capabilities: Type.Optional(Capabilities),
  pool: Type.Optional(Pool),
  region: Type.Optional(Type.String({ error: 'The `region` field must be a string.', description: 'Posthorn: a region domains may name (docs/api.md §9.1)' })),
});
export type UpdateDomainRequest = Static<typeof UpdateDomainRequest>;

/** POST /domains/{id}/dkim/rotate (docs/api.md §9.10). */
export const RotateDkimRequest = Type.Object({
  ed25519: Type.Optional(
    Type.Boolean({ error: 'Invalid `ed25519` field: must be a boolean.', description: 'An Ed25519 key beside the RSA one (default false)' }),
  ),
});

const RecordStatus = OneOf(['not_started', 'pending', 'verified', 'failed', 'temporary_failure']);

/** A DNS record to publish, and what its last check found (docs/api.md §9.7). */
export const DnsRecord = Type.Object({
  record: Type.String({ description: 'SPF, DKIM, Receiving, Tracking; DMARC among the recommended records' }),
  name: Type.String(),
  type: OneOf(['MX', 'TXT', 'CNAME']),
  value: Type.String(),
  ttl: Type.Literal('Auto'),
  status: RecordStatus,
  priority: Type.Optional(Type.Number()),
});
export type DnsRecord = Static<typeof DnsRecord>;

const DomainStatus = OneOf(['not_started', 'pending', 'verified', 'partially_verified', 'partially_failed', 'failed', 'temporary_failure'], {
  description: 'docs/api.md §9.8',
});

const summaryFields = {
  id: Id,
  name: Type.String(),
  status: DomainStatus,
  created_at: Timestamp,
  region: Type.String(),
  open_tracking: Type.Boolean(),
  click_tracking: Type.Boolean(),
  capabilities: Type.Object({ sending: Enabled, receiving: Enabled }),
};

/** An item of GET /domains. */
export const DomainSummary = Type.Object(summaryFields);
export type DomainSummary = Static<typeof DomainSummary>;

/** Present when set: the SDK types it optional, never null (docs/api.md §9.1). */
const trackingField = { tracking_subdomain: Type.Optional(Type.String()) };
const recordFields = { records: Type.Array(DnsRecord), recommended_records: Type.Array(DnsRecord) };

/** POST /domains: the new domain with the records to publish, without `object` (as Resend). */
export const DomainCreated = Type.Object({ ...summaryFields, ...trackingField, ...recordFields });
export type DomainCreated = Static<typeof DomainCreated>;

const Algorithms = Type.Array(Type.String({ description: '`rsa-sha256`, `ed25519-sha256`' }));

/** Posthorn: the DKIM keys, a rotation under way and the retired selectors (docs/api.md §9.10). */
export const DomainDkim = Type.Object({
  selector: Type.String(),
  ed25519_selector: Nullable(Type.String()),
  algorithms: Algorithms,
  rotation: Nullable(
    Type.Object({
      status: Type.Literal('pending'),
      selector: Type.String(),
      ed25519_selector: Nullable(Type.String()),
      algorithms: Algorithms,
      started_at: Timestamp,
    }),
  ),
  previous: Nullable(Type.Object({ selectors: Type.Array(Type.String()), retired_at: Timestamp, remove_after: Timestamp, safe_to_remove: Type.Boolean() })),
});
export type DomainDkim = Static<typeof DomainDkim>;

/** GET /domains/{id}, and what a DKIM rotation answers. */
export const Domain = Type.Object({
  object: Type.Literal('domain'),
  ...summaryFields,
  ...trackingField,
  ...recordFields,
  /** Posthorn: how delivery uses TLS for this domain's mail (docs/api.md §9.2), as PATCH sets it. */
  tls: OneOf(['opportunistic', 'enforced']),
  /** Posthorn: the pool of sending IPs its mail leaves from, when not `default`. */
  pool: Type.Optional(Type.String()),
  dkim: DomainDkim,
});
export type Domain = Static<typeof Domain>;

export const DomainList = List(DomainSummary);

const ClaimStatus = OneOf(['pending', 'verified', 'completed', 'blocked', 'expired', 'superseded', 'canceled', 'failed'], { description: 'docs/api.md §9.9' });

/** A domain claim (docs/api.md §9.9): the TXT record that proves control, under the id the domain will have. */
export const DomainClaim = Type.Object({
  object: Type.Literal('domain_claim'),
  id: Id,
  name: Type.String(),
  status: ClaimStatus,
  domain_id: Id,
  region: Type.String(),
  record: Type.Object({ type: Type.Literal('TXT'), name: Type.String(), value: Type.String(), ttl: Type.Literal('Auto') }),
  blocked_reason: Type.Null(),
  failure_reason: Nullable(Type.String()),
  created_at: Timestamp,
  expires_at: Timestamp,
});
export type DomainClaim = Static<typeof DomainClaim>;
