// GET /usage (docs/api.md §21): the team's email counts today and this month, its contacts,
// segments, broadcasts and domains, and its request rate limit.
import type { App, ApiContext } from '../app';
import { caller } from '../platform/context';
import { teamUsage } from '../../analytics/usage';

export function usageRoutes(app: App, { store, config }: ApiContext) {
  app.get(
    '/usage',
    ({ request }) =>
      teamUsage(store, caller(request).team, { requestsPerSecond: config.limits.requests_per_second, emailsPerDay: config.limits.emails_per_day }),
    {
      detail: { summary: "The team's usage and limits", tags: ['Usage'] },
    },
  );
}
