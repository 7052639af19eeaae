// Retry schedules, shared by email delivery (`delivery.retry_schedule`, `delivery.retry_window`)
// and webhook dispatch (`webhooks.retry_schedule`): the wait after attempt n is `schedule[n-1]`,
// the last wait repeating, stretched by up to JITTER so that work which failed together (a
// destination down for an hour) does not come back all in the same second. A wait is never shorter
// than the schedule says.

/** Largest stretch of a wait: 10 % later at most. */
export const JITTER = 0.1;

/** A source of uniform numbers in [0, 1): Math.random, or a fixed one in tests. */
export type Random = () => number;

/** Wait (ms) after attempt number `attempt` (1-based), before jitter. */
export function retryWait(schedule: number[], attempt: number): number {
  return schedule[Math.min(Math.max(attempt, 1) - 1, schedule.length - 1)];
}

/** `wait` stretched by a random part of JITTER. */
export function jittered(wait: number, random: Random = Math.random): number {
  return Math.round(wait * (1 + JITTER * random()));
}

/** Has the retry window of work first attempted at `firstAttemptAt` ended at `now`? */
export function windowOver(firstAttemptAt: string | null, windowMs: number, now: number): boolean {
  if (!firstAttemptAt) return false;
  return now - Date.parse(firstAttemptAt) >= windowMs;
}

/**
 * When to try again after a temporary failure at `now`: the schedule's wait (jittered) counted
 * from the failure (not from the claim: an attempt can take longer than the wait), and never past
 * the end of the retry window, so the last try happens as the window closes and its failure is final.
 */
export function nextAttemptAt(
  schedule: number[],
  attempt: number,
  firstAttemptAt: string | null,
  windowMs: number,
  now: number,
  random: Random = Math.random,
): number {
  const next = now + jittered(retryWait(schedule, attempt), random);
  return firstAttemptAt ? Math.min(next, Date.parse(firstAttemptAt) + windowMs) : next;
}
