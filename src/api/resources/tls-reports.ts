// GET /tls-reports (docs/api.md §19.8), a Posthorn-specific API: the team's TLS-RPT data (RFC 8460)
// — per UTC day and MTA-STS policy domain, how many TLS sessions met the domain's policy and
// which failed and why. Each item's `policy`, `summary` and `failure-details` use RFC 8460 §4.4's
// field names, so an item is one entry of an aggregate report's `policies` array. Read-only: the
// delivery engine writes the data with the attempts it comes from.
import type { ApiContext } from '../app';
import { pageQuery } from '../platform/params';
import { errors } from '../../errors';
import type { TlsReportDay } from '../../store';
import { resource, route } from '../platform/route';
import { policyResults } from '../../mail/tls-rpt';
import { type TlsReport, TlsReportList, TlsReportQuery } from '../../schemas/operations';

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const CURSOR = /^(\d{4}-\d{2}-\d{2})\/([a-z0-9.-]{1,253})$/;

/** A `YYYY-MM-DD` query value that is a real date, or undefined when absent. */
function dayParam(name: string, v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  if (!DAY.test(v) || new Date(`${v}T00:00:00Z`).toISOString().slice(0, 10) !== v)
    throw errors.validation(`The \`${name}\` parameter must be a date as YYYY-MM-DD.`);
  return v;
}

/** One day of one policy domain, shaped as RFC 8460 §4.4 shapes a policy's results (the mailed reports' shape too). */
export function tlsReportItem(r: TlsReportDay): TlsReport {
  return {
    object: 'tls_report',
    id: `${r.day}/${r.domain}`,
    date: r.day,
    policy_domain: r.domain,
    ...policyResults(r.domain, r.policy, r.success, r.failure, r.failures),
  };
}

export const tlsReportsResource = resource('Queue', ({ store }: ApiContext) => [
  route({
    method: 'GET',
    path: '/tls-reports',
    summary: 'TLS-RPT data of MTA-STS destinations (Posthorn)',
    description:
      "The team's TLS sessions per UTC day and MTA-STS policy domain (RFC 8460): newest day first, policy domains in order within a day, with RFC 8460 §4.4's field names. A bad value → 422 `validation_error`.",
    access: 'team',
    query: TlsReportQuery,
    body: 'none',
    response: TlsReportList,
    async handler({ caller, query }) {
      const page = pageQuery(query, { cursor: (v) => CURSOR.test(v.toLowerCase()), before: false });
      const since = dayParam('since', query.since);
      const until = dayParam('until', query.until);
      const cursor = page.after ? CURSOR.exec(page.after)! : null;
      const limit = page.limit ?? 20;
      const rows = await store.tlsReports.list(caller.team, {
        limit: limit + 1,
        since,
        until,
        after: cursor ? { day: cursor[1]!, domain: cursor[2]! } : undefined,
      });
      return { object: 'list' as const, has_more: rows.length > limit, data: rows.slice(0, limit).map(tlsReportItem) };
    },
  }),
]);
