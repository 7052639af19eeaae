// Domain claims (docs/api.md §9.9): take over a domain another team holds by proving control of
// its DNS. POST /domains/claim takes POST /domains's body; the claim is read and verified under
// the id its domain will have (`domain_id`). The logic lives in src/domains/claims.ts.
import type { ApiContext } from '../app';
import type { DomainClaimRec } from '../../store';
import { errors } from '../../errors';
import { CLAIM_PREFIX, claimStatus, findClaim } from '../../domains/claims';
import { resource, route } from '../platform/route';
import { IgnoredBody, UuidParams } from '../../schemas/common';
import { DomainClaim, DomainClaimRequest } from '../../schemas/domains';

const view = (c: DomainClaimRec): DomainClaim => ({
  object: 'domain_claim',
  id: c.id,
  name: c.name,
  status: claimStatus(c),
  domain_id: c.domain_id,
  region: c.region,
  record: { type: 'TXT', name: c.name, value: `${CLAIM_PREFIX}${c.token}`, ttl: 'Auto' },
  blocked_reason: null,
  failure_reason: c.failure_reason,
  created_at: c.created_at,
  expires_at: c.expires_at,
});

const Params = UuidParams('id');

export const domainClaimsResource = resource('Domains', ({ store, claims }: ApiContext) => [
  route({
    method: 'POST',
    path: '/domains/claim',
    summary: 'Claim a domain another team holds',
    access: 'team',
    audit: 'domain.claimed',
    body: DomainClaimRequest,
    status: 201,
    response: DomainClaim,
    handler: async ({ caller, body }) => view(await claims.create(caller.team, body)),
  }),
  route({
    method: 'GET',
    path: '/domains/:id/claim',
    summary: 'Retrieve the claim of a domain',
    access: 'team',
    params: Params,
    body: 'none',
    response: DomainClaim,
    async handler({ caller, params }) {
      const claim = await findClaim(store, caller.team, params.id);
      if (!claim) throw errors.notFound('Domain claim');
      return view(claim);
    },
  }),
  route({
    method: 'POST',
    path: '/domains/:id/claim/verify',
    summary: "Verify a domain claim's TXT record (asynchronous)",
    access: 'team',
    params: Params,
    body: IgnoredBody,
    response: DomainClaim,
    handler: async ({ caller, params }) => view(await claims.verify(caller.team, params.id)),
  }),
]);
