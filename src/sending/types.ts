// What the sending core works with, between validation (validate.ts), attachment resolution
// (attachments.ts), MIME composition (mime.ts) and persistence (submit.ts).
import type { Address } from '../mail/address';

/** A request to send, as it arrives (a POST /emails body, one batch item, an SMTP submission). */
export type EmailInput = Record<string, unknown>;

export interface AttachmentInput {
  filename: string | null;
  /** Base64 payload as given (validated as base64), a Buffer's bytes (docs/api.md §2 item 16), or null when `path` is used. */
  content: string | Uint8Array | null;
  /** http(s) URL to fetch, or null when `content` is used. */
  path: string | null;
  content_type: string | null;
  content_id: string | null;
}

/** A send request that passed every check that needs no I/O. */
export interface ValidatedEmail {
  from: Address;
  /** `from` as it will appear in the API and webhooks: `Name <addr>` or `addr`. */
  fromText: string;
  to: Address[];
  cc: Address[];
  bcc: Address[];
  reply_to: Address[];
  subject: string;
  html: string | null;
  /** null: derive from html (or none if there is no html); "" = explicitly no text part. */
  text: string | null;
  headers: Record<string, string>;
  tags: { name: string; value: string }[];
  /** ISO time to send at, or null to send now (a past time means now). */
  scheduled_at: string | null;
  attachments: AttachmentInput[];
  /** The topic the email is scoped to (lowercase id, existence checked by `prepare`), or null. */
  topic_id: string | null;
}

/** An attachment with its bytes, ready for MIME and for the attachments API. */
export interface ResolvedAttachment {
  filename: string | null;
  content: Uint8Array;
  content_type: string;
  content_id: string | null;
}
