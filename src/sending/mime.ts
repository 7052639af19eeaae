// The RFC 5322 message for a validated email, built by nodemailer's composer (docs/ARCHITECTURE.md: no
// home-made MIME), when the message is needed (message.ts). DKIM signs exactly these bytes.
import { createHash } from 'node:crypto';
import { compile } from 'html-to-text';
import { withoutEditorDocument } from './editor-document';
import MailComposer, { type MailComposerAttachment } from 'nodemailer/lib/mail-composer';
import MimeNode from 'nodemailer/lib/mime-node';
import type { Readable } from 'node:stream';
import type { Address } from '../mail/address';
import type { ResolvedAttachment, ValidatedEmail } from './types';
import { hasBareCr, hasBareLf } from '../mail/line-breaks';

/**
 * An attachment as it is composed: its bytes, or a function opening them as a stream of pieces (a
 * large stored file, read anew at each composition rather than held whole: message.ts). Never a
 * message/* part, whose lines mime.ts makes CRLF on the whole of it.
 */
export type ComposedAttachment = Omit<ResolvedAttachment, 'content'> & { content: Uint8Array | (() => Readable) };

export interface ComposeOptions {
  /** The Message-ID header, exactly: `<id@domain>`. */
  messageId: string;
  date: Date;
  attachments: ComposedAttachment[];
  /** Derive a text/plain part from the html when `text` was not given (default true). */
  textFromHtml?: boolean;
  /** The html part as sent, when it differs from `email.html` (tracking added); text is still derived from `email.html`. */
  html?: string;
}

type NormalizeHeaderKey = (this: unknown, key: unknown) => string;
const mimeNodeProto = MimeNode.prototype as unknown as { _normalizeHeaderKey?: NormalizeHeaderKey };
/** nodemailer's own header-name normalization (pinned version, docs/ARCHITECTURE.md §5), which memoHeaderKey answers from a memo. */
export const nodemailerHeaderKey: NormalizeHeaderKey | undefined = mimeNodeProto._normalizeHeaderKey;
/** Header names normalized at most this many: what senders put in `headers` is theirs. */
const HEADER_KEYS_KEPT = 1024;
const headerKeys = new Map<string, string>();

/**
 * nodemailer normalizes a header name (three regular expressions over it) every time it sets, reads
 * or encodes a header — about 4 % of the back office's CPU under delivery load (profile-deliver.ts).
 * The result depends on the name alone, so each name's is kept: the same bytes, computed once
 * (docs/ARCHITECTURE.md §5, "Where Posthorn reaches into a library"; canary in
 * test/dependencies/nodemailer.test.ts).
 */
export function memoHeaderKey(this: unknown, key: unknown): string {
  if (typeof key !== 'string') return nodemailerHeaderKey!.call(this, key);
  let out = headerKeys.get(key);
  if (out === undefined) {
    out = nodemailerHeaderKey!.call(this, key);
    if (headerKeys.size < HEADER_KEYS_KEPT) headerKeys.set(key, out);
  }
  return out;
}
if (nodemailerHeaderKey) mimeNodeProto._normalizeHeaderKey = memoHeaderKey;

// A plain-text rendering for clients that do not show html; images carry no text worth keeping,
// and a hidden preheader (broadcasts' preview_text) is for inbox lists, not the message text.
const htmlToText = compile({
  wordwrap: 78,
  selectors: [
    { selector: 'img', format: 'skip' },
    { selector: '[data-preheader]', format: 'skip' },
    { selector: 'a', options: { hideLinkHrefIfSameAsText: true } },
  ],
});

// RFC 5322 §2.3: lines end in CRLF, and a lone CR or LF is none; text parts are CRLF-terminated in
// their canonical form (RFC 2045 §6.8: before base64) as well.
const lines = (s: string) => s.replace(/\r\n|\r|\n/g, '\r\n');

/**
 * The text part derived from html. Pathological markup (thousands of nested tags) can exhaust
 * html-to-text's recursion: the message then goes without a text part rather than not at all.
 */
function derivedText(html: string): string | null {
  try {
    return htmlToText(html).trim();
  } catch (e) {
    if (e instanceof RangeError) return null;
    throw e;
  }
}

