// Domain claims (docs/api.md §9.9): take over a domain another team holds by proving control of
// its DNS. POST /domains/claim takes POST /domains's body; the claim is read and verified under
// the id its domain will have (`domain_id`). The logic lives in src/domains/claims.ts.
import { t } from 'elysia';
import type { App, ApiContext } from '../app';
import { caller } from '../platform/context';
import { pathId } from '../platform/params';
import { errors } from '../../errors';
import { claimView, findClaim } from '../../domains/claims';
import { domainFields } from './domains';

const tags = ['Domains'];

export function domainClaimsRoutes(app: App, { store, claims }: ApiContext) {
  app.post(
    '/domains/claim',
    async ({ request, body, set }) => {
      const claim = await claims.create(caller(request).team, body);
      set.status = 201;
      return claimView(claim);
    },
    { body: t.Object(domainFields), detail: { summary: 'Claim a domain another team holds', tags } },
  );

  app.get(
    '/domains/:id/claim',
    async ({ request, params }) => {
      const claim = await findClaim(store, caller(request).team, pathId(params.id));
      if (!claim) throw errors.notFound('Domain claim');
      return claimView(claim);
    },
    { detail: { summary: 'Retrieve the claim of a domain', tags } },
  );

  app.post('/domains/:id/claim/verify', async ({ request, params }) => claimView(await claims.verify(caller(request).team, pathId(params.id))), {
    detail: { summary: "Verify a domain claim's TXT record (asynchronous)", tags },
  });
}
