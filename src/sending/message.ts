// The message of an accepted email, composed when it is needed — for each delivery attempt and for
// GET /emails/{id}/raw — rather than when it is accepted: accepting then writes the parts once and
// builds no MIME (docs/ARCHITECTURE.md, the walk of one email). Everything that makes the message
// was fixed at accept: Message-ID and Date (the record's `message_id` and `created_at`), the
// addresses, bodies, headers, attachments and whether it is tracked; MIME boundaries derive from the
// Message-ID (mime.ts), so composing twice gives the same bytes.
import type { DomainRec, EmailContent, EmailRec } from '../store';
import type { ResolvedAttachment } from './types';
import type { MessageParts } from '../store';
import { composeMime, type Composable } from './mime';
import { withTracking, type TrackingContext } from './tracking';

/**
 * The unsigned RFC 5322 message of `email`. `domain` is its sending domain now (the tracking
 * subdomain, when verified, is the base of tracking links); null when it was deleted meanwhile.
 */
export async function composeEmail(ctx: TrackingContext, email: EmailRec, content: EmailContent, domain: DomainRec | null): Promise<Uint8Array> {
  if (content.raw) return content.raw;
  const parts = content.message;
  if (!parts) throw new Error(`email ${email.id} has neither a message nor its parts`);
  const html = sentHtml(ctx, email, content, parts, domain);
  const attachments: ResolvedAttachment[] = email.attachments.map((a) => ({
    filename: a.filename,
    content: content.files[a.id] ?? new Uint8Array(0),
    content_type: a.content_type,
    content_id: a.content_id,
  }));
  return composeMime(validatedOf(email, content, parts), {
    messageId: email.message_id,
    date: new Date(email.created_at),
    attachments,
    html: html ?? undefined,
  });
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
