// Sharing an email (docs/api.md §7.10): POST /emails/{id}/share makes a signed link under
// `public_url` to a read-only page of a sent or received email, valid for `expires_in` (default and
// at most 48 hours). The link is the only authority: no key, no session. A tampered or expired
// link, or one whose email is gone (retention, another team's), shows nothing but a 404 page.
import { isSystemMail } from '../mail/system';
import ms from 'ms';
import type { ReceivedContent, StoreReader } from '../store';
import type { SignedLinks, ShareTarget } from '../links/signed';
import { errors } from '../errors';
import { inlineImages } from '../mail/cid';
import { sharedPage, type SharedEmail } from './page';

export { invalidSharePage } from './page';

export const MAX_SHARE_MS = 48 * 3_600_000;

/**
 * `expires_in`: a duration with a unit, as Resend takes it — `10m`, `2 hours`, `1 day`, `48h`
 * (parsed by `ms`); more than 0, at most 48 hours. Absent: 48 hours.
 */
export function parseExpiresIn(value: unknown): number {
  if (value === undefined || value === null) return MAX_SHARE_MS;
  const bad = () => errors.invalidField('expires_in', 'it must be a duration such as `10m`, `2 hours` or `1 day`, at most 48 hours.');
  // A bare number would be milliseconds to `ms`: too easy to misread, so a unit is required.
  if (typeof value !== 'string' || !/[a-z]/i.test(value)) throw bad();
  const span = ms(value.trim() as ms.StringValue);
  if (typeof span !== 'number' || !Number.isFinite(span) || span <= 0) throw bad();
  if (span > MAX_SHARE_MS) throw errors.invalidField('expires_in', 'a shared link lives at most 48 hours.');
  return span;
}

/** The share link of `team`'s email `id` (sent, else received); 404 when it has none of that id. */
export async function shareEmail(r: StoreReader, links: SignedLinks, team: string, id: string, expiresIn: number, now = Date.now()): Promise<string> {
  const sent = await r.emails.get(team, id);
  const received = !sent;
  if (received && !(await r.receivedEmails.get(team, id))) throw errors.notFound('Email');
  // A system email's link is its addressee's secret (mail/system.ts): it is not shared.
  if (sent && isSystemMail(sent)) throw errors.validation('Posthorn’s own mail to dashboard users cannot be shared.');
  return links.shareUrl({ team, email: id, received, expires: now + expiresIn });
}

/** The page a share link shows, or null when its email is gone. */
export async function sharedEmailPage(r: StoreReader, links: SignedLinks, t: ShareTarget, now = Date.now()): Promise<Response | null> {
  const rec = await (t.received ? r.receivedEmails.get(t.team, t.email) : r.emails.get(t.team, t.email));
  const content = rec && (await (t.received ? r.receivedContent.get(t.team, t.email) : r.emailContent.get(t.team, t.email)));
  if (!rec || !content || (!t.received && isSystemMail(rec as { tags: { name: string }[] }))) return null;
  // Attachments download through their own signed links, which end no later than the share.
  const kind = t.received ? ('received-attachment' as const) : ('sent-attachment' as const);
  const attachments = await Promise.all(
    rec.attachments.map(async (a) => ({
      filename: a.filename,
      content_type: a.content_type,
      size: a.size,
      ...(await links.download({ kind, team: t.team, email: t.email, attachment: a.id }, now, t.expires)),
    })),
  );
  const email: SharedEmail = {
    subject: rec.subject,
    // A received email's From header as written (its record keeps the bare address).
    from: (t.received && (content as ReceivedContent).headers.from) || rec.from,
    to: rec.to,
    cc: rec.cc,
    reply_to: rec.reply_to,
    date: rec.created_at,
    html: content.html === null ? null : inlineImages(content.html, rec.attachments, content.files),
    text: content.text || null,
    attachments,
  };
  return sharedPage(email, t.expires);
}
