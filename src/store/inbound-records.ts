// Received (inbound) mail (docs/api.md §8): one record per stored message and team, kept for the
// retention period, with the message itself (raw bytes, parsed bodies, headers, attachment
// payloads) apart from the record, as for sent mail, so listing never reads the bodies.
import type { Rec } from './interface';
import type { AttachmentMeta } from './email-records';
import type { SpamVerdict } from './insight-records';

/** One result of SPF, DKIM or DMARC as the receiving API reports it (docs/api.md §8). */
export type AuthVerdict = 'pass' | 'fail' | 'gray' | 'processing_failed' | 'unknown';

export interface ReceivedEmailRec extends Rec {
  /** Bare address of the `From:` header ('' when there is none). */
  from: string;
  to: string[];
  cc: string[];
  bcc: string[];
  reply_to: string[];
  subject: string;
  /** `Message-ID:` as written, angle brackets included; null when absent. */
  message_id: string | null;
  /** The envelope recipients (RCPT TO) of this team that the message was accepted for. */
  received_for: string[];
  attachments: AttachmentMeta[];
  authentication: { spf: AuthVerdict; dkim: AuthVerdict; dmarc: AuthVerdict } | null;
  /** rspamd's verdict when `spam.rspamd_url` is set (README "Deliverability"); absent: not scored. */
  spam?: SpamVerdict | null;
  /** The SMTP transaction it arrived in. */
  envelope: { mail_from: string; remote_address: string; helo: string; tls: boolean };
  /** Bytes of the stored message (trace headers included). */
  size: number;
}

/** The stored message, [team, id] → ReceivedContent. */
export interface ReceivedContent {
  /** The message as stored: Posthorn's Return-Path and Received lines, then the bytes received. */
  raw: Uint8Array;
  /** html with `cid:` references as received; null when there is no html part. */
  html: string | null;
  text: string | null;
  /** Header fields, names lowercased, repeated ones joined with ", " (docs/api.md §8). */
  headers: Record<string, string>;
  /** Attachment payloads by attachment id. */
  files: Record<string, Uint8Array>;
}

/**
 * A message an unauthenticated session delivered (docs/mail.md §4): answered 250 once this record
 * and the bytes were committed, then taken by the inbound processor, which stores it for each team
 * (ReceivedEmailRec) or applies it as a report. Keyed by its own id; it belongs to no team yet.
 */
export interface SpooledMessage {
  /** UUIDv7. */
  id: string;
  /** When the 250 was sent: the date of the Received line, `created_at` of what it becomes. */
  received_at: string;
  /** The SMTP transaction, as ReceivedEmailRec keeps it. */
  envelope: ReceivedEmailRec['envelope'];
  /** The session's id, the `id` of the Received line. */
  session_id: string;
  /** Recipients at receiving domains, per team; counted under the domain of the first (metrics). */
  inbound: { team_id: string; domain_id: string; recipients: string[] }[];
  /** Recipients at return-path hosts (docs/mail.md §1): the message is read as a report. */
  reports: string[];
  /** Bytes received (without the trace fields). */
  size: number;
  /** Processing attempts started (each counted at its claim). */
  attempts: number;
  /** Claimed and not finished: a process that died mid-attempt left it so. */
  attempting: boolean;
  /** Why the last attempt failed; kept on a message given up on. */
  error: string | null;
}

/**
 * A DMARC aggregate report received at a domain's `rua` address (RFC 7489 §7.2; docs/deliverability.md
 * §4), as the inbound processor read it: one per reporting organisation and report id (`report`
 * index, unique per team: a report mailed twice is kept once), listed per domain (`domain`). Its rows
 * are the report's, merged by source address, disposition and alignment.
 */
export interface DmarcReportRec extends Rec {
  domain_id: string;
  /** The reporting organisation (`org_name`) and its contact address. */
  org_name: string;
  org_email: string;
  report_id: string;
  /** The reporting period (ISO 8601), and the UTC day its middle falls on (`YYYY-MM-DD`). */
  begin: string;
  end: string;
  day: string;
  /** The policy the receiver found (`policy_published`). */
  policy: { domain: string; adkim: string; aspf: string; p: string; sp: string; pct: number };
  rows: { source_ip: string; count: number; disposition: 'none' | 'quarantine' | 'reject'; dkim: 'pass' | 'fail'; spf: 'pass' | 'fail' }[];
}

/**
 * A TLS-RPT report Posthorn sent (RFC 8460 §4; docs/deliverability.md §5): one per UTC day and policy
 * domain install-wide (`report` index, `<day> <policy domain>`, unique across teams) — the durable
 * marker that the day's report went out once. Kept in the team whose address sent it.
 */
export interface TlsReportSentRec extends Rec {
  day: string;
  policy_domain: string;
  report_id: string;
  /** Each `rua` URI and what became of it: the email's id, the HTTP status, or why not. */
  deliveries: { rua: string; outcome: string }[];
}
