// When to try again: the wait after attempt n is `delivery.retry_schedule[n-1]`, the last wait
// repeating; a temporary failure once `delivery.retry_window` has passed since the first attempt
// ends the retries with a Transient bounce (SPEC.md §3, api-reference §7.8).

/** Wait (ms) after attempt number `attempt` (1-based). */
export function retryWait(schedule: number[], attempt: number): number {
  return schedule[Math.min(Math.max(attempt, 1) - 1, schedule.length - 1)];
}

/** Has the retry window of an entry first attempted at `firstAttemptAt` ended at `now`? */
export function windowOver(firstAttemptAt: string | null, windowMs: number, now: number): boolean {
  if (!firstAttemptAt) return false;
  return now - Date.parse(firstAttemptAt) >= windowMs;
}

/**
 * When to try again after a temporary failure at `now`: the schedule's wait counted from the
 * failure (not from the claim: an attempt can take longer than the wait), and never past the end
 * of the retry window, so the last try happens as the window closes and its failure is final.
 */
export function nextAttemptAt(schedule: number[], attempt: number, firstAttemptAt: string | null, windowMs: number, now: number): number {
  const next = now + retryWait(schedule, attempt);
  return firstAttemptAt ? Math.min(next, Date.parse(firstAttemptAt) + windowMs) : next;
}
