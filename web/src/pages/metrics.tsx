// The Metrics page (issue 35, item 5): per-day bars of each event kind, the rates, and breakdowns
// by sending domain and by mailbox provider, over a period and in a time zone of the reader's
// choosing — all from GET /emails/metrics (docs/api.md §7.9), the counters the event function
// keeps. It follows the live stream: new events redraw it.
import { useMemo, useState } from 'preact/hooks';
import { url } from '../api';
import { TimeChart } from '../chart';
import { Card, Empty, ErrorBox, Loading, num, PageHeader, pct, Table, useGet } from '../ui';
import { useLive } from '../live';
import { ProvidersTable } from './providers';

const PERIODS = [
  { id: '7', label: 'Last 7 days', days: 7 },
  { id: '30', label: 'Last 30 days', days: 30 },
  { id: '90', label: 'Last 90 days', days: 90 },
  { id: 'custom', label: 'Custom…', days: 0 },
];

const KINDS = [
  { key: 'sent', label: 'Sent', color: '#6366f1' },
  { key: 'delivered', label: 'Delivered', color: '#10b981' },
  { key: 'delivery_delayed', label: 'Delayed', color: '#d97706' },
  { key: 'bounced', label: 'Bounced', color: '#ef4444' },
  { key: 'complained', label: 'Complained', color: '#f59e0b' },
  { key: 'suppressed', label: 'Suppressed', color: '#64748b' },
  { key: 'unique_opened', label: 'Opened', color: '#0ea5e9' },
  { key: 'unique_clicked', label: 'Clicked', color: '#a855f7' },
];

const RATES = [
  { key: 'delivery_rate', label: 'Delivery rate', of: 'of sent' },
  { key: 'bounce_rate', label: 'Bounce rate', of: 'of sent' },
  { key: 'complaint_rate', label: 'Complaint rate', of: 'of delivered' },
  { key: 'open_rate', label: 'Open rate', of: 'of delivered' },
  { key: 'click_rate', label: 'Click rate', of: 'of delivered' },
];

const isoDay = (d: Date) => d.toISOString().slice(0, 10);

/** The zones the picker offers: the browser's own and UTC first, then every zone it knows. */
function zones(): string[] {
  const own = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  const all = (Intl as { supportedValuesOf?: (k: string) => string[] }).supportedValuesOf?.('timeZone') ?? [];
  return [...new Set([own, 'UTC', ...all])];
}

type Row = Record<string, string | number> & { id: string };

