// Overview: open deliverability incidents first (GET /deliverability/incidents, docs/api.md §19.9:
// a site answering that the sender's reputation or authentication is at fault), what was sent and
// what happened to it over time (GET /emails/metrics), the rates the big mailbox providers hold
// senders to, the same counts by provider (providers.tsx), and the delivery queue (GET /queue) by
// destination, with its controls: hold, release, retry now, cancel (docs/api.md §19.7).
import { useMemo, useState } from 'preact/hooks';
import type { QueueDestination } from '../../../src/schemas/operations';
import type { Incident } from '../../../src/schemas/deliverability';
import { post, url } from '../api';
import { TimeChart } from '../chart';
import { Badge, Card, Empty, ErrorBox, Loading, notify, num, PageHeader, pct, Section, Table, Time, useAction, useGet, ask } from '../ui';
import { useLive } from '../live';
import { ProvidersTable } from './providers';
import { GettingStarted } from './getting-started';

const RANGES = [
  { id: '24h', label: 'Last 24 hours', days: 1, granularity: 'hourly' },
  { id: '7d', label: 'Last 7 days', days: 7, granularity: 'daily' },
  { id: '30d', label: 'Last 30 days', days: 30, granularity: 'daily' },
  { id: '90d', label: 'Last 90 days', days: 90, granularity: 'weekly' },
];

const SERIES = [
  { key: 'sent', label: 'Sent', color: '#6366f1' },
  { key: 'delivered', label: 'Delivered', color: '#10b981' },
  { key: 'bounced', label: 'Bounced', color: '#ef4444' },
  { key: 'complained', label: 'Complained', color: '#f59e0b' },
  { key: 'opened', label: 'Opened', color: '#0ea5e9' },
  { key: 'clicked', label: 'Clicked', color: '#a855f7' },
];

