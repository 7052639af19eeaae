// GET /emails/metrics (docs/api.md §7.9): the SDK's `emails.metrics()`. Query values arrive as
// strings, lists comma-joined; analytics/metrics.ts reads them and answers.
import type { ApiContext } from '../app';
import { emailMetrics } from '../../analytics/metrics';
import { resource, route } from '../platform/route';
import { MetricsQuery, Metrics } from '../../schemas/metrics';

export const metricsResource = resource('Emails', ({ store }: ApiContext) => [
  route({
    method: 'GET',
    path: '/emails/metrics',
    summary: 'Email metrics: totals and breakdowns by period, domain, email or broadcast',
    access: 'team',
    query: MetricsQuery,
    body: 'none',
    response: Metrics,
    handler: ({ caller, query }) => emailMetrics(store, caller.team, query),
  }),
]);
