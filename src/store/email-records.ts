// Record shapes of sent mail: the email, its content, per-recipient delivery state, events,
// the delivery queue and the schedule (docs/api.md §7, §14).
import type { Rec } from './interface';
import type { Address } from '../mail/address';
import type { BounceClass } from '../mail/bounce-class-names';
import type { EmailStatus, EmittedWebhookKind, LoggedKind, RecipientState } from '../event-catalogue';

// Statuses, recipient states and event kinds are the catalogue's (src/event-catalogue.ts).
export type { EmailStatus, RecipientState };

export interface AttachmentMeta {
  id: string;
  filename: string | null;
  content_type: string;
  content_disposition: 'attachment' | 'inline';
  content_id: string | null;
  size: number; // decoded bytes
}

export interface EmailRec extends Rec {
  from: string; // as sent, display name included
  from_address: string; // bare address
  domain_id: string;
  domain: string;
  to: string[];
  cc: string[];
  bcc: string[];
  reply_to: string[];
  subject: string;
  headers: Record<string, string>; // custom headers as given
  tags: { name: string; value: string }[];
  scheduled_at: string | null;
  last_event: EmailStatus;
  message_id: string;
  broadcast_id: string | null;
  /** The contact a broadcast email went to (older records: absent). */
  contact_id?: string | null;
  /** The topic the email is scoped to (docs/api.md §7.1; older records: absent). */
  topic_id?: string | null;
  attachments: AttachmentMeta[];
  /** Delivery state per envelope recipient (bare lowercase address). */
  recipients: Record<string, RecipientState>;
  /** Set once `email.sent` has fired. */
  sent_at: string | null;
  /**
   * When the email was queued for delivery. Its `email.queued` event is derived from this, not
   * written to the event log (events/index.ts derivedEvents); older records have a row instead.
   */
  queued_at?: string;
  api_key_id: string | null;
  /** When the first recipient accepted it (older records: absent). */
  delivered_at?: string | null;
  /** Metrics this email has been counted in once already (docs/api.md §7.9). */
  counted?: string[];
  /**
   * The mailbox provider its metric counters go to (docs/api.md §7.9, "By mailbox provider"): the
   * site its first delivery attempt reached — until then the one its claim expected; absent before
   * its claim (and on older records).
   */
  site?: string;
  /**
   * The sending IP of `delivery.ips` its metric counters go to (docs/api.md §7.9, "By sending IP"):
   * the address its first attempt bound to one left from; absent when the kernel chose.
   */
  sending_ip?: string;
  /** Opens and clicks (tracking hits), absent until the first one. */
  engagement?: Engagement;
  /** Delivery attempts, oldest first (the last `MAX_ATTEMPTS` kept; older records: absent). */
  attempts?: DeliveryAttempt[];
  /** The template the email was made from (docs/api.md §20.4); absent without one. */
  template_id?: string;
}

/** The most delivery attempts kept on one email. */
export const MAX_ATTEMPTS = 50;

/** One SMTP transaction (or the failure to open one) for some recipients of an email. */
export interface DeliveryAttempt {
  at: string;
  /** Recipient domain of the queue entry. */
  domain: string;
  /** The MX (or relay) host that took the transaction; null when none could be reached. */
  host: string | null;
  /** The address of that host connected to (older records: absent). */
  ip?: string | null;
  tls: boolean | null;
  /** The session's TLS protocol version and cipher suite (`TLSv1.3`, `TLS_AES_256_GCM_SHA384`); null in plain text. */
  tls_version?: string | null;
  tls_cipher?: string | null;
  /** The destination's MTA-STS policy mode when one applied (docs/mail.md §3.2), else null. */
  mta_sts?: 'enforce' | 'testing' | null;
  duration_ms: number;
  /**
   * The remote (or local) reply per recipient, with its enhanced status code (RFC 3463) when it has
   * one, and the bounce class of a reply that is not a delivery (mail/bounce-class.ts; null for a
   * delivery; absent on older records).
   */
  results: { recipient: string; code: number; enhanced_code?: string | null; reply: string; class?: BounceClass | null }[];
  /** Present (true) when no connection was made: the replies of sandbox addresses (docs/api.md §7.11). */
  simulated?: true;
  /** The sending IP of `delivery.ips` the attempt was bound to; absent when the kernel chose. */
  sending_ip?: string;
  /** The shaping site the attempt went to (docs/mail.md §3.1), beside `sending_ip`: its warm-up counts there. */
  sending_site?: string;
}

