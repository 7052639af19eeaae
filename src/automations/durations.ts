// Durations of `delay` steps and `wait_for_event` timeouts (docs/api.md §24.3): human-readable
// text as Resend takes it — "30 minutes", "1 hour", "3 days", "1 week" — read by `ms` (the
// library Posthorn already uses for such text), at most 30 days.
import ms from 'ms';
import { errors } from '../errors';

/** The longest delay or wait (docs/api.md §24.3). */
export const MAX_WAIT_MS = 30 * 86_400_000;

/** A duration in ms, or the 422 naming `field`. A bare number (no unit) is refused: ms would read it as milliseconds. */
export function durationField(v: unknown, field: string): number {
  const bad = () => errors.invalidField(field, 'must be a duration such as `30 minutes`, `1 hour`, `3 days` or `1 week`.');
  if (typeof v !== 'string' || !/[a-z]/i.test(v) || v.length > 100) throw bad();
  const n = ms(v.trim() as ms.StringValue);
  if (typeof n !== 'number' || !Number.isFinite(n) || n <= 0) throw bad();
  if (n > MAX_WAIT_MS) throw errors.invalidField(field, 'must be at most 30 days.');
  return n;
}
