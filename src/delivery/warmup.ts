// Warm-up schedules (README.md, "Sending IPs and warm-up"): how much one sending IP may send to one
// site today, as Resend publishes its ramp — a new address 150 a day then ×1.4 each day, an
// established one 1,000 then ×1.5 (`delivery.warmup`). Each day also caps any clock hour at an
// eighth of the day, so a day's allowance is spread over at least eight hours. A troubled day at a
// site (deferrals, bounces over 4 % or complaints over 0.08 % of its sends) holds that site's ramp
// and slows it: the next day does not grow, and its hourly cap is a sixteenth of the day instead of
// an eighth. Pure functions of the clock, so tests move it (test/delivery/ips.test.ts).

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/** Bounces over this share of a day's sends at a site hold its ramp (Resend's published threshold). */
export const BOUNCE_HOLD = 0.04;
/** Complaints over this share hold it too (Resend's threshold; complaints matched back to their IP, feedback/sending-ips.ts). */
export const COMPLAINT_HOLD = 0.0008;
/** The hours a day's allowance is spread over at least: its hourly cap is the day's share of them. */
export const SPREAD_HOURS = 8;
/** …and on the day after a troubled one, twice as many: the ramp slows as well as holds. */
export const SLOWED_SPREAD_HOURS = 16;

/** The ramps of `delivery.warmup`. */
export interface WarmupRamps {
  new_daily: number;
  new_growth: number;
  established_daily: number;
  established_growth: number;
}

/** A ramp: the first day's allowance and the daily growth. */
export interface Ramp {
  daily: number;
  growth: number;
}

export interface Allowance {
  daily: number;
  hourly: number;
  /** Days of the ramp counted so far (after the held ones). */
  day: number;
}

/** Days and clock hours since the epoch, UTC. */
export const dayOf = (ms: number) => Math.floor(ms / DAY_MS);
export const hourOf = (ms: number) => Math.floor(ms / HOUR_MS);

/** The ramp of a schedule name from `delivery.warmup`. */
export function rampOf(ramps: WarmupRamps, name: 'new' | 'established'): Ramp {
  return name === 'new' ? { daily: ramps.new_daily, growth: ramps.new_growth } : { daily: ramps.established_daily, growth: ramps.established_growth };
}

/**
 * Today's allowance on a ramp started at `startedAt`, with `held` days that did not grow; `slowed`:
 * today follows a troubled day, so its hourly cap is tightened.
 */
export function allowance(ramp: Ramp, startedAt: number, now: number, held = 0, slowed = false): Allowance {
  const day = Math.max(0, dayOf(now) - dayOf(startedAt) - held);
  // Past about 60 days any ramp is beyond what one address sends: stop the power from overflowing.
  const daily = Math.floor(ramp.daily * ramp.growth ** Math.min(day, 60) + 1e-9); // 150 × 1.4² is 293.99… in floating point
  return { daily, hourly: Math.max(1, Math.ceil(daily / (slowed ? SLOWED_SPREAD_HOURS : SPREAD_HOURS))), day };
}

/** Was a finished day at a site troubled enough to hold its ramp? */
export function rolled(c: { sent: number; deferred: number; bounced: number; complained?: number }): boolean {
  if (c.deferred > 0) return true;
  if (c.sent <= 0) return false;
  return c.bounced / c.sent > BOUNCE_HOLD || (c.complained ?? 0) / c.sent > COMPLAINT_HOLD;
}
