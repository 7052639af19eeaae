// The payloads of `email.received` (docs/api.md §14.3): the metadata Resend sends, and — for
// webhooks that ask for it (`include_content`) — the message too: text, html and headers within
// bounds, what is cut named in `truncated`, and the attachments and the raw message as signed
// download links, valid an hour past the webhook's last scheduled attempt, so every retry of the
// event carries links that still work.
import type { ReceivedContent, ReceivedEmailRec } from '../store';
import { DOWNLOAD_TTL_MS, type SignedLinks } from '../links/signed';

/** `data` of email.received (docs/api.md §14.3): metadata only, no body, no headers. */
export function receivedPayload(r: ReceivedEmailRec): Record<string, unknown> {
  return {
    email_id: r.id,
    created_at: r.created_at,
    from: r.from,
    to: r.to,
    bcc: r.bcc,
    cc: r.cc,
    received_for: r.received_for,
    message_id: r.message_id,
    subject: r.subject,
    attachments: r.attachments.map(({ id, filename, content_type, content_disposition, content_id }) => ({
      id,
      filename,
      content_type,
      content_disposition,
      content_id,
    })),
  };
}

/** The most of each part a payload carries, in UTF-8 bytes (docs/api.md §14.3). */
export const CONTENT_LIMITS = { text: 256 * 1024, html: 256 * 1024, headers: 64 * 1024 } as const;

/** `text` cut to at most `max` UTF-8 bytes, on a character boundary. */
export function cutUtf8(text: string, max: number): { text: string; cut: boolean } {
  const bytes = Buffer.from(text);
  if (bytes.byteLength <= max) return { text, cut: false };
  let end = max;
  // Back to the first byte of the character the cut falls in (continuation bytes are 10xxxxxx).
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return { text: bytes.subarray(0, end).toString('utf8'), cut: true };
}

/** The header fields in their order while they fit in `max` bytes (name, value and `: `, CRLF each). */
function boundedHeaders(headers: Record<string, string>, max: number): { headers: Record<string, string>; cut: boolean } {
  const out: Record<string, string> = {};
  let used = 0;
  for (const [name, value] of Object.entries(headers)) {
    used += Buffer.byteLength(name) + Buffer.byteLength(value) + 4;
    if (used > max) return { headers: out, cut: true };
    out[name] = value;
  }
  return { headers: out, cut: false };
}

/**
 * The `data` of `email.received` with the message: the metadata payload, its attachments with
 * `size`, `download_url` and `expires_at`, and `text`, `html`, `headers`, `raw` (a link to the whole
 * message) and `truncated` (the parts cut to their bound, in that order; empty when none was).
 * `linkTtl`: how long the links stay valid (ms).
 */
export async function receivedWithContent(
  rec: ReceivedEmailRec,
  content: Pick<ReceivedContent, 'text' | 'html' | 'headers'>,
  links: SignedLinks,
  linkTtl: number,
  now = Date.now(),
): Promise<Record<string, unknown>> {
  const link = (attachment?: string) =>
    links.download(
      { kind: attachment ? 'received-attachment' : 'received-raw', team: rec.team_id, email: rec.id, ...(attachment ? { attachment } : {}) },
      now,
      Infinity,
      linkTtl,
    );
  const truncated: string[] = [];
  const bounded = (part: 'text' | 'html') => {
    const value = content[part];
    if (value === null) return null;
    const { text, cut } = cutUtf8(value, CONTENT_LIMITS[part]);
    if (cut) truncated.push(part);
    return text;
  };
  const text = bounded('text');
  const html = bounded('html');
  const headers = boundedHeaders(content.headers, CONTENT_LIMITS.headers);
  if (headers.cut) truncated.push('headers');
  const sizes = new Map(rec.attachments.map((a) => [a.id, a.size]));
  const base = receivedPayload(rec);
  const attachments = await Promise.all((base.attachments as { id: string }[]).map(async (a) => ({ ...a, size: sizes.get(a.id) ?? 0, ...(await link(a.id)) })));
  return { ...base, attachments, text, html, headers: headers.headers, raw: await link(), truncated };
}

/** How long the links of a webhook payload stay valid: the retry schedule (ms waits), and an hour after its last attempt. */
export const linkLifetime = (retrySchedule: readonly number[]) => retrySchedule.reduce((a, b) => a + b, 0) + DOWNLOAD_TTL_MS;
