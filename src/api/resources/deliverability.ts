// GET /deliverability/checks (docs/deliverability.md §2), a Posthorn extension: the doctor's last
// run as the caller's team sees it — the machine's checks and those of its own domains. The first
// call after a start, and `?refresh=true`, run the checks first (one run at a time for everyone).
import type { ApiContext } from '../app';
import { resource, route } from '../platform/route';
import { checksOfTeam, worst } from '../../health';
import { DeliverabilityChecks, DeliverabilityChecksQuery } from '../../schemas/deliverability';

export const deliverabilityResource = resource('Deliverability', ({ doctor }: ApiContext) => [
  route({
    method: 'GET',
    path: '/deliverability/checks',
    summary: 'Deliverability checks of the server (Posthorn)',
    description:
      "What `posthorn doctor` checks — host name, public URL, sending addresses and their reverse DNS, the SMTP certificate, outbound port 25, DNS blocklists, and SPF, DKIM, DMARC and domain blocklists of each of the team's sending domains — each with `pass`/`warn`/`fail`, the evidence and the fix. The last run (every `deliverability.check_interval`); `refresh=true` runs them now.",
    access: 'team',
    query: DeliverabilityChecksQuery,
    body: 'none',
    response: DeliverabilityChecks,
    async handler({ caller, query }) {
      const run = query.refresh === 'true' ? await doctor.run() : (doctor.lastRun() ?? (await doctor.run()));
      const mine = checksOfTeam(run, caller.team);
      return { object: 'deliverability_checks' as const, checked_at: mine.checked_at, status: worst(mine.checks), checks: mine.checks };
    },
  }),
]);
