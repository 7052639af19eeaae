// Record shapes of the core collections. Every record carries its team (docs/ARCHITECTURE.md).
import type { BounceClass } from '../mail/bounce-class-names';
import type { Rec } from './interface';
import type { BroadcastReview } from './insight-records';

export interface TeamRec extends Rec {
  name: string;
  /** Every member must sign in with a second factor (TOTP) before using the dashboard (docs/api.md §19.4). */
  require_totp?: boolean;
  /** Members sign in with OpenID Connect only, when it is configured (docs/api.md §19.4). */
  require_oidc?: boolean;
}

/** A user's role in their team, least first: a viewer reads, a member works, an admin administers, an owner owns (docs/api.md §19.4). */
export type Role = 'viewer' | 'member' | 'admin' | 'owner';

/**
 * A role as a user record stores it. `admin` is the owner's role in stores made before 0.2, so the
 * admin role is stored as `team_admin` (accounts/roles.ts `roleOf`, `storedRole`).
 */
export type StoredRole = 'owner' | 'admin' | 'team_admin' | 'member' | 'viewer';

export interface UserRec extends Rec {
  email: string;
  password_hash: string;
  role: StoredRole;
  /** TOTP (RFC 6238): the base32 key; `enabled_at` null while the enrolment awaits its first code. */
  totp?: { secret: string; enabled_at: string | null; last_step?: number } | null;
  /** SHA-256 of each unused recovery code. */
  recovery_codes?: string[];
  password_changed_at?: string;
}

/** A signed-in browser (docs/api.md §19). Only the token's hash is stored. */
export interface SessionRec extends Rec {
  user_id: string;
  token_hash: string;
  /** Absolute end (ms since epoch); the record is swept then. */
  expires_at: number;
  last_seen_at: string;
  user_agent: string | null;
  ip: string | null;
  /** How the user signed in. */
  method: 'password' | 'oidc' | 'invite';
}

/** An invitation to join a team, valid 7 days; only the token's hash is stored. */
export interface InviteRec extends Rec {
  email: string;
  role: Role;
  token_hash: string;
  expires_at: number;
  invited_by: string;
}

/**
 * A single-use link mailed to a user (accounts/account-mail.ts): a password reset, or the
 * confirmation of a new email address (`email`). Only the token's hash is stored.
 */
export interface AccountTokenRec extends Rec {
  user_id: string;
  kind: 'password_reset' | 'email_change';
  token_hash: string;
  expires_at: number;
  /** The new address an email change confirms. */
  email?: string;
}

export type Permission = 'full_access' | 'sending_access';

export interface ApiKeyRec extends Rec {
  name: string;
  permission: Permission;
  /**
   * The most the key may do (docs/api.md §10): its maker's role when it was made, or less if asked.
   * Keys made before roles held have none and count as the owner's.
   */
  role?: Role;
  /** Who made it: a user, another key, or the command line (`init`, `keys create`). */
  made_by?: { user_id: string | null; key_id: string | null };
  domain_id: string | null;
  token_hash: string; // sha256 of the token; the token itself is never stored
  last_used_at: string | null;
}

export type RecordStatus = 'not_started' | 'pending' | 'verified' | 'failed' | 'temporary_failure';
export type DomainStatus = 'not_started' | 'pending' | 'verified' | 'partially_verified' | 'partially_failed' | 'failed' | 'temporary_failure';

export interface DomainRec extends Rec {
  name: string;
  /** Resend's region names or the operator's (`cluster.regions`): in cluster mode only nodes of this region claim its mail. */
  region: string;
  /** The pool of sending IPs its mail leaves from (`delivery.ips`); absent: `default`. */
  pool?: string;
  custom_return_path: string;
  open_tracking: boolean;
  click_tracking: boolean;
  tracking_subdomain: string | null;
  tls: 'opportunistic' | 'enforced';
  capabilities: { sending: 'enabled' | 'disabled'; receiving: 'enabled' | 'disabled' };
  status: DomainStatus;
  /** The RSA key messages are signed with (RFC 6376). */
  dkim: DkimKey;
  /** A second signature with an Ed25519 key (RFC 8463), made while its record is verified; absent: RSA only. */
  dkim_ed25519?: DkimKey | null;
  /** A key rotation under way (docs/mail.md §2.1): the next keys, published as pending records until they verify. */
  dkim_next?: DkimRotation | null;
  /** The selectors the last rotation retired: kept published until `remove_after`, then safe to remove. */
  dkim_previous?: DkimRetired | null;
  /** Status per record id (e.g. "SPF:MX", "DKIM:TXT"), see domains/records.ts. */
  record_status: Record<string, RecordStatus>;
  verification: {
    requested_at: string | null; // first verify request of the current attempt (72 h window)
    checked_at: string | null;
    verified_at: string | null;
    degraded_at: string | null; // when a verified domain lost a record (temporary_failure)
  };
}

