// The Overview's table by mailbox provider (docs/api.md §7.9, "By mailbox provider"): for each site
// the counts went to — sent, delivered, deferred, bounced by bounce class, complained, opened — from
// GET /emails/metrics?dimensions=site over the Overview's range.
import { useMemo } from 'preact/hooks';
import type { BounceClass } from '../../../src/mail/bounce-class-names';
import { url } from '../api';
import { Card, Empty, ErrorBox, Loading, num, pct, Table, useGet } from '../ui';

/** Every bounce class, in the README's order ("Bounce classes and incidents"); the type keeps the list whole. */
const CLASSES = ['recipient', 'mailbox_full', 'message', 'reputation', 'authentication', 'policy', 'rate', 'routing', 'unknown'] as const;
type Listed = (typeof CLASSES)[number];
const _whole: [Exclude<BounceClass, Listed>, Exclude<Listed, BounceClass>] extends [never, never] ? true : never = true;
void _whole;

/** Classes that are the sender's problem, not the address's: shown in red. */
const SENDERS: readonly string[] = ['reputation', 'authentication'];

const COUNTS = ['sent', 'delivered', 'delivery_delayed', 'bounced', 'complained', 'unique_opened'];
const METRICS = [...COUNTS, ...CLASSES.map((c) => `bounced_${c}`)].join(',');

/** How a site is named in the table (the shipped sites of src/delivery/sites.toml; others as they are). */
const NAMES: Record<string, string> = {
  google: 'Google (Gmail, Workspace)',
  microsoft: 'Microsoft (Outlook, Microsoft 365)',
  yahoo: 'Yahoo, AOL',
  apple: 'Apple iCloud',
  gmx: 'GMX, WEB.DE',
  mailru: 'Mail.ru',
  yandex: 'Yandex',
  other: 'Other providers',
};

type Row = Record<string, string | number> & { id: string };

/** `range`: the period and zone asked for (the Metrics page); else the last `days` days. */
export function ProvidersTable({
  days,
  granularity,
  label,
  range,
}: {
  days: number;
  granularity: string;
  label: string;
  range?: { start: string; end: string; timezone: string };
}) {
  const path = useMemo(() => {
    const end = new Date();
    return url('/emails/metrics', {
      start_date: range?.start ?? new Date(end.getTime() - days * 86_400_000).toISOString(),
      end_date: range?.end ?? end.toISOString(),
      ...(range ? { timezone: range.timezone } : {}),
      granularity,
      dimensions: 'site',
      metrics: METRICS,
    });
  }, [days, granularity, range?.start, range?.end, range?.timezone]);
  const m = useGet(path);
  // Providers by mail sent, most first; counts made before any attempt (suppressed at once) have no site and no row.
  const rows: Row[] = (m.data?.data ?? [])
    .filter((r) => typeof r.site === 'string' && COUNTS.some((c) => Number(r[c] ?? 0) > 0))
    .map((r) => ({ ...r, id: String(r.site) }) as Row)
    .sort((a, b) => Number(b.sent ?? 0) - Number(a.sent ?? 0) || (a.id === 'other' ? 1 : b.id === 'other' ? -1 : a.id.localeCompare(b.id)));
  const n = (r: Row, k: string) => Number(r[k] ?? 0);
  return (
    <Card>
      <h2 class="card-title">By mailbox provider</h2>
      <p class="muted small">Where your mail went, {label.toLowerCase()}: a provider's row is where its reputation with you shows first.</p>
      <ErrorBox error={m.error} />
      {m.loading && !m.data ? (
        <Loading />
      ) : rows.length === 0 ? (
        <Empty title="Nothing delivered yet in this range.">Once mail has been handed to a provider, it appears here.</Empty>
      ) : (
        <Table
          caption={`Emails by mailbox provider, ${label.toLowerCase()}`}
          rows={rows}
          columns={[
            { label: 'Provider', render: (r) => <strong>{NAMES[r.id] ?? r.id}</strong> },
            { label: 'Sent', render: (r) => num(n(r, 'sent')), class: 'num' },
            {
              label: 'Delivered',
              render: (r) => (
                <>
                  {num(n(r, 'delivered'))}
                  <div class="muted small">{pct(n(r, 'sent') ? n(r, 'delivered') / n(r, 'sent') : 0)}</div>
                </>
              ),
              class: 'num',
            },
            { label: 'Deferred', render: (r) => num(n(r, 'delivery_delayed')), class: 'num' },
            {
              label: 'Bounced',
              render: (r) => (
                <>
                  {num(n(r, 'bounced'))}
                  <div class="bounce-classes small">
                    {CLASSES.filter((c) => n(r, `bounced_${c}`) > 0).map((c) => (
                      <span class={`bounce-class ${SENDERS.includes(c) ? 'bad' : 'muted'}`}>
                        {c.replace('_', ' ')} {num(n(r, `bounced_${c}`))}
                      </span>
                    ))}
                  </div>
                </>
              ),
              class: 'num',
            },
            { label: 'Complained', render: (r) => num(n(r, 'complained')), class: 'num' },
            { label: 'Opened', render: (r) => num(n(r, 'unique_opened')), class: 'num' },
          ]}
        />
      )}
    </Card>
  );
}
