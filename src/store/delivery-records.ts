// Record shapes of operating delivery: destinations a team holds, the shaping state of destination
// sites (docs/mail.md §3.1), MTA-STS policies and TLS-RPT counts (docs/mail.md §3.2), the
// per-team sending counters (docs/api.md §6.1), and deliverability incidents (docs/api.md §19.9).
import type { BounceClass } from '../mail/bounce-class-names';
import type { TlsResultType } from '../mail/mta-sts';
import type { Rec } from './interface';

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

/**
 * A deliverability incident (docs/api.md §19.9): replies of one site that speak of the sender
 * (bounce class `reputation` or `authentication`), counted on one record while they keep coming —
 * a reply more than INCIDENT_QUIET_MS after the last opens a new one. `latest` marks a team's
 * newest incident of a site and class (the unique index that finds it).
 */
export interface IncidentRec extends Rec {
  class: BounceClass;
  site: string;
  latest: boolean;
  last_seen_at: string;
  /** Replies counted on it. */
  count: number;
  /** The first reply as the remote host said it, and the last. */
  reply: string;
  last_reply: string;
  code: number;
  enhanced_code: string | null;
  /** The remote MX host and address that said it (null: a greeting refused before the host was known). */
  remote_host: string | null;
  remote_ip: string | null;
  /** The local address Posthorn sent from. */
  sending_ip: string | null;
  /** The sending domain of the email that drew the first reply, and that email. */
  domain: string;
  email_id: string;
  /** The delisting or remediation links the replies name. */
  links: string[];
  /** When the suspension of the site it caused ends (ISO), null when shaping is off. */
  suspended_until: string | null;
  /**
   * `listing`: opened by the doctor's blocklist checks (delivery/listings.ts), not by a reply — then
   * `listing` says which zone listed what, `email_id` is empty and `code` 0. Absent: a reply's.
   */
  kind?: 'reply' | 'listing';
  listing?: IncidentListing;
  /** When a listing incident closed (the zone answered clean); replies' incidents close by time. */
  closed_at?: string | null;
}

/** What a listing incident is about (docs/deliverability.md §3). */
export interface IncidentListing {
  zone: string;
  target: string;
  target_type: 'ip' | 'domain';
  codes: string[];
  /** The codes decoded from the zone table (dns/blocklist-zones.ts). */
  meaning: string;
  /** The zone's TXT answer, when it gave one. */
  reason: string | null;
  delisting_url: string | null;
}

/**
 * One zone's standing verdict on one sending address or domain (docs/deliverability.md §3.1),
 * install-wide (team LISTINGS_TEAM), one record per zone and target (`key`). `status` is the last
 * answer; `listed_since` is set from the first `listed` answer until a `clean` one (an `unknown`
 * answer changes neither): what `isListed` and the incidents go by.
 */
/** The team key the install-wide listing records are kept under (no team's id: those are UUIDs). */
export const LISTINGS_TEAM = 'install';

export interface ListingRec extends Rec {
  zone: string;
  target: string;
  target_type: 'ip' | 'domain';
  status: 'listed' | 'clean' | 'unknown';
  codes: string[];
  meaning: string | null;
  reason: string | null;
  /** Why the last answer was unknown. */
  why: string | null;
  delisting_url: string | null;
  listed_since: string | null;
  checked_at: string;
  /** The incidents this listing opened (one per team concerned), closed when it ends. */
  incidents: { team_id: string; id: string }[];
}

/** The team of install-wide records (the `sendingIps` collection): not a team's. */
export const INSTALL_TEAM = '-';

/**
 * A sending IP of `delivery.ips` (README.md, "Sending IPs and warm-up"), keyed by its address under
 * the install (team `-`): its warm-up schedule, why it is out of rotation, and what it sent today
 * per site (written by the delivery engine of the node it belongs to, delivery/ips.ts).
 */
export interface SendingIpRec extends Rec {
  /** As configured on the node it belongs to (`delivery.ips`). */
  pool: string;
  ehlo: string;
  warmup: {
    /** `off`: no allowance; `warming`: the ramp limits it; `paused`: it holds and sends nothing; `complete`: no allowance any more. */
    state: 'off' | 'warming' | 'paused' | 'complete';
    ramp: 'new' | 'established' | null;
    /** When its ramp started (ISO): day 0 of the schedule (moved on by the days it was paused). */
    started_at: string | null;
    /** When it was paused (ISO): its allowance stays that day's. */
    paused_at?: string | null;
    /** Days each site's ramp held (did not grow) after a troubled day, by site. */
    held: Record<string, number>;
    /** The day (UTC, since the epoch) each site's hourly cap is tightened: the day after a troubled one (delivery/warmup.ts). */
    slowed?: Record<string, number>;
  };
  /** The last failed bind, and until when the address stays out of rotation (ISO). */
  out_of_rotation: { at: string; until: string; reason: string } | null;
  /** Today's (UTC) sending per site: day since the epoch, sends, this hour's, deferrals, bounces. */
  sites: Record<string, { day: number; sent: number; hour: number; hourSent: number; deferred: number; bounced: number }>;
  /**
   * Complaints matched back to this address (the attempt that delivered the complaining recipient
   * was bound to it), by site and by the UTC day they arrived (days since the epoch; the last 7
   * kept). Written by whichever node took the report (feedback/sending-ips.ts), read by the engine
   * of the address's node when a day ends.
   */
  complaints?: Record<string, Record<string, number>>;
}