export function OverviewPage({ team }: { team: string }) {
  const [range, setRange] = useState('7d');
  const r = RANGES.find((x) => x.id === range)!;
  const tz = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  const path = useMemo(() => {
    const end = new Date();
    const start = new Date(end.getTime() - r.days * 86_400_000);
    return url('/emails/metrics', {
      start_date: start.toISOString(),
      end_date: end.toISOString(),
      granularity: r.granularity,
      dimensions: 'period',
      timezone: tz,
    });
  }, [range]);
  const metrics = useGet(path);
  const queue = useGet('/queue');
  const incidents = useGet(url('/deliverability/incidents', { status: 'open' }));
  const checks = useGet('/deliverability/checks');
  useLive(['email', 'queue', 'domain'], () => {
    metrics.reload();
    queue.reload();
    incidents.reload();
  });
  const control = useAction(async (d: QueueDestination, action: 'hold' | 'release' | 'retry' | 'cancel') => {
    const r = await post(url(`/queue/:destination/${action}`, { destination: d.destination }));
    const n = `${num(r.affected)} queued email${r.affected === 1 ? '' : 's'}`;
    notify(
      {
        hold: `${d.destination} is held (${n}).`,
        release: `${d.destination} was released (${n}).`,
        retry: `${n} to ${d.destination} will be tried now.`,
        cancel: `${n} to ${d.destination} canceled.`,
      }[action],
    );
    queue.reload();
  });

  const chart = useMemo(() => {
    // A row of the breakdown by period: `period` (a dimension) is a time, the metrics are counts.
    const rows = metrics.data?.data ?? [];
    return {
      times: rows.map((x) => Date.parse(String(x.period)) / 1000),
      series: SERIES.map((s) => ({ label: s.label, color: s.color, values: rows.map((x) => Number(x[s.key] ?? 0)) })),
    };
  }, [metrics.data]);

  const t = metrics.data?.totals ?? {};
  // Nothing sent in the range: no rates, no verdicts, no all-zero chart — an empty state says so.
  const quiet = !!metrics.data && !t.sent;
  const queued = (queue.data?.data ?? []).reduce((a, d) => a + d.queued, 0);
  return (
    <>
      <PageHeader
        title="Overview"
        description="What your team sent, and what became of it."
        actions={
          <label class="inline-select">
            <span class="sr-only">Time range</span>
            <select value={range} onChange={(e) => setRange(e.currentTarget.value)}>
              {RANGES.map((x) => (
                <option value={x.id}>{x.label}</option>
              ))}
            </select>
          </label>
        }
      />
      {checks.data?.status === 'fail' && <FailingChecks checks={checks.data.checks} />}
      {!!incidents.data?.data.length && <Incidents items={incidents.data.data} />}
      <GettingStarted
        team={team}
        onSent={() => {
          metrics.reload();
          queue.reload();
        }}
      />
      <ErrorBox error={metrics.error} />
      <div class="stats">
        <Stat label="Sent" value={num(t.sent)} />
        <Stat label="Delivered" value={num(t.delivered)} sub={quiet ? undefined : `${pct(t.delivery_rate)} of sent`} />
        <Stat label="Opened" value={num(t.unique_opened)} sub={quiet ? undefined : `${pct(t.open_rate)} open rate`} />
        <Stat label="Clicked" value={num(t.unique_clicked)} sub={quiet ? undefined : `${pct(t.click_rate)} click rate`} />
        <Stat
          label="In the queue"
          value={queue.data ? num(queued) : '…'}
          sub={queued ? `${queue.data!.data.length} destination${queue.data!.data.length === 1 ? '' : 's'}` : 'nothing waiting'}
        />
      </div>
      <Card>
        <h2 class="card-title">Activity</h2>
        {metrics.loading && !metrics.data ? (
          <Loading />
        ) : quiet ? (
          <Empty title={`Nothing sent in the ${r.label.toLowerCase()}.`}>
            The activity chart, the bounce and complaint rates and the mailbox providers appear once emails go out.
          </Empty>
        ) : (
          <TimeChart
            times={chart.times}
            series={chart.series}
            label={`Emails sent, delivered, bounced, complained, opened and clicked, ${r.label.toLowerCase()}`}
          />
        )}
      </Card>
      {!quiet && (
        <div class="grid2">
          <Health
            title="Bounce rate"
            rate={t.bounce_rate ?? 0}
            warn={0.02}
            limit={0.05}
            of={t.sent ?? 0}
            detail={`${num(t.bounced)} of ${num(t.sent)} sent bounced.`}
            advice="Keep it under 2 %. Above 5 % mailbox providers treat the stream as a list of bought or stale addresses."
          />
          <Health
            title="Complaint rate"
            rate={t.complaint_rate ?? 0}
            warn={0.001}
            limit={0.003}
            digits={2}
            of={t.delivered ?? 0}
            detail={`${num(t.complained)} of ${num(t.delivered)} delivered were reported as spam.`}
            advice="Gmail and Yahoo require bulk senders to stay under 0.3 % and recommend under 0.1 %."
          />
        </div>
      )}
      {!quiet && <ProvidersTable days={r.days} granularity={r.granularity} label={r.label} />}
      <Section title="Delivery queue">
        {queue.error && <ErrorBox error={queue.error} />}
        {queue.data && !queue.data.data.length && (
          <Empty title="The queue is empty.">
            {quiet ? 'Emails waiting for their recipients’ mail servers show here.' : "Every accepted email has been handed to its recipients' mail servers."}
          </Empty>
        )}
        {queue.data && queue.data.data.length > 0 && (
          <>
            <ErrorBox error={control.error} />
            <Table
              caption="Queued email by destination"
              rows={queue.data.data.map((d) => ({ ...d, id: d.destination }))}
              columns={[
                {
                  label: 'Destination',
                  render: (d) => (
                    <>
                      <strong>{d.destination}</strong>
                      {d.site !== d.destination && <div class="muted small">site {d.site}</div>}
                    </>
                  ),
                },
                { label: 'Queued', render: (d) => num(d.queued), class: 'num' },
                {
                  label: 'State',
                  render: (d) => (
                    <>
                      {d.held && <Badge value="scheduled" label="held" />}
                      {!d.held && d.held_emails > 0 && <Badge value="scheduled" label={`${d.held_emails} held`} />}{' '}
                      {d.suspended_until && (
                        <span title={`The site ${d.site} answered with a throttling reply`}>
                          <Badge value="delivery_delayed" label="suspended" />{' '}
                          <span class="small">
                            until <Time iso={d.suspended_until} exact />
                          </span>
                        </span>
                      )}
                      {d.retrying > 0 && <Badge value="delivery_delayed" label={`${d.retrying} retrying`} />}
                      {!d.held && !d.held_emails && !d.suspended_until && !d.retrying && '—'}
                    </>
                  ),
                },
                { label: 'Oldest', render: (d) => <Time iso={d.oldest_queued_at} /> },
                { label: 'Next attempt', render: (d) => (d.next_attempt_at ? <Time iso={d.next_attempt_at} /> : '—') },
                { label: 'Last error', render: (d) => <span class="mono small">{d.last_error ?? '—'}</span> },
                {
                  label: 'Actions',
                  render: (d) => (
                    <span class="actions">
                      {d.held ? (
                        <button
                          type="button"
                          class="btn small"
                          disabled={control.busy}
                          onClick={() => control.run(d, 'release')}
                          aria-label={`Release ${d.destination}`}
                        >
                          Release
                        </button>
                      ) : (
                        <>
                          <button
                            type="button"
                            class="btn small"
                            disabled={control.busy || !d.queued}
                            onClick={() => control.run(d, 'retry')}
                            aria-label={`Retry now: ${d.destination}`}
                          >
                            Retry now
                          </button>
                          <button
                            type="button"
                            class="btn small"
                            disabled={control.busy}
                            onClick={() => control.run(d, 'hold')}
                            aria-label={`Hold ${d.destination}`}
                          >
                            Hold
                          </button>
                        </>
                      )}
                      <button
                        type="button"
                        class="btn small danger"
                        disabled={control.busy || !d.queued}
                        onClick={async () =>
                          (await ask(`Cancel the ${d.queued} queued email(s) to ${d.destination}?`, { confirm: 'Cancel delivery' })) && control.run(d, 'cancel')
                        }
                        aria-label={`Cancel queued mail to ${d.destination}`}
                      >
                        Cancel
                      </button>
                    </span>
                  ),
                },
              ]}
            />
          </>
        )}
      </Section>
    </>
  );
}

