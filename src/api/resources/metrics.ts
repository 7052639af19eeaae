// GET /emails/metrics (docs/api.md §7.9): the SDK's `emails.metrics()`. Query values arrive as
// strings, lists comma-joined; analytics/metrics.ts reads them and answers.
import type { ApiContext } from '../app';
import { emailMetrics } from '../../analytics/metrics';
import { resource, route } from '../platform/route';
import { MetricsQuery, Metrics } from '../../schemas/metrics';

export const metricsResource = resource('Emails', ({ store, config }: ApiContext) => [
  route({
    method: 'GET',
    path: '/emails/metrics',
    summary: 'Email metrics: totals and breakdowns by period, domain, email or broadcast',
    access: 'team',
    query: MetricsQuery,
    body: 'none',
    response: Metrics,
    // `ip` is a dimension once `delivery.ips` lists sending IPs (docs/api.md §7.9, "By sending IP").
    handler: ({ caller, query }) => emailMetrics(store, caller.team, query, Date.now(), config.delivery.ips.length > 0),
  }),
]);
