// GET /domains/{id}/dmarc (Posthorn extension; docs/deliverability.md §4, docs/api.md §19): what the
// DMARC aggregate reports received for a domain say — sources by address with their PTR, volume,
// aligned SPF and DKIM, which are Posthorn's own, a day-by-day series — and the policy's next step.
// Read-only: the inbound processor keeps the reports (inbound/dmarc-reports.ts).
import type { ApiContext } from '../app';
import { errors } from '../../errors';
import { resource, route } from '../platform/route';
import { UuidParams } from '../../schemas/common';
import { DmarcQuery, DmarcSummary } from '../../schemas/dmarc';

export const dmarcResource = resource('Domains', ({ store, dmarc }: ApiContext) => [
  route({
    method: 'GET',
    path: '/domains/:id/dmarc',
    summary: 'DMARC reports of a domain (Posthorn)',
    description:
      "What the DMARC aggregate reports (RFC 7489 §7.2) mailed to the domain's `rua` address say over the last `days` (default 30): sources by IP with PTR, volume, DMARC-aligned SPF and DKIM, whether each is one of Posthorn's sending addresses, a per-day series, and the next step of the domain's DMARC policy. A bad `days` → 422 `validation_error`.",
    access: 'team',
    params: UuidParams('id'),
    query: DmarcQuery,
    body: 'none',
    response: DmarcSummary,
    async handler({ caller, params, query }) {
      const d = await store.domains.get(caller.team, params.id);
      if (!d) throw errors.notFound('Domain');
      return dmarc.summary(d, query.days ? Number(query.days) : 30);
    },
  }),
]);