/** A deliverability check fails (docs/deliverability.md): say which, and link to the page with the fixes. */
function FailingChecks({ checks }: { checks: { name: string; status: string }[] }) {
  const failing = checks.filter((c) => c.status === 'fail');
  return (
    <p class="callout warning">
      <strong>{failing.length === 1 ? 'A deliverability check fails' : `${failing.length} deliverability checks fail`}</strong>:{' '}
      {failing.map((c) => c.name).join(', ')}. <a href="/dashboard/deliverability">See the fixes on the Deliverability page</a>
    </p>
  );
}

/** What an incident's class says happened, in a few words. */
const INCIDENT_WHAT: Record<Incident['class'], string> = {
  reputation: 'refuses mail for the reputation of your sending IP or domain',
  authentication: 'refuses mail that fails its authentication checks (SPF, DKIM, DMARC or reverse DNS)',
};

/** Open incidents of the sender: the reply, what was done (the site suspended, nobody suppressed) and the links to fix it. */
function Incidents({ items }: { items: Incident[] }) {
  const shown = items.slice(0, 3);
  return (
    <section class="callout warning incidents" aria-labelledby="incidents-title">
      <h2 id="incidents-title" class="card-title">
        {items.length === 1 ? 'A deliverability incident is open' : `${items.length} deliverability incidents are open`}
      </h2>
      {shown.map((i) => (
        <div class="incident">
          {i.listing ? (
            <p>
              <strong>{i.listing.target}</strong> is listed on <strong>{i.listing.zone}</strong> since <Time iso={i.created_at} />: {i.listing.meaning}.
              Receivers that use this list refuse or filter its mail.
            </p>
          ) : (
            <p>
              <strong>{i.site}</strong> {INCIDENT_WHAT[i.class]} — {num(i.count)} {i.count === 1 ? 'reply' : 'replies'} since <Time iso={i.created_at} />, the
              last <Time iso={i.last_seen_at} />.{' '}
              {i.suspended_until && (
                // The suspension is short (shaping's backoff); the incident stays open for a day without replies.
                <>
                  Mail to it {Date.parse(i.suspended_until) > Date.now() ? 'is' : 'was'} paused until <Time iso={i.suspended_until} exact />;{' '}
                </>
              )}
              no recipient was suppressed for it.
            </p>
          )}
          <p class="mono small incident-reply">{i.last_reply}</p>
          {i.links.length > 0 && (
            <p class="small">
              {i.links.map((l, n) => (
                <>
                  {n > 0 && ' · '}
                  <a href={l} target="_blank" rel="noopener noreferrer">
                    {new URL(l).hostname}
                  </a>
                </>
              ))}
            </p>
          )}
        </div>
      ))}
      {items.length > shown.length && <p class="small">And {items.length - shown.length} more: GET /deliverability/incidents lists them all.</p>}
    </section>
  );
}

