// Deliverability (docs/deliverability.md): the doctor's checks as the team sees them, each with its
// evidence and fix (GET /deliverability/checks; "Run checks now" is POST, owners and admins), each
// blocklist zone's answer on each sending address and domain with the list's delisting link, and
// the incidents of the sender — replies of a site and blocklist listings (GET
// /deliverability/incidents, docs/api.md §19.9). The start-up banner (SetupBanner, on every page of
// the shell) links here.
import type { BlocklistStatus, DeliverabilityChecks, Incident } from '../../../src/schemas/deliverability';
import { post } from '../api';
import { Badge, Empty, ErrorBox, Loading, notify, PageHeader, Section, Table, Time, useAction, useGet } from '../ui';

type Check = DeliverabilityChecks['checks'][number];
type Listing = BlocklistStatus;

/** A listing's status as a badge: listed red, clean green, unknown amber. */
const LISTING_TONE = { listed: 'fail', clean: 'pass', unknown: 'warn' } as const;

export function DeliverabilityPage() {
  const checks = useGet('/deliverability/checks');
  const incidents = useGet('/deliverability/incidents');
  const run = useAction(async () => {
    const r = await post('/deliverability/checks');
    const failed = r.checks.filter((c) => c.status === 'fail').length;
    notify(failed ? `Checks run: ${failed} failed.` : 'Checks run: none failed.');
    checks.reload();
    incidents.reload();
  });
  const data = checks.data;
  return (
    <>
      <PageHeader
        title="Deliverability"
        description="Whether this server can deliver and is trusted: host name, reverse DNS, SPF, DKIM and DMARC of your domains, the SMTP certificate, port 25 and DNS blocklists (posthorn doctor). They run every hour; they never stop sending by themselves."
        need="admin"
        actions={
          <button type="button" class="btn primary" disabled={run.busy} onClick={() => void run.run()}>
            {run.busy ? 'Running checks…' : 'Run checks now'}
          </button>
        }
      />
      <ErrorBox error={checks.error ?? run.error} />
      {!data ? (
        !checks.error && <Loading />
      ) : (
        <>
          <Summary data={data} />
          <Section title="Checks">
            <Table<Check & { id: string }> caption="Deliverability checks" rows={data.checks.map((c) => ({ ...c, id: c.name }))} columns={CHECK_COLUMNS} />
          </Section>
          <Section title="Blocklists">
            {data.blocklists.length === 0 ? (
              <Empty title="No blocklist was asked">No sending address was found, or no zones are configured (deliverability.dnsbl).</Empty>
            ) : (
              <Table<Listing & { id: string }>
                caption="Blocklist status per sending address and domain"
                rows={data.blocklists.map((l) => ({ ...l, id: `${l.zone} ${l.target}` }))}
                columns={LISTING_COLUMNS}
              />
            )}
          </Section>
        </>
      )}
      <Section title="Incidents">
        <ErrorBox error={incidents.error} />
        {!incidents.data ? (
          !incidents.error && <Loading />
        ) : incidents.data.data.length === 0 ? (
          <Empty title="No incidents">Replies that blame your reputation or authentication, and blocklist listings, show here.</Empty>
        ) : (
          <Table<Incident> caption="Deliverability incidents" rows={incidents.data.data} columns={INCIDENT_COLUMNS} />
        )}
      </Section>
    </>
  );
}

function Summary({ data }: { data: DeliverabilityChecks }) {
  const failed = data.checks.filter((c) => c.status === 'fail').length;
  const warned = data.checks.filter((c) => c.status === 'warn').length;
  const when = (
    <>
      Last run <Time iso={data.checked_at} />.
    </>
  );
  if (failed)
    return (
      <p class="callout warning">
        <strong>
          {failed} {failed === 1 ? 'check fails' : 'checks fail'}
        </strong>
        : mail from this server is likely refused or filtered until fixed. {when}
      </p>
    );
  return (
    <p class={`callout ${warned ? 'warning' : 'success'}`}>
      {warned ? `No check fails; ${warned} ${warned === 1 ? 'warning' : 'warnings'}.` : 'Every check passes.'} {when}
    </p>
  );
}

const CHECK_COLUMNS = [
  { label: 'Check', render: (c: Check) => <span class="mono">{c.name}</span> },
  { label: 'Status', render: (c: Check) => <Badge value={c.status} /> },
  { label: 'Evidence', render: (c: Check) => <span class="small wrap-anywhere">{c.evidence}</span> },
  { label: 'Fix', render: (c: Check) => (c.fix ? <span class="small wrap-anywhere">{c.fix}</span> : <span class="muted">—</span>) },
];

const LISTING_COLUMNS = [
  { label: 'Address or domain', render: (l: Listing) => <span class="mono">{l.target}</span> },
  { label: 'Zone', render: (l: Listing) => <span class="mono">{l.zone}</span> },
  { label: 'Status', render: (l: Listing) => <Badge value={LISTING_TONE[l.status]} label={l.status} /> },
  {
    label: 'Detail',
    render: (l: Listing) => <span class="small wrap-anywhere">{[l.meaning, l.reason].filter(Boolean).join(' — ') || <span class="muted">—</span>}</span>,
  },
  {
    label: 'Delisting',
    render: (l: Listing) =>
      l.delisting_url ? (
        <a href={l.delisting_url} target="_blank" rel="noopener noreferrer">
          {new URL(l.delisting_url).hostname}
        </a>
      ) : (
        <span class="muted">—</span>
      ),
  },
];

const INCIDENT_COLUMNS = [
  {
    label: 'Incident',
    render: (i: Incident) =>
      i.kind === 'listing' && i.listing ? (
        <span>
          <span class="mono">{i.listing.target}</span> listed on <span class="mono">{i.listing.zone}</span>
        </span>
      ) : (
        <span>
          <strong>{i.site}</strong>: {i.class} replies ({i.count})
        </span>
      ),
  },
  { label: 'Status', render: (i: Incident) => <Badge value={i.status === 'open' ? 'warn' : 'pass'} label={i.status} /> },
  {
    label: 'Since',
    render: (i: Incident) => (
      <span class="small">
        <Time iso={i.created_at} />
        {i.closed_at && (
          <>
            {' '}
            – <Time iso={i.closed_at} />
          </>
        )}
      </span>
    ),
  },
  { label: 'What was said', render: (i: Incident) => <span class="mono small wrap-anywhere">{i.listing ? i.listing.meaning : i.last_reply}</span> },
  {
    label: 'Links',
    render: (i: Incident) =>
      i.links.length ? (
        i.links.map((l, n) => (
          <>
            {n > 0 && ' · '}
            <a href={l} target="_blank" rel="noopener noreferrer">
              {new URL(l).hostname}
            </a>
          </>
        ))
      ) : (
        <span class="muted">—</span>
      ),
  },
];

/**
 * The start-up warning in the dashboard (docs/deliverability.md §1.1): when the configuration cannot
 * deliver at all (GET /deliverability/setup, the verdicts `serve` prints), every page says so with
 * the fix, linking to this page.
 */
export function SetupBanner() {
  const setup = useGet('/deliverability/setup');
  const problems = setup.data?.problems ?? [];
  if (!problems.length) return null;
  return (
    <section class="callout warning setup-banner" aria-label="This server cannot deliver mail">
      <p>
        <strong>This server cannot deliver mail to the Internet yet.</strong>
      </p>
      {problems.map((p) => (
        <p class="small">
          {p.evidence}. <strong>Fix:</strong> {p.fix}
        </p>
      ))}
      <p class="small">
        <a href="/dashboard/deliverability">See every deliverability check</a>
      </p>
    </section>
  );
}
