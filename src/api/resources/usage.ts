// GET /usage (docs/api.md §21): the team's email counts today and this month, its contacts,
// segments, broadcasts and domains, and its request rate limit.
import type { ApiContext } from '../app';
import { teamUsage } from '../../analytics/usage';
import { resource, route } from '../platform/route';
import { Usage } from '../../schemas/operations';

export const usageResource = resource('Usage', ({ store, config }: ApiContext) => [
  route({
    method: 'GET',
    path: '/usage',
    summary: "The team's usage and limits",
    access: 'team',
    body: 'none',
    response: Usage,
    handler: ({ caller }) =>
      teamUsage(store, caller.team, { requestsPerSecond: config.limits.requests_per_second, emailsPerDay: config.limits.emails_per_day }),
  }),
]);
