// Record shapes of operating delivery: destinations a team holds, the shaping state of destination
// sites (docs/mail.md §3.1), MTA-STS policies and TLS-RPT counts (docs/mail.md §3.2), and the
// per-team sending counters (docs/api.md §6.1).
import type { TlsResultType } from '../mail/mta-sts';

/** A destination domain one team has put on hold (docs/api.md §19.7): none of its mail there is tried. */
export interface QueueHold {
  team_id: string;
  destination: string;
  held_at: string;
}

/**
 * The shaping state of a destination site, kept while it has any: throttling replies (421,
 * rate-limit codes) suspend a site until `suspended_until` (ms) and count `strikes`, which slow it
 * once it resumes and fade away while it stays quiet (docs/mail.md §3.1).
 */
export interface SiteState {
  site: string;
  /** ms; null when the site is not suspended. */
  suspended_until: number | null;
  /** Throttling replies in a row not yet faded; each halves the site's connections and rates. */
  strikes: number;
  /** ms of the last throttling reply. */
  throttled_at: number;
  /** That reply. */
  reply: string;
}

/** An MTA-STS policy (RFC 8461 §3.2) as fetched for a policy domain, cached until `expires_at`. */
export interface MtaStsPolicy {
  domain: string;
  /** The `id` of the `_mta-sts` TXT record the policy was fetched under (RFC 8461 §3.1). */
  id: string;
  mode: 'enforce' | 'testing' | 'none';
  /** MX host patterns (`mail.example.com`, `*.example.net`). */
  mx: string[];
  /** Seconds (RFC 8461 §3.2: at most 31557600). */
  max_age: number;
  /** The policy text as served (TLS-RPT reports carry it, RFC 8460 §4.4). */
  text: string;
  fetched_at: number;
  expires_at: number;
}

export type { TlsResultType };

/** One failure kind within a day's TLS-RPT counts of a policy domain (RFC 8460 §4.4 failure-details). */
export interface TlsFailure {
  result_type: TlsResultType;
  receiving_mx_hostname: string | null;
  receiving_ip: string | null;
  failure_reason_code: string | null;
  count: number;
}

/** The policy a day's sessions were made under (RFC 8460 §4.4 `policy`): the latest one seen that day. */
export interface TlsReportPolicy {
  type: 'sts' | 'no-policy-found';
  /** The policy text, one line per item. */
  string: string[];
  mx_host: string[];
}

/** A team's TLS sessions on one UTC day (`YYYY-MM-DD`) to one MTA-STS policy domain (RFC 8460 §4.4). */
export interface TlsReportDay {
  team_id: string;
  day: string;
  domain: string;
  policy: TlsReportPolicy;
  success: number;
  failure: number;
  /** At most MAX_TLS_FAILURE_KINDS distinct kinds; sessions past that count in `failure` only. */
  failures: TlsFailure[];
}

/** Distinct failure kinds kept per day and policy domain (a bound, whatever the destination does). */
export const MAX_TLS_FAILURE_KINDS = 50;
