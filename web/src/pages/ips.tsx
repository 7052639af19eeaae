// Sending IPs (README "Sending IPs and warm-up", docs/api.md §19.13): the addresses of
// `delivery.ips` with their pool, EHLO name, reverse DNS, listing, rotation and warm-up, what each
// sent today per site against its allowance (complaints, and the hourly cap slowed after a troubled
// day), the last 7 days' counts per address (GET /emails/metrics?dimensions=ip), the regions whose
// mail waits, and the warm-up controls (admins and owners).
import type { SendingIp } from '../../../src/schemas/ips';
import { post, url } from '../api';
import { Badge, Empty, ErrorBox, Loading, num, PageHeader, pct, Section, Table, Time, useAction, useGet } from '../ui';

type Action = 'start' | 'pause' | 'resume' | 'complete';

/** The warm-up actions that apply to a state (POST /ips/{ip}/warmup refuses the others). */
const ACTIONS: Record<SendingIp['warmup']['state'], Action[]> = {
  off: ['start'],
  warming: ['pause', 'complete'],
  paused: ['resume', 'complete'],
  complete: ['start'],
};

const LABELS: Record<Action, string> = { start: 'Start warm-up', pause: 'Pause', resume: 'Resume', complete: 'Complete' };

function Controls({ ip, done }: { ip: SendingIp; done: () => void }) {
  const act = useAction(async (action: Action) => {
    await post(url('/ips/:ip/warmup', { ip: ip.address }), { action });
    done();
  });
  return (
    <div class="actions">
      {ACTIONS[ip.warmup.state].map((a) => (
        <button type="button" class="btn small" disabled={act.busy} onClick={() => void act.run(a)} aria-label={`${LABELS[a]}: ${ip.address}`}>
          {LABELS[a]}
        </button>
      ))}
      <ErrorBox error={act.error} />
    </div>
  );
}

export function IpsPage() {
  const ips = useGet('/ips');
  const rows = (ips.data?.data ?? []).map((ip) => ({ ...ip, id: ip.address }));
  // Regions (README "Regions"): those whose mail waits, no node of theirs running (as /health says).
  const waiting = (useGet('/regions').data?.data ?? []).filter((r) => r.waiting).map((r) => r.name);
  // The last 7 days by sending IP (docs/api.md §7.9, "By sending IP"); the default range is those days.
  const byIp = useGet(url('/emails/metrics', { dimensions: 'ip', metrics: 'sent,delivered,bounced,complained,bounce_rate,complaint_rate' }));
  const ipRows = ((byIp.data?.data ?? []) as Record<string, string | number>[])
    .filter((r) => typeof r.ip === 'string')
    .map((r): Record<string, string | number> & { id: string } => ({ ...r, id: String(r.ip) }));
  return (
    <>
      <PageHeader
        title="Sending IPs"
        description="The addresses mail leaves from (delivery.ips), by pool: each says its own EHLO name, whose reverse DNS must match. A warming address sends at most its allowance per site each day; the rest waits in the queue."
      />
      <ErrorBox error={ips.error} />
      {waiting.length > 0 && (
        <p class="callout warning">
          No node running in {waiting.length === 1 ? 'region' : 'regions'} <strong>{waiting.join(', ')}</strong>: the mail of their domains waits in the queue
          until one is back.
        </p>
      )}
      {ips.loading && !ips.data ? (
        <Loading />
      ) : rows.length === 0 ? (
        <Empty title="No sending IPs configured.">
          The kernel chooses the address and EHLO is smtp.hostname. List addresses in <span class="mono">[[delivery.ips]]</span> to send from pools.
        </Empty>
      ) : (
        <>
          <Table
            caption="Sending IPs"
            rows={rows}
            columns={[
              { label: 'Address', render: (ip) => <span class="mono">{ip.address}</span> },
              { label: 'Pool', render: (ip) => ip.pool },
              { label: 'EHLO', render: (ip) => <span class="mono small">{ip.ehlo}</span> },
              {
                label: 'Reverse DNS',
                render: (ip) => (
                  <span title={ip.ptr.evidence}>
                    <Badge value={ip.ptr.status} />
                  </span>
                ),
              },
              {
                label: 'Rotation',
                render: (ip) =>
                  ip.listed ? (
                    <Badge value="failed" label="listed" />
                  ) : ip.out_of_rotation ? (
                    <span title={ip.out_of_rotation.reason}>
                      <Badge value="failed" label="out" /> until <Time iso={ip.out_of_rotation.until} />
                    </span>
                  ) : (
                    <Badge value="delivered" label="in rotation" />
                  ),
              },
              {
                label: 'Warm-up',
                render: (ip) => (
                  <>
                    {ip.warmup.state}
                    {ip.warmup.ramp ? (
                      <span class="muted small">
                        {' '}
                        ({ip.warmup.ramp}
                        {ip.warmup.day !== null ? `, day ${ip.warmup.day + 1}` : ''})
                      </span>
                    ) : null}
                  </>
                ),
              },
              { label: 'Controls', render: (ip) => <Controls ip={ip} done={ips.reload} /> },
            ]}
          />
          <Section title="Sent today, per site">
            {rows.every((ip) => ip.sent_today.length === 0) ? (
              <Empty title="Nothing sent today (UTC) yet." />
            ) : (
              <Table
                caption="Sent today per address and site"
                rows={rows.flatMap((ip) => ip.sent_today.map((s) => ({ ...s, address: ip.address, id: `${ip.address} ${s.site}` })))}
                columns={[
                  { label: 'Address', render: (r) => <span class="mono">{r.address}</span> },
                  { label: 'Site', render: (r) => r.site },
                  { label: 'Sent', class: 'num', render: (r) => num(r.sent) },
                  { label: 'Allowance', class: 'num', render: (r) => (r.allowance === null ? 'no limit' : num(r.allowance)) },
                  { label: 'Ramp held', class: 'num', render: (r) => (r.held_days ? `${r.held_days} d` : '—') },
                  { label: 'Complaints', class: 'num', render: (r) => num(r.complained) },
                  { label: 'Hourly cap', render: (r) => (r.slowed ? <Badge value="delivery_delayed" label="slowed" /> : '—') },
                ]}
              />
            )}
          </Section>
          <Section title="Last 7 days, per address">
            {ipRows.length === 0 ? (
              <Empty title="No mail sent from these addresses in the last 7 days." />
            ) : (
              <Table
                caption="Sent, delivered, bounced and complained per sending IP, last 7 days"
                rows={ipRows}
                columns={[
                  { label: 'Address', render: (r) => <span class="mono">{r.ip}</span> },
                  { label: 'Sent', class: 'num', render: (r) => num(Number(r.sent)) },
                  { label: 'Delivered', class: 'num', render: (r) => num(Number(r.delivered)) },
                  { label: 'Bounced', class: 'num', render: (r) => `${num(Number(r.bounced))} (${pct(Number(r.bounce_rate))})` },
                  { label: 'Complained', class: 'num', render: (r) => `${num(Number(r.complained))} (${pct(Number(r.complaint_rate), 2)})` },
                ]}
              />
            )}
          </Section>
        </>
      )}
    </>
  );
}
