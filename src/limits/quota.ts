// Sending limits per team (`limits.emails_per_hour`, `limits.emails_per_day`, docs/api.md §6.1):
// emails accepted per clock hour and per UTC day, whichever way in (REST, batch, SMTP, broadcasts,
// automations, scheduled sends — all commit through the sending core, which calls `takeQuota` in the unit of
// work that persists them). The counts are store rows read once per unit of work, so two requests
// committed together can never both take the last email; with no limit set nothing is read or counted.
import type { Config } from '../config';
import type { Tx } from '../store';
import { ApiError } from '../errors';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export type EmailLimits = Pick<Config['limits'], 'emails_per_hour' | 'emails_per_day'>;

/** A send refused by a sending limit: 429 with Retry-After until the period ends (over SMTP 451 4.7.1, docs/api.md §17). */
export class QuotaExceeded extends ApiError {
  constructor(
    period: 'hourly' | 'daily',
    limit: number,
    remaining: number,
    asked: number,
    /** When the period ends (ms). */
    readonly resetsAt: number,
    now: number,
  ) {
    const per = period === 'daily' ? 'day' : 'hour';
    const left = asked > 1 && remaining > 0 ? ` (${remaining} left, this request has ${asked} emails)` : '';
    super(
      429,
      `${period}_quota_exceeded`,
      `You have reached your ${period} email sending quota of ${limit} emails per ${per}${left}. It resets at ${new Date(resetsAt).toISOString()}.`,
      { 'retry-after': String(Math.max(1, Math.ceil((resetsAt - now) / 1000))) },
    );
  }
}

/** Is any sending limit set? */
export function hasLimits(limits: EmailLimits): boolean {
  return limits.emails_per_hour > 0 || limits.emails_per_day > 0;
}

/**
 * In the unit of work accepting `n` emails of `team`: count them, or throw QuotaExceeded (nothing
 * counted) when they do not all fit in this hour's or this day's limit.
 */
export async function takeQuota(tx: Tx, team: string, n: number, limits: EmailLimits, now = Date.now()): Promise<void> {
  if (n === 0 || !hasLimits(limits)) return;
  const used = await tx.sendCounts.used(team, now);
  const day = limits.emails_per_day;
  if (day > 0 && used.day + n > day) throw new QuotaExceeded('daily', day, day - used.day, n, Math.floor(now / DAY) * DAY + DAY, now);
  const hour = limits.emails_per_hour;
  if (hour > 0 && used.hour + n > hour) throw new QuotaExceeded('hourly', hour, hour - used.hour, n, Math.floor(now / HOUR) * HOUR + HOUR, now);
  tx.sendCounts.add(team, now, n);
}
