// GET /deliverability/incidents (docs/api.md §19.9), a Posthorn extension: the team's incidents of
// the sender — replies of a site whose bounce class is `reputation` or `authentication`, counted on
// one incident while they keep coming (src/delivery/incidents.ts) — newest first, open or closed.
// Read-only: the delivery engine writes them with the attempts they come from.
import type { ApiContext } from '../app';
import { listOf, pageQuery } from '../platform/params';
import { resource, route } from '../platform/route';
import { incidentView } from '../../delivery/incidents';
import { IncidentList, IncidentListQuery } from '../../schemas/deliverability';

export const deliverabilityResource = resource('Deliverability', ({ store }: ApiContext) => [
  route({
    method: 'GET',
    path: '/deliverability/incidents',
    summary: 'Deliverability incidents of the sender (Posthorn)',
    description:
      'Replies of a site that speak of the sender (bounce class `reputation` or `authentication`): the site was suspended and nobody suppressed. Newest first; `status` keeps the open or the closed ones. An incident is open until its site has given no such reply for 24 hours.',
    access: 'team',
    query: IncidentListQuery,
    body: 'none',
    response: IncidentList,
    async handler({ caller, query }) {
      const now = Date.now();
      const { status } = query;
      return listOf(
        await store.incidents.page(caller.team, pageQuery(query), 20, (r) => {
          const view = incidentView(r, now);
          return status && view.status !== status ? undefined : view;
        }),
      );
    },
  }),
]);
