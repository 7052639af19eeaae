// Authenticated SMTP submission (docs/api.md §17): the message becomes the same `EmailInput` a
// POST /emails body is, and goes through the one sending core (`sendOnce`: prepare → commit) with
// the team's shared rate limit and the `Resend-Idempotency-Key` header under the same rules as the
// API's Idempotency-Key (docs/api.md §5, own scope `smtp`). The core composes the outgoing message afresh from the
// parsed parts (as for API mail), so Posthorn sets Message-ID, Date and the MIME structure, and
// a `Bcc:` header never leaves (RFC 5322 §3.6.3: blind recipients are the envelope's business).
import type { AddressObject, ParsedMail } from 'mailparser';
import { parseMessage } from '../mail/parse';
import type { Config } from '../config';
import type { ApiKeyRec } from '../store';
import type { RateLimiter } from '../limits/ratelimit';
import { ApiError } from '../errors';
import { formatAddress } from '../mail/address';
import { headerFields, type HeaderField, type HeaderLine } from '../mail/headers';
import { checkIdempotencyKey } from '../sending/idempotency';
import { sendOnce, type SendOnceDeps } from '../sending/submit';
import type { KeyUsage } from '../accounts/keys';
import type { EmailInput } from '../sending/types';
import { replies } from './replies';

export interface SubmissionDeps extends SendOnceDeps {
  limiter: RateLimiter;
  /** AUTH records the key's use (smtp/auth.ts). */
  keyUsage: KeyUsage;
  config: Pick<Config, 'security' | 'limits' | 'public_url' | 'delivery'>;
}

export const IDEMPOTENCY_HEADER = 'resend-idempotency-key';
/** Idempotency scope of SMTP submissions: unrelated to the same key on /emails (docs/api.md §5). */
export const SMTP_ENDPOINT = 'smtp';

// Fields the core writes itself (validate.ts refuses them as custom headers) or that describe
// the MIME structure it rebuilds (RFC 2045 §3 Content-*), the blind copy list, the idempotency
// key, and trace fields of earlier hops (RFC 5321 §4.4): none is passed through as a custom header.
const NOT_CUSTOM = new Set([
  'from',
  'to',
  'cc',
  'bcc',
  'reply-to',
  'subject',
  'date',
  'message-id',
  'mime-version',
  'content-type',
  'content-transfer-encoding',
  'dkim-signature',
  'return-path',
  'received',
  IDEMPOTENCY_HEADER,
]);

/** Submit one message for the key's team; resolves to the email id (new, or the original on replay). */
export async function submitMessage(svc: SubmissionDeps, key: ApiKeyRec, envelopeRecipients: string[], raw: Buffer): Promise<string> {
  const team = key.team_id;
  // docs/api.md §3.3 order: rate limit, then the idempotency key, then the message itself.
  if (!svc.limiter.take(team).allowed) throw replies.rateLimited(svc.config.limits.requests_per_second);
  let parsed: ParsedMail;
  try {
    // cid: links stay as written (they name the inline parts); no text invented from the html here.
    parsed = await parseMessage(raw, { keepCidLinks: true, skipHtmlToText: true, skipTextToHtml: true });
  } catch {
    throw replies.badContent('The message could not be parsed as RFC 5322 / MIME.');
  }
  const fields = await headerFields(parsed.headerLines as HeaderLine[]);
  const idemKey = idempotencyKeyOf(fields);
  const input = emailInput(parsed, fields, envelopeRecipients);
  const outcome = await sendOnce(svc, { team, key }, input, { endpoint: SMTP_ENDPOINT, key: idemKey });
  // A replayed refusal (stored 4xx) is refused again the same way.
  if (outcome.status !== 200) {
    const b = outcome.body as { statusCode: number; name: string; message: string };
    throw new ApiError(b.statusCode, b.name, b.message);
  }
  return (outcome.body as { id: string }).id;
}

/** The `Resend-Idempotency-Key` header (1–256 characters, docs/api.md §5), or null. */
function idempotencyKeyOf(fields: HeaderField[]): string | null {
  const field = fields.find((f) => f.name.toLowerCase() === IDEMPOTENCY_HEADER);
  return checkIdempotencyKey(field ? field.value : null, 'Resend-Idempotency-Key');
}

/**
 * The POST /emails body this message stands for: from/to/cc/reply_to from its header fields,
 * bcc = envelope recipients in neither To nor Cc, subject, bodies, attachments, custom headers.
 * Fields that are absent stay absent, so the core reports them exactly as the API would.
 */
export function emailInput(parsed: ParsedMail, fields: HeaderField[], envelopeRecipients: string[]): EmailInput {
  const from = addresses(parsed.from);
  const to = addresses(parsed.to);
  const cc = addresses(parsed.cc);
  const listed = new Set([...to, ...cc].map((a) => a.address.toLowerCase()));
  const bcc = [...new Set(envelopeRecipients.map((r) => r.toLowerCase()))].filter((r) => !listed.has(r));
  const input: EmailInput = {
    from: from.length === 1 ? show(from[0]) : from.length ? from.map(show) : undefined,
    to: to.length ? to.map(show) : undefined,
    cc: cc.length ? cc.map(show) : undefined,
    bcc: bcc.length ? bcc : undefined,
    reply_to: addresses(parsed.replyTo).map(show),
    subject: parsed.subject,
    html: parsed.html || undefined,
    // '' = no text/plain part (html only): the core then derives one, as for an API send without `text`.
    text: parsed.text || undefined,
    headers: customHeaders(fields),
    attachments: parsed.attachments.map((a) => {
      // Inline (referenced from the html as cid:) when it has a Content-ID and is not a download.
      const inline = !!a.cid && (a.related || a.contentDisposition === 'inline');
      return {
        filename: a.filename,
        content: a.content.toString('base64'),
        content_type: a.contentType,
        ...(inline ? { content_id: a.cid } : {}),
      };
    }),
  };
  if (!(input.attachments as unknown[]).length) delete input.attachments;
  return input;
}

type Mailbox = { name: string; address: string };

/** Every mailbox of an address field, groups flattened (RFC 5322 §3.4). */
function addresses(field: AddressObject | AddressObject[] | undefined): Mailbox[] {
  const out: Mailbox[] = [];
  const walk = (list: { address?: string; name: string; group?: unknown[] }[]) => {
    for (const a of list) {
      if (a.group) walk(a.group as typeof list);
      else if (a.address) out.push({ name: a.name, address: a.address });
    }
  };
  for (const obj of field === undefined ? [] : Array.isArray(field) ? field : [field]) walk(obj.value);
  return out;
}

const show = (m: Mailbox) => formatAddress({ name: m.name || null, address: m.address, domain: '' });

/** Every other header field, in order, by the name as written; repeated fields joined with ", ". */
function customHeaders(fields: HeaderField[]): Record<string, string> | undefined {
  const out = new Map<string, string>();
  for (const { name, value } of fields) {
    const key = name.toLowerCase();
    if (NOT_CUSTOM.has(key) || key.startsWith('content-')) continue;
    const prev = [...out.keys()].find((k) => k.toLowerCase() === key);
    if (prev === undefined) out.set(name, value);
    else out.set(prev, `${out.get(prev)}, ${value}`);
  }
  return out.size ? Object.fromEntries(out) : undefined;
}