/** A DKIM key: its selector, the private key (PKCS#8 PEM) and the public key as published (`p=`, base64). */
export interface DkimKey {
  selector: string;
  private_key: string;
  public_key: string;
}

export interface DkimRotation {
  rsa: DkimKey;
  /** The Ed25519 key signing beside the RSA one after the switch; null: RSA only from then on. */
  ed25519: DkimKey | null;
  started_at: string;
}

export interface DkimRetired {
  /** The records that were published for them, to show while they must stay. */
  records: { selector: string; value: string }[];
  retired_at: string;
  remove_after: string;
}

export interface SegmentRec extends Rec {
  name: string;
}

/** A contact's value of a property; `property_id`: the definition it was written under (docs/api.md §12.7). */
export type PropertyValue = { value: string | number; type: 'string' | 'number'; property_id?: string };

export interface ContactRec extends Rec {
  email: string;
  first_name: string | null;
  last_name: string | null;
  unsubscribed: boolean;
  properties: Record<string, PropertyValue>;
  updated_at: string;
}

/** draft → (scheduled) → queued → sent; `canceled`: stopped while it was being sent (docs/api.md §13.3). */
export type BroadcastStatus = 'draft' | 'scheduled' | 'queued' | 'sent' | 'canceled';

export interface BroadcastRec extends Rec {
  name: string | null;
  segment_id: string;
  from: string;
  subject: string;
  reply_to: string[] | null;
  preview_text: string | null;
  html: string | null;
  text: string | null;
  topic_id: string | null;
  status: BroadcastStatus;
  scheduled_at: string | null;
  sent_at: string | null;
  /** The last review of its content before sending (docs/api.md §13.6); absent until one is made. */
  review?: BroadcastReview | null;
}

export type SuppressionOrigin = 'bounce' | 'complaint' | 'manual';

export interface SuppressionRec extends Rec {
  email: string;
  origin: SuppressionOrigin;
  source_id: string | null;
  /**
   * A bounce's class and the reply that caused it (README.md, "Bounce classes and incidents"), and
   * the shaping site that said it (a delivery's; null for a DSN); null otherwise, absent on older entries.
   */
  class?: BounceClass | null;
  reply?: string | null;
  site?: string | null;
}

/**
 * An address whose mailbox was full at a permanent bounce lately: when (ms, newest last). The third
 * within 30 days suppresses it (suppressions/index.ts); kept until 30 days after the last.
 */
export interface FullMailboxRec extends Rec {
  email: string;
  at: number[];
  expires_at: number;
}

export interface LogRec extends Rec {
  api_key_id: string;
  endpoint: string;
  method: string;
  response_status: number;
  user_agent: string | null;
  /** The client's address (README "Security": proxies); absent on entries written before it was kept. */
  ip?: string | null;
  duration_ms: number;
  /** Bodies as JSON text (redacted), or null: a string costs far less to store than its object. */
  request_json: string | null;
  response_json: string | null;
}

/**
 * An administrative action in a team's audit log (docs/api.md §19.11): written once, never changed,
 * kept for the retention period like the request log.
 */
export interface AuditRec extends Rec {
  /** What was done: accounts/audit.ts `AUDIT_ACTIONS`. */
  action: string;
  /** Who did it: a user (their email as `label`), an API key (its name), or the command line. */
  actor: { type: 'user' | 'key' | 'cli'; id: string | null; label: string | null };
  /** Through the dashboard (a session), the API (a key) or the command line. */
  via: 'dashboard' | 'api' | 'cli';
  /** The client's address, as the server determines it (api/platform/context.ts `clientIp`). */
  ip: string | null;
  /** What it was done to. */
  target: { type: string; id: string | null } | null;
  /** The request's fields (never a secret), or why a sign-in failed. */
  details: Record<string, unknown> | null;
}