function Stat({ label, value, sub }: { label: string; value: string; sub?: string }) {
  return (
    <div class="stat">
      <span class="stat-label">{label}</span>
      <span class="stat-value">{value}</span>
      {sub && <span class="stat-sub muted">{sub}</span>}
    </div>
  );
}

function Health({
  title,
  rate,
  warn,
  limit,
  detail,
  advice,
  of,
  digits = 1,
}: {
  title: string;
  rate: number;
  /** The count the rate is of: none, no verdict. */
  of: number;
  warn: number;
  limit: number;
  detail: string;
  advice: string;
  digits?: number;
}) {
  if (!of)
    return (
      <Card class="health">
        <h2 class="card-title">{title}</h2>
        <p class="muted">No verdict yet: there is nothing to measure it against in this period.</p>
        <p class="muted small">{advice}</p>
      </Card>
    );
  const state = rate >= limit ? 'bad' : rate >= warn ? 'warn' : 'good';
  const width = Math.min(100, (rate / (limit * 1.5)) * 100);
  return (
    <Card class={`health ${state}`}>
      <div class="health-head">
        <h2 class="card-title">{title}</h2>
        <Badge
          value={state === 'good' ? 'delivered' : state === 'warn' ? 'delivery_delayed' : 'bounced'}
          label={state === 'good' ? 'Healthy' : state === 'warn' ? 'Watch' : 'Too high'}
        />
      </div>
      <p class="health-value">{pct(rate, digits)}</p>
      <div class="meter">
        {/* The value for assistive technology; the bar and its marks below are drawn (a meter element draws no marks). */}
        <meter class="sr-only" min={0} max={limit * 1.5} value={rate} aria-label={`${title}: ${pct(rate, digits)}, limit ${pct(limit, digits)}`} />
        <div class="meter-fill" style={{ width: `${width}%` }} />
        <div class="meter-mark" style={{ left: `${(warn / (limit * 1.5)) * 100}%` }} title={`Recommended: ${pct(warn, digits)}`} />
        <div class="meter-mark limit" style={{ left: `${100 / 1.5}%` }} title={`Limit: ${pct(limit, digits)}`} />
      </div>
      <p class="small">{detail}</p>
      <p class="muted small">{advice}</p>
    </Card>
  );
}
