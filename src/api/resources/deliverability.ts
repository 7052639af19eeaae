// Deliverability (Posthorn extensions). GET /deliverability/incidents (docs/api.md §19.9): the
// team's incidents of the sender — replies of a site whose bounce class is `reputation` or
// `authentication`, counted on one incident while they keep coming (src/delivery/incidents.ts) —
// newest first, open or closed; read-only, the delivery engine writes them with the attempts they
// come from. GET /deliverability/checks (docs/deliverability.md §2, docs/api.md §19.10): the
// doctor's last run as the caller's team sees it — the machine's checks and those of its own
// domains; the first call after a start, and `?refresh=true`, run the checks first (one run at a
// time for everyone); POST runs them now (owners and admins). GET /deliverability/setup: the
// start-up warning's problems (health/startup.ts), which the dashboard's banner shows.
import type { ApiContext } from '../app';
import { listOf, pageQuery } from '../platform/params';
import { resource, route } from '../platform/route';
import { incidentView } from '../../delivery/incidents';
import { checksOfTeam, type DoctorRun, startupProblems, worst } from '../../health';
import { codeMeaning, zoneInfo } from '../../dns/blocklist-zones';
import { DeliverabilityChecks, DeliverabilityChecksQuery, DeliverabilitySetup, IncidentList, IncidentListQuery } from '../../schemas/deliverability';

/** A run as a team sees it, on the wire. */
function checksView(run: DoctorRun, team: string): DeliverabilityChecks {
  const mine = checksOfTeam(run, team);
  return {
    object: 'deliverability_checks',
    checked_at: mine.checked_at,
    status: worst(mine.checks),
    checks: mine.checks,
    blocklists: mine.blocklists.map((v) => ({
      zone: v.zone,
      target: v.target,
      target_type: v.target_type,
      status: v.status,
      codes: v.status === 'listed' ? v.codes : [],
      meaning: v.status === 'listed' ? codeMeaning(v.zone, v.codes) : null,
      reason: v.status === 'listed' ? v.reason : v.status === 'unknown' ? v.why : null,
      delisting_url: zoneInfo(v.zone)?.delisting ?? null,
    })),
  };
}

export const deliverabilityResource = resource('Deliverability', ({ store, doctor, config }: ApiContext) => [
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
      return checksView(run, caller.team);
    },
  }),
  route({
    method: 'POST',
    path: '/deliverability/checks',
    summary: 'Run the deliverability checks now (Posthorn)',
    description:
      'Runs every check now (one run at a time for every caller; listings found act as the timed run does) and answers as GET /deliverability/checks. Owners and admins only: a run asks the DNS blocklists, whose quotas are counted per querier.',
    access: 'team',
    role: 'admin',
    body: 'none',
    response: DeliverabilityChecks,
    async handler({ caller }) {
      return checksView(await doctor.run(), caller.team);
    },
  }),
  route({
    method: 'GET',
    path: '/deliverability/setup',
    summary: 'Configuration problems that keep the server from delivering (Posthorn)',
    description:
      'What `serve` warns about at every start (docs/deliverability.md §1.1), from the configuration alone: `smtp.hostname` is `localhost`, a bare name or an IP literal; `public_url` is on localhost while domains exist. Empty when the configuration can deliver. The dashboard shows these as a banner on every page.',
    access: 'team',
    body: 'none',
    response: DeliverabilitySetup,
    async handler() {
      return { object: 'deliverability_setup' as const, problems: startupProblems(config, (await store.domains.everything()).length) };
    },
  }),
]);
