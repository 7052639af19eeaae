// GET /usage (docs/api.md §21): what a team has used of this install, in Resend's shape. Email
// counts come from the hourly metric counters the event function keeps (`sent`: emails handed to
// delivery, `received`: inbound messages), never from the emails; today and this month are UTC
// calendar periods. The daily email `limit` is `limits.emails_per_day` when set (docs/api.md §6.1);
// every other `limit` but the request rate is null ("no cap" in Resend's words); AI credits do not
// exist here and automation runs are not counted: both stay 0.
import type { StoreReader } from '../store';

const HOUR = 3_600_000;

export interface UsageOptions {
  /** The team's request limit (`limits.requests_per_second`, docs/api.md §6). */
  requestsPerSecond: number;
  /** `limits.emails_per_day`; 0 = none. */
  emailsPerDay?: number;
  now?: number;
}

export async function teamUsage(store: StoreReader, team: string, o: UsageOptions) {
  const now = o.now ?? Date.now();
  const d = new Date(now);
  const dayStart = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  const nextDay = dayStart + 24 * HOUR;
  const monthStart = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const nextMonth = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);

  const day = { sent: 0, received: 0 };
  const month = { sent: 0, received: 0 };
  await store.metrics.scan(team, monthStart, nextMonth, (b) => {
    const sent = b.counts.sent ?? 0;
    const received = b.counts.received ?? 0;
    month.sent += sent;
    month.received += received;
    if (b.hour >= dayStart) {
      day.sent += sent;
      day.received += received;
    }
  });
  const period = (c: { sent: number; received: number }, resets: number, limit: number | null) => ({
    used: c.sent + c.received,
    limit,
    sent: c.sent,
    received: c.received,
    resets_at: new Date(resets).toISOString(),
  });
  const [contacts, segments, broadcasts, domains] = await Promise.all([
    store.contacts.count(team),
    store.segments.count(team),
    store.broadcasts.count(team),
    store.domains.count(team),
  ]);
  return {
    object: 'usage' as const,
    generated_at: new Date(now).toISOString(),
    emails: { daily: period(day, nextDay, o.emailsPerDay || null), monthly: period(month, nextMonth, null) },
    contacts: { used: contacts, limit: null },
    segments: { used: segments, limit: null },
    broadcasts: { used: broadcasts, limit: null },
    ai_credits: { used: 0, limit: null, next_increase_at: null },
    automation_runs: { used: 0, limit: null, resets_at: new Date(nextMonth).toISOString() },
    domains: { used: domains, limit: null },
    // A fixed one-second window (docs/api.md §6), written as Resend writes durations.
    rate_limit: { limit: o.requestsPerSecond, duration: '1000ms' },
  };
}
