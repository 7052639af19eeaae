// When a certificate is renewed, and when a failed attempt is tried again (docs/mail.md §4, "Certificates by ACME").
// Renewal at two thirds of the life leaves a third (30 days of Let's Encrypt's 90) for failures
// to be noticed and fixed — Let's Encrypt's own advice, which certbot and Caddy follow.

const MINUTE = 60_000;
/** The first retry after a failure, doubling with each further one up to MAX_BACKOFF. */
export const FIRST_BACKOFF = 5 * MINUTE;
export const MAX_BACKOFF = 12 * 60 * MINUTE;

/** When a certificate valid from `notBefore` to `notAfter` (ms) is due for renewal. */
export function renewalDue(notBefore: number, notAfter: number): number {
  return notBefore + Math.floor(((notAfter - notBefore) * 2) / 3);
}

/** When to try again after the `failures`th failure in a row (1 = the first), from `now`. */
export function retryAfter(failures: number, now: number): number {
  const wait = Math.min(MAX_BACKOFF, FIRST_BACKOFF * 2 ** Math.max(0, failures - 1));
  return now + wait;
}
