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
