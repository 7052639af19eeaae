// Every check of a send request that needs no I/O (docs/api.md §7.1; batch items §7.2) beyond the
// types of its fields, which the wire schema checked first (src/schemas/emails.ts), in the order
// Resend reports them: required fields, addresses, body, headers, tags, schedule, attachments.
// The first failure is thrown as an ApiError naming its field. Attachment `path`s are fetched
// later (attachments.ts); unknown keys were dropped by the schema (§1.4).
import { ApiError, errors } from '../errors';
import { isUuid } from '../ids';
import { formatAddress, type Address } from '../mail/address';
import { addressField, addressList } from './address';
import { parseScheduledAt } from './schedule';
import type { AttachmentInput, ValidatedEmail } from './types';
import { isObject, given } from '../schemas/common';
import { MAX_ATTACHMENTS_BASE64, type SendEmailRequest } from '../schemas/emails';
import { StreamedBase64 } from '../schemas/streamed-base64';

export { MAX_ATTACHMENTS_BASE64 };
export const MAX_TO = 50;
export const MAX_TAGS = 75;
export const MAX_TAG_LENGTH = 256;

// Headers Posthorn writes itself; for the address and subject ones the field to use instead.
const RESERVED_HEADERS: Record<string, string | null> = {
  from: 'from',
  to: 'to',
  cc: 'cc',
  bcc: 'bcc',
  'reply-to': 'reply_to',
  subject: 'subject',
  date: null,
  'message-id': null,
  'mime-version': null,
  'content-type': null,
  'content-transfer-encoding': null,
  'dkim-signature': null,
  'return-path': null,
};
// RFC 5322 §3.6.8: a field name is printable ASCII except the colon.
const FIELD_NAME = /^[!-9;-~]+$/;
// RFC 5322 §3.2.5 unstructured text: a CR or LF would start a header of the caller's choosing.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what this refuses.
const HEADER_CONTROL = /[\0-\x08\n-\x1f\x7f]/;
const TAG_TEXT = /^[A-Za-z0-9_-]*$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
// RFC 2045 §5.1 type/subtype tokens, optionally followed by parameters.
// biome-ignore lint/suspicious/noControlCharactersInRegex: parameters may hold no control characters (header injection).
const MIME_TYPE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+\/[!#$%&'*+.^_`|~0-9A-Za-z-]+(?:\s*;[^\0-\x1f\x7f]*)?$/;
// A Content-ID's id-left (RFC 2392): printable ASCII without space or angle brackets.
const CONTENT_ID = /^[!-;=?-~]{1,127}$/;

/** A Content-Type value (`type/subtype` and optional parameters) safe to put in a header. */
export const isMimeType = (text: string) => MIME_TYPE.test(text);

export function invalidAttachment(message: string): ApiError {
  return new ApiError(422, 'invalid_attachment', message);
}

export function attachmentsTooLarge(): ApiError {
  return errors.invalidField('attachments', 'attachments may total at most 40 MB after base64 encoding.');
}

export interface ValidateOptions {
  /** The current time (ms) for `scheduled_at`; defaults to the clock. */
  now?: number;
}

/** One send, its `template` already resolved into subject and body (template.ts). */
export function validateEmail(input: SendEmailRequest, opts: ValidateOptions = {}): ValidatedEmail {
  const { from: fromText, to: toValue, subject } = input;
  if (!given(fromText) || fromText === '') throw errors.missingField('from');
  if (!given(toValue) || toValue === '' || (Array.isArray(toValue) && toValue.length === 0)) throw errors.missingField('to');
  if (!given(subject)) throw errors.missingField('subject');

  const from = addressField('from', fromText);
  const to = recipients('to', toValue);
  if (to.length > MAX_TO) throw errors.invalidField('to', `must contain at most ${MAX_TO} addresses.`);
  const cc = recipients('cc', input.cc);
  const bcc = recipients('bcc', input.bcc);
  const reply_to = recipients('reply_to', input.reply_to);

  const html = input.html ?? null;
  const text = input.text ?? null;
  if (!html && !text) throw errors.validation('Missing `html` or `text` field.');

  const headers = customHeaders(input.headers);
  const tags = emailTags(input.tags);
  const scheduled_at = given(input.scheduled_at) ? parseScheduledAt(input.scheduled_at, 'scheduled_at', opts.now ?? Date.now()) : null;
  const attachments = attachmentInputs(input.attachments);
  const topic_id = topicId(input.topic_id);

  return { from, fromText: formatAddress(from), to, cc, bcc, reply_to, subject, html, text, headers, tags, scheduled_at, attachments, topic_id };
}

/** `topic_id`: a topic's id, or null/absent for none (that the topic exists is checked by `prepare`). */
function topicId(value: string | null | undefined): string | null {
  if (!given(value)) return null;
  if (!isUuid(value)) throw errors.invalidField('topic_id', 'must be the id of a topic.');
  return value.toLowerCase();
}

/** An address field taking a string or an array of strings; absent, `""` or `[]` = none. */
function recipients(field: string, value: string | string[] | null | undefined): Address[] {
  if (!given(value) || value === '') return [];
  return addressList(field, value);
}

function customHeaders(value: Record<string, unknown> | null | undefined): Record<string, string> {
  if (!given(value)) return {};
  const entries = Object.entries(value);
  for (const [name, v] of entries) {
    if (!FIELD_NAME.test(name)) throw errors.invalidField('headers', `\`${name}\` is not a valid header name.`);
    const key = name.toLowerCase();
    // RFC 5322 §3.6.6: Resent-* fields record a re-sending by a user agent, and some MTAs route on
    // Resent-To/Cc/Bcc; an API send is no re-sending, so none of them may be set.
    if (key.startsWith('resent-'))
      throw errors.invalidField('headers', `the \`${name}\` header cannot be set: Resent-* fields are for re-sending (RFC 5322 §3.6.6).`);
    if (Object.hasOwn(RESERVED_HEADERS, key)) {
      const field = RESERVED_HEADERS[key];
      throw errors.invalidField(
        'headers',
        field
          ? `the \`${name}\` header cannot be set here; use the \`${field}\` field.`
          : `the \`${name}\` header is set by Posthorn and cannot be overridden.`,
      );
    }
    if (typeof v !== 'string') throw errors.invalidField('headers', `the value of \`${name}\` must be a string.`);
    if (HEADER_CONTROL.test(v)) throw errors.invalidField('headers', `the value of \`${name}\` must not contain line breaks or other control characters.`);
  }
  // fromEntries defines own properties: a `__proto__` key cannot reach the prototype.
  return Object.fromEntries(entries) as Record<string, string>;
}

function emailTags(value: unknown[] | null | undefined): { name: string; value: string }[] {
  if (!given(value)) return [];
  if (value.length > MAX_TAGS) throw errors.invalidField('tags', `must contain at most ${MAX_TAGS} tags.`);
  return value.map((tag, i) => {
    if (!isObject(tag)) throw errors.invalidField(`tags[${i}]`, 'must be an object with `name` and `value`.');
    return { name: tagText(tag, `tags[${i}]`, 'name'), value: tagText(tag, `tags[${i}]`, 'value') };
  });
}

function tagText(tag: Record<string, unknown>, prefix: string, key: 'name' | 'value'): string {
  const field = `${prefix}.${key}`;
  const v = tag[key];
  if (!given(v)) throw errors.missingField(field);
  if (typeof v !== 'string' || !TAG_TEXT.test(v) || v.length > MAX_TAG_LENGTH || (key === 'name' && v === ''))
    throw errors.invalidField(field, `must only contain ASCII letters, numbers, underscores or dashes, at most ${MAX_TAG_LENGTH} characters.`);
  return v;
}

function attachmentInputs(value: NonNullable<SendEmailRequest['attachments']> | null | undefined): AttachmentInput[] {
  if (!given(value)) return [];
  let total = 0;
  return value.map((item, i): AttachmentInput => {
    const field = `attachments[${i}]`;
    const filename = item.filename ?? null;
    const content_type = item.content_type ?? null;
    if (content_type !== null && !isMimeType(content_type))
      throw errors.invalidField(`${field}.content_type`, 'must be a MIME type such as `application/pdf`.');
    // SDK 4.x–5.x send `inline_content_id`, 6.x `content_id`; the latter wins (§2 item 6).
    const cidKey = given(item.content_id) ? 'content_id' : 'inline_content_id';
    let content_id = item[cidKey] ?? null;
    if (content_id !== null) {
      content_id = content_id.replace(/^<(.*)>$/, '$1');
      if (!CONTENT_ID.test(content_id))
        throw errors.invalidField(`${field}.${cidKey}`, 'must be 1 to 127 printable ASCII characters without spaces or angle brackets.');
    }

    const content = item.content;
    const path = item.path;
    if (content instanceof StreamedBase64) {
      // Plain base64 decoded as a large body arrived (api/platform/streamed-json.ts): counted as its text.
      total += Math.ceil(content.length / 4) * 4;
      if (total > MAX_ATTACHMENTS_BASE64) throw attachmentsTooLarge();
      return { filename, content: content.bytes, path: null, content_type, content_id };
    }
    if (given(content) && typeof content === 'object') {
      // A Buffer's bytes, checked by the wire schema (docs/api.md §7.1, §2 item 16); counted as base64.
      total += base64Length(content.data.length);
      if (total > MAX_ATTACHMENTS_BASE64) throw attachmentsTooLarge();
      return { filename, content: new Uint8Array(content.data), path: null, content_type, content_id };
    }
    if (given(content)) {
      const compact = content.replace(/[\t\n\r ]+/g, '');
      if (!BASE64.test(compact) || compact.length % 4 === 1 || (compact.endsWith('=') && compact.length % 4 !== 0))
        throw invalidAttachment(`Invalid \`${field}.content\` field: it is not valid base64.`);
      total += Math.ceil(compact.length / 4) * 4; // as padded base64, the way attachments.ts counts it
      if (total > MAX_ATTACHMENTS_BASE64) throw attachmentsTooLarge();
      return { filename, content, path: null, content_type, content_id };
    }
    if (given(path)) {
      if (!isHttpUrl(path)) throw invalidAttachment(`Invalid \`${field}.path\` field: it must be an http or https URL.`);
      return { filename, content: null, path, content_type, content_id };
    }
    throw invalidAttachment(`Invalid \`${field}\` field: an attachment needs \`content\` or \`path\`.`);
  });
}

/** The length of `bytes` bytes once base64-encoded, padding included. */
export const base64Length = (bytes: number) => 4 * Math.ceil(bytes / 3);

function isHttpUrl(text: string): boolean {
  try {
    const u = new URL(text);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}