/**
 * Tracking hits of one email: every hit, and apart from them the ones that looked automated
 * (privacy proxies, link scanners, prefetches), which metrics and broadcast analytics leave out.
 */
export interface Engagement {
  opens: number;
  clicks: number;
  automated_opens: number;
  automated_clicks: number;
  /** Human clicks per destination URL. */
  links: Record<string, number>;
  first_opened_at: string | null;
  first_clicked_at: string | null;
}

/**
 * Bodies kept apart from the email record so that status updates do not rewrite them. The message
 * itself is composed when it is needed — at each delivery attempt, for /raw — from these parts,
 * the record and `message` (sending/message.ts), so accepting an email writes no MIME.
 */
export interface EmailContent {
  html: string | null;
  /** As given: null = derive from html when composing; "" = no text part (docs/api.md §7.1). */
  text: string | null;
  /** The composed RFC 5322 message, unsigned: only emails accepted by Posthorn 0.1 have it. */
  raw?: Uint8Array;
  /** Attachment payloads by attachment id. */
  files: Record<string, Uint8Array>;
  /** What composing needs beyond the record (absent only beside `raw`). */
  message?: MessageParts;
}

/** The parts of a message the email record keeps only as display text, fixed when it is accepted. */
export interface MessageParts {
  from: Address;
  to: Address[];
  cc: Address[];
  reply_to: Address[];
  /** Open and click tracking, as the sending domain had them set when the email was accepted. */
  tracking: { open: boolean; click: boolean };
}

/** The kinds of webhook-visible events (docs/api.md §14.2). */
export type EventType = EmittedWebhookKind;

/**
 * One entry of an email's (or contact's) event log. Webhook-visible kinds carry the payload data of
 * docs/api.md §14.3; internal state changes (queued, scheduled, canceled, failed, suppressed)
 * are logged too, with `webhook: false`.
 */
export interface EventRec extends Rec {
  type: LoggedKind;
  webhook: boolean;
  /** The email (sent or received) or contact the event concerns. */
  subject_id: string;
  data: Record<string, unknown>;
  /** An open or click that looked automated: why (docs/mail.md §6). */
  automated?: string;
  /**
   * `data` holds only this event's own part (recipients, bounce, click): the rest of its webhook
   * payload is the email's, which never changes, and is derived from it when read
   * (events/index.ts eventData). Older rows: absent, `data` is the whole payload.
   */
  email_payload?: true;
}

/** One delivery task: the recipients of an email at one destination domain. */
export interface QueueEntry {
  id: string;
  team_id: string;
  email_id: string;
  /** Recipient domain (lowercase), the unit of MX resolution and connection reuse. */
  domain: string;
  recipients: string[];
  attempts: number;
  first_attempt_at: string | null;
  last_error: string | null;
  /** When the attempt now in flight began; unset once its outcome is recorded. */
  attempting?: string | null;
  /**
   * On hold (docs/api.md §19.7), kept out of the due range until released: by a hold of its email,
   * or of its destination by the team. Absent or null: not held.
   */
  held?: 'email' | 'destination' | null;
  /** The shaping site of the destination as the last attempt found it (docs/mail.md §3.1). */
  site?: string | null;
  /** The sending domain's region when regions are in effect: only nodes of this region claim it (README.md, "Regions"). */
  region?: string;
}

/**
 * A batch accepted as received (docs/ARCHITECTURE.md §4, "The incoming queue"): the emails the request
 * made, prepared and checked, in one record written by the accepting commit. The back office — or
 * a read of the team's emails that comes first — takes it and writes its emails in one unit of
 * work (sending/incoming.ts).
 */
export interface IncomingRec {
  /** Its first email's id (ids are UUIDv7: requests sort in the order they were accepted). */
  id: string;
  team_id: string;
  created_at: string;
  /** `delivery.sandbox` when it was accepted (docs/api.md §7.11). */
  sandbox: boolean;
  emails: { email: EmailRec; content: EmailContent; region?: string }[];
}
