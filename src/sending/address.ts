// Email addresses as the API takes them in `from`, `to`, `cc`, `bcc` and `reply_to`
// (api-reference §1.4): `email@example.com` or `Name <email@example.com>`, the name optionally a
// quoted string (`"Acme, Inc." <news@acme.test>`). Deliberately strict: no spaces, no quoted or
// non-ASCII local parts, no domain literals, a domain of at least two labels.
import { ApiError, errors } from '../api/errors';
import { asciiDomain } from '../domains/validate';

export interface Address {
  /** Display name, unquoted and unescaped; null when none was given. */
  name: string | null;
  /** `local@domain`, the domain in lowercase ASCII (IDNA). */
  address: string;
  /** Lowercase ASCII domain: what sending-domain and suppression checks compare. */
  domain: string;
}

// RFC 5322 dot-atom local part (ASCII).
const LOCAL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const NAMED = /^(.*?)\s*<([^<>]*)>$/s;
const QUOTED = /^"((?:[^"\\\r\n]|\\[^\r\n])*)"$/;

/** A bare address (`email@example.com`), or null when it is not one. */
export function parseEmail(text: string): Address | null {
  const at = text.lastIndexOf('@');
  if (at < 1 || text.length > 254) return null;
  const local = text.slice(0, at);
  const rawDomain = text.slice(at + 1);
  if (local.length > 64 || !LOCAL.test(local) || /\s/.test(rawDomain)) return null;
  const domain = asciiDomain(rawDomain);
  return domain ? { name: null, address: `${local}@${domain}`, domain } : null;
}

/** `email@example.com` or `Name <email@example.com>` (surrounding whitespace ignored), or null. */
export function parseAddress(text: string): Address | null {
  const input = text.trim();
  const named = NAMED.exec(input);
  if (!named) return parseEmail(input);
  const name = displayName(named[1]);
  const email = parseEmail(named[2]);
  return name === undefined || !email ? null : { ...email, name };
}

/** The name before `<…>`: quoted (escapes undone) or plain text without quotes or angle brackets; undefined = malformed. */
function displayName(raw: string): string | null | undefined {
  if (raw === '') return null;
  const quoted = QUOTED.exec(raw);
  if (quoted) return quoted[1].replace(/\\(.)/g, '$1') || null;
  return /["<>\p{Cc}]/u.test(raw) ? undefined : raw;
}

/** Resend's message for a malformed address in `field`. */
export function invalidAddressMessage(field: string): string {
  return `Invalid \`${field}\` field. The email address needs to follow the \`email@example.com\` or \`Name <email@example.com>\` format.`;
}

export function invalidAddress(field: string): ApiError {
  return errors.validation(invalidAddressMessage(field));
}

/** One address field (e.g. `from`); throws 422 naming the field. */
export function addressField(field: string, value: string): Address {
  const a = parseAddress(value);
  if (!a) throw invalidAddress(field);
  return a;
}

/** A field taking a string or an array of strings (`to`, `cc`, `bcc`, `reply_to`); throws 422 naming the field. */
export function addressList(field: string, value: string | string[]): Address[] {
  return (Array.isArray(value) ? value : [value]).map((v) => addressField(field, v));
}

/** An address as text that parseAddress reads back: `addr`, or `Name <addr>` with the name quoted when it holds RFC 5322 specials (§3.2.3). */
export function formatAddress(a: Address): string {
  if (!a.name) return a.address;
  const name = /[()<>[\]:;@\\,."]/.test(a.name) ? `"${a.name.replace(/(["\\])/g, '\\$1')}"` : a.name;
  return `${name} <${a.address}>`;
}
