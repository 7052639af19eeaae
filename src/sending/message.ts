// The message of an accepted email, composed when it is needed — for each delivery attempt and for
// GET /emails/{id}/raw — rather than when it is accepted: accepting then writes the parts once and
// builds no MIME (docs/ARCHITECTURE.md, the walk of one email). Everything that makes the message
// was fixed at accept: Message-ID and Date (the record's `message_id` and `created_at`), the
// addresses, bodies, headers, attachments and whether it is tracked; MIME boundaries derive from the
// Message-ID (mime.ts), so composing twice gives the same bytes.
import type { Config } from '../config';
import type { Contents, DomainRec, EmailContent, EmailRec } from '../store';
import type { MessageParts } from '../store';
import type { Readable } from 'node:stream';
import { composeMime, composeMimeStream, wholeAttachment, type Composable, type ComposedAttachment, type ComposeOptions } from './mime';
import { withTracking, type TrackingContext } from './tracking';

/** What composing a message needs beside the email: tracking links' base and secret, the Feedback-ID's sender id. */
export interface MessageContext extends TrackingContext {
  config: Pick<Config, 'public_url'> & { delivery: Pick<Config['delivery'], 'feedback_id'> };
}

/** Attachment files left in their files by `openContent`: each read as a stream, anew at each composition. */
export type OpenFiles = Record<string, () => Readable>;

/**
 * A stored file is read for composing in pieces of this many bytes: a whole number of base64 lines
 * (76 characters are 57 bytes, RFC 2045 §6.8), so nodemailer's encoder carries nothing from one
 * piece to the next, and each piece's base64 is a small string, not one of the whole file.
 */
export const FILE_PIECE = 57 * 1152;

/**
 * The content of `email` to compose as a stream (composeEmailStream): its large attachments left
 * in their files, read as they are composed (a 5 MB file is otherwise read whole, and its base64
 * made as one 7 MB string and two buffers, at each composition). A message/* part is read whole
 * (mime.ts wholeAttachment). Undefined when it is no longer stored.
 */
export async function openContent(contents: Contents<EmailContent>, email: EmailRec): Promise<{ content: EmailContent; open: OpenFiles } | undefined> {
  const streamed = email.attachments.filter((a) => !wholeAttachment(a.content_type)).map((a) => a.id);
  return contents.getOpening(email.team_id, email.id, streamed, FILE_PIECE);
}

/**
 * The unsigned RFC 5322 message of `email`. `domain` is its sending domain now (the tracking
 * subdomain, when verified, is the base of tracking links); null when it was deleted meanwhile.
 * `open`: the attachments `content.files` lacks (openContent).
 */
export async function composeEmail(
  ctx: MessageContext,
  email: EmailRec,
  content: EmailContent,
  domain: DomainRec | null,
  open: OpenFiles = {},
): Promise<Uint8Array> {
  const made = composition(ctx, email, content, domain, open);
  return made instanceof Uint8Array ? made : composeMime(made.composable, made.options);
}

/**
 * The same message as a stream, composed afresh for each call of the function returned (a large
 * message is read twice by its delivery attempt — to sign, then to send — and never held whole);
 * null for a message submitted whole (SMTP), which is in memory already. The stream has
 * composeEmail's bytes unless it holds a lone CR or LF (mime.ts composeMimeStream): its reader checks.
 */
export function composeEmailStream(
  ctx: MessageContext,
  email: EmailRec,
  content: EmailContent,
  domain: DomainRec | null,
  open: OpenFiles = {},
): (() => Readable) | null {
  const made = composition(ctx, email, content, domain, open);
  if (made instanceof Uint8Array) return null;
  return () => composeMimeStream(made.composable, made.options);
}

/** What composing the message takes, or the message itself when it was submitted whole. */
function composition(
  ctx: MessageContext,
  email: EmailRec,
  content: EmailContent,
  domain: DomainRec | null,
  open: OpenFiles,
): Uint8Array | { composable: Composable; options: ComposeOptions } {
  const feedback = feedbackId(email, ctx.config.delivery.feedback_id);
  if (content.raw) return feedback ? withFeedbackId(content.raw, feedback) : content.raw;
  const parts = content.message;
  if (!parts) throw new Error(`email ${email.id} has neither a message nor its parts`);
  const html = sentHtml(ctx, email, content, parts, domain);
  const attachments: ComposedAttachment[] = email.attachments.map((a) => ({
    filename: a.filename,
    content: content.files[a.id] ?? open[a.id] ?? new Uint8Array(0),
    content_type: a.content_type,
    content_id: a.content_id,
  }));
  const composable = validatedOf(email, content, parts);
  if (feedback && !hasHeader(Object.keys(email.headers), 'feedback-id')) composable.headers = { ...email.headers, 'Feedback-ID': feedback };
  return {
    composable,
    options: {
      messageId: email.message_id,
      date: new Date(email.created_at),
      attachments,
      html: html ?? undefined,
    },
  };
}

/** The html part as it is sent: tracking added when the email is tracked (and its domain still exists). */
export function sentHtml(ctx: TrackingContext, email: EmailRec, content: EmailContent, parts: MessageParts, domain: DomainRec | null): string | null {
  if (content.html === null || !domain) return content.html;
  const envelope = Object.keys(email.recipients);
  return withTracking(
    ctx,
    domain,
    content.html,
    { team: email.team_id, email: email.id, recipient: envelope.length === 1 ? envelope[0]! : null },
    parts.tracking,
  );
}

/** What composeMime reads of a validated email, from the stored record and parts. */
function validatedOf(email: EmailRec, content: EmailContent, parts: MessageParts): Composable {
  return {
    from: parts.from,
    to: parts.to,
    cc: parts.cc,
    reply_to: parts.reply_to,
    subject: email.subject,
    html: content.html,
    text: content.text,
    headers: email.headers,
  };
}

/**
 * The Feedback-ID of `email` (Gmail's feedback loop: `a:b:c:SenderId`, a–c optional identifiers
 * Postmaster Tools reports spam rates by) — campaign (the broadcast, else the email's `campaign`
 * tag), team, sending domain and `senderId` (`delivery.feedback_id`); null when that is unset.
 * Colons cannot occur in any field: ids are UUIDs, tag values [A-Za-z0-9_-] (docs/api.md §7.1).
 */
export function feedbackId(email: EmailRec, senderId: string | null): string | null {
  if (!senderId) return null;
  const campaign = email.broadcast_id ?? email.tags.find((t) => t.name === 'campaign')?.value ?? '';
  return [campaign, email.team_id, email.domain, senderId].map((f) => f.replaceAll(':', '')).join(':');
}

const hasHeader = (names: string[], lower: string) => names.some((n) => n.toLowerCase() === lower);

/** A message submitted whole (SMTP) with the Feedback-ID field first, unless its header has one. */
function withFeedbackId(raw: Uint8Array, value: string): Uint8Array {
  const text = new TextDecoder('latin1').decode(raw.subarray(0, 256 * 1024));
  const end = text.search(/\r?\n\r?\n/);
  if (/^feedback-id[ \t]*:/im.test(end < 0 ? text : text.slice(0, end))) return raw;
  const field = new TextEncoder().encode(`Feedback-ID: ${value}\r\n`);
  const out = new Uint8Array(field.length + raw.length);
  out.set(field);
  out.set(raw, field.length);
  return out;
}