const mailbox = (a: Address) => (a.name ? { name: a.name, address: a.address } : a.address);

/** What the message is made of (the rest of a validated email is the envelope's or Posthorn's). */
export type Composable = Pick<ValidatedEmail, 'from' | 'to' | 'cc' | 'reply_to' | 'subject' | 'html' | 'text' | 'headers'>;

export async function composeMime(email: Composable, opts: ComposeOptions): Promise<Buffer> {
  // The bodies are CRLF already and nodemailer writes CRLF itself, so its newline conversion — a
  // stream through every part, a quarter of the time to compose a small message — is needed only
  // for what it copies as given: a message/* attachment with LF line ends, say.
  const message = await compose(email, opts, false).build();
  return hasBareLf(message) || hasBareCr(message) ? compose(email, opts, true).build() : message;
}

/**
 * The message as composeMime makes it when it has no lone CR or LF, as a stream of pieces — for a
 * large message, composed once more each time it is read rather than held whole (the delivery
 * attempt, docs/ARCHITECTURE.md). Whoever reads it checks for a lone CR or LF, and then takes
 * composeMime's bytes instead.
 */
export function composeMimeStream(email: Composable, opts: ComposeOptions): Readable {
  return compose(email, opts, false).createReadStream();
}

function compose(email: Composable, opts: ComposeOptions, convertNewlines: boolean): ReturnType<MailComposer['compile']> {
  // `text` null = derive it; "" = the caller wants no text part (docs/api.md §7.1).
  const text = email.text ?? (email.html && opts.textFromHtml !== false ? derivedText(email.html) : null);
  const composer = new MailComposer({
    from: mailbox(email.from),
    to: email.to.map(mailbox),
    cc: email.cc.length ? email.cc.map(mailbox) : undefined,
    // Bcc recipients travel in the envelope only: never in a header.
    replyTo: email.reply_to.length ? email.reply_to.map(mailbox) : undefined,
    subject: email.subject,
    messageId: opts.messageId,
    date: opts.date,
    text: text ? lines(text) : undefined,
    html: email.html ? lines(withoutEditorDocument(opts.html ?? email.html)) : undefined,
    attachments: opts.attachments.map(attachment),
    ...(convertNewlines ? { newline: 'win' as const } : {}),
    // Boundaries derived from the Message-ID: the same inputs give the same bytes, and a sender
    // cannot predict them (the id is generated after the request arrives) to break out of a part.
    baseBoundary: createHash('sha256').update(opts.messageId).digest('hex').slice(0, 24),
  });
  const root = composer.compile();
  // After the standard fields, in the caller's order (validate.ts refused the reserved ones).
  for (const [name, value] of Object.entries(email.headers)) root.addHeader(name, value);
  return root;
}

/** Attachments of these types are copied as they are, their lines made CRLF (attachment): never composed from a stream. */
export const wholeAttachment = (contentType: string) => /^message\//i.test(contentType);

function attachment(a: ComposedAttachment): MailComposerAttachment {
  const given = a.content;
  // A stream is base64-encoded as its pieces arrive, to the bytes its whole content gives: every
  // attachment but a message/* part has `Content-Transfer-Encoding: base64` set whatever its content
  // (nodemailer's mail-composer), and a message/* part is never a stream (ComposedAttachment).
  const content = typeof given === 'function' ? given() : Buffer.from(given.buffer, given.byteOffset, given.byteLength);
  return {
    // nodemailer copies a message/* part as it is (7bit or 8bit, never encoded): a message it holds
    // is made of CRLF lines like any other (RFC 2046 §5.2.1).
    content: wholeAttachment(a.content_type) && Buffer.isBuffer(content) ? Buffer.from(lines(content.toString('latin1')), 'latin1') : content,
    // No name given → none invented (nodemailer would make up `attachment-1.bin`).
    filename: a.filename ?? false,
    contentType: a.content_type,
    // A content id makes the part inline, referenced from the html as `cid:<id>` (RFC 2392);
    // nodemailer then puts it in multipart/related beside the html.
    ...(a.content_id ? { cid: a.content_id, contentDisposition: 'inline' } : { contentDisposition: 'attachment' }),
  };
}