export function MetricsPage() {
  const [period, setPeriod] = useState('30');
  const [zone, setZone] = useState(() => zones()[0]!);
  const today = new Date();
  const [from, setFrom] = useState(isoDay(new Date(today.getTime() - 29 * 86_400_000)));
  const [to, setTo] = useState(isoDay(today));
  const p = PERIODS.find((x) => x.id === period)!;
  // Plain dates are whole days in the zone (docs/api.md §7.9): the last N days end today.
  const range = useMemo(() => {
    if (period === 'custom') return { start: from, end: to, timezone: zone };
    const end = new Date();
    return { start: isoDay(new Date(end.getTime() - (p.days - 1) * 86_400_000)), end: isoDay(end), timezone: zone };
  }, [period, from, to, zone]);
  const label = period === 'custom' ? `From ${from} to ${to}` : p.label;
  const valid = range.start < range.end || range.start === range.end;
  const q = { start_date: range.start, end_date: range.end, timezone: zone, granularity: 'daily' };
  const byDay = useGet(valid ? url('/emails/metrics', { ...q, dimensions: 'period' }) : null);
  const byDomain = useGet(valid ? url('/emails/metrics', { ...q, dimensions: 'domain' }) : null);
  useLive(['email'], () => {
    byDay.reload();
    byDomain.reload();
  });

  const t = byDay.data?.totals ?? {};
  const rows = byDay.data?.data ?? [];
  const times = useMemo(() => rows.map((x) => Date.parse(String(x.period)) / 1000), [byDay.data]);
  const empty = byDay.data && KINDS.every((k) => !Number(t[k.key] ?? 0));
  const domains: Row[] = (byDomain.data?.data ?? [])
    .filter((r) => typeof r.domain_id === 'string')
    .map((r) => ({ ...r, id: String(r.domain_id) }) as Row)
    .sort((a, b) => Number(b.sent ?? 0) - Number(a.sent ?? 0));
  const n = (r: Row, k: string) => Number(r[k] ?? 0);

  return (
    <>
      <PageHeader
        title="Metrics"
        description="What became of your mail, day by day: delivery, bounces, complaints and engagement."
        actions={
          <div class="metrics-pickers">
            <label class="inline-select">
              <span class="sr-only">Period</span>
              <select value={period} onChange={(e) => setPeriod(e.currentTarget.value)}>
                {PERIODS.map((x) => (
                  <option value={x.id}>{x.label}</option>
                ))}
              </select>
            </label>
            <label class="inline-select">
              <span class="sr-only">Time zone</span>
              <select value={zone} onChange={(e) => setZone(e.currentTarget.value)}>
                {zones().map((z) => (
                  <option value={z}>{z}</option>
                ))}
              </select>
            </label>
          </div>
        }
      />
      {period === 'custom' && (
        <div class="metrics-custom">
          <label>
            From <input type="date" value={from} max={to} onChange={(e) => setFrom(e.currentTarget.value)} />
          </label>
          <label>
            To <input type="date" value={to} min={from} onChange={(e) => setTo(e.currentTarget.value)} />
          </label>
        </div>
      )}
      <ErrorBox error={byDay.error} />
      {!byDay.data ? (
        valid ? (
          <Loading />
        ) : (
          <p class="muted">The start of the period must come before its end.</p>
        )
      ) : empty ? (
        <Card>
          <Empty title={`No mail ${label.toLowerCase()}.`}>
            Once you send email — through the API, SMTP or a broadcast — its deliveries, bounces, complaints, opens and clicks are counted here, day by day.
          </Empty>
        </Card>
      ) : (
        <>
          <div class="stats">
            {RATES.map((r) => (
              <div class="stat">
                <span class="stat-label">{r.label}</span>
                <span class="stat-value">{pct(Number(t[r.key] ?? 0))}</span>
                <span class="stat-sub">{r.of}</span>
              </div>
            ))}
          </div>
          <div class="metrics-grid">
            {KINDS.map((k) => (
              <Card>
                <h2 class="card-title">
                  {k.label} <span class="muted">{num(Number(t[k.key] ?? 0))}</span>
                </h2>
                <TimeChart
                  bars
                  height={160}
                  times={times}
                  series={[{ label: k.label, color: k.color, values: rows.map((x) => Number(x[k.key] ?? 0)) }]}
                  label={`${k.label} per day, ${label.toLowerCase()}: ${num(Number(t[k.key] ?? 0))} in all`}
                />
              </Card>
            ))}
          </div>
          <Card>
            <h2 class="card-title">By sending domain</h2>
            <ErrorBox error={byDomain.error} />
            {!byDomain.data ? (
              <Loading />
            ) : (
              <Table
                caption={`Emails by sending domain, ${label.toLowerCase()}`}
                rows={domains}
                columns={[
                  { label: 'Domain', render: (r) => <strong>{String(r.domain_name ?? r.id)}</strong> },
                  { label: 'Sent', render: (r) => num(n(r, 'sent')), class: 'num' },
                  { label: 'Delivered', render: (r) => `${num(n(r, 'delivered'))} · ${pct(n(r, 'delivery_rate'))}`, class: 'num' },
                  { label: 'Bounced', render: (r) => `${num(n(r, 'bounced'))} · ${pct(n(r, 'bounce_rate'))}`, class: 'num' },
                  { label: 'Complained', render: (r) => `${num(n(r, 'complained'))} · ${pct(n(r, 'complaint_rate'))}`, class: 'num' },
                  { label: 'Opened', render: (r) => `${num(n(r, 'unique_opened'))} · ${pct(n(r, 'open_rate'))}`, class: 'num' },
                  { label: 'Clicked', render: (r) => `${num(n(r, 'unique_clicked'))} · ${pct(n(r, 'click_rate'))}`, class: 'num' },
                ]}
              />
            )}
          </Card>
          <ProvidersTable days={p.days} granularity="daily" label={label} range={range} />
        </>
      )}
    </>
  );
}
