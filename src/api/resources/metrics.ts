// GET /emails/metrics (docs/api.md §7.9): the SDK's `emails.metrics()`. Query values
// arrive as strings, lists comma-joined; analytics/metrics.ts validates and answers.
import type { App, ApiContext } from '../app';
import { caller } from '../platform/context';
import { emailMetrics, type MetricsQuery } from '../../analytics/metrics';

export function metricsRoutes(app: App, { store }: ApiContext) {
  app.get(
    '/emails/metrics',
    async ({ request, query }) => {
      const { team } = caller(request);
      const q: MetricsQuery = {};
      for (const k of ['start_date', 'end_date', 'timezone', 'granularity', 'metrics', 'dimensions', 'domain_id', 'email_id', 'broadcast_id'] as const)
        if (typeof query[k] === 'string') q[k] = query[k];
      return emailMetrics(store, team, q);
    },
    { detail: { summary: 'Email metrics: totals and breakdowns by period, domain, email or broadcast', tags: ['Emails'] } },
  );
}
