// Email addresses (RFC 5322 §3.4) as Posthorn takes them in `from`, `to`, `cc`, `bcc` and
// `reply_to` (docs/api.md §1.4): `email@example.com` or `Name <email@example.com>`, the name
// optionally a quoted string (`"Acme, Inc." <news@acme.test>`). Deliberately strict: no spaces, no
// quoted or non-ASCII local parts, no domain literals, a domain of at least two labels (IDNA).
import { domainToASCII } from 'node:url';

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

/**
 * An address as text that parseAddress reads back: `addr`, or `Name <addr>` with the name quoted
 * when it holds RFC 5322 specials (§3.2.3) — or what only a quoted name keeps: control characters
 * (a tab folded into a name) and leading or trailing whitespace, which a plain name loses.
 */
export function formatAddress(a: Address): string {
  if (!a.name) return a.address;
  const name = /[()<>[\]:;@\\,."\p{Cc}]|^\s|\s$/u.test(a.name) ? `"${a.name.replace(/(["\\])/g, '\\$1')}"` : a.name;
  return `${name} <${a.address}>`;
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * asciiDomain's answers for the names seen last: every send asks about its sender's domain and its
 * recipients', the same few again and again. Bounded (cleared when full); longer names are not kept.
 */
const ASCII_SEEN = new Map<string, string | null>();
const ASCII_SEEN_MAX = 10_000;

/** A registrable-looking domain name as lowercase ASCII (IDNA), or null: ≥ 2 labels, non-numeric TLD. */
export function asciiDomain(name: string): string | null {
  const seen = ASCII_SEEN.get(name);
  if (seen !== undefined) return seen;
  const ascii = toAsciiDomain(name);
  if (name.length <= 253) {
    if (ASCII_SEEN.size >= ASCII_SEEN_MAX) ASCII_SEEN.clear();
    ASCII_SEEN.set(name, ascii);
  }
  return ascii;
}

function toAsciiDomain(name: string): string | null {
  const ascii = domainToASCII(name.toLowerCase());
  const labels = ascii.split('.');
  if (!ascii || ascii.length > 253 || labels.length < 2 || !labels.every((l) => LABEL.test(l)) || /^\d+$/.test(labels[labels.length - 1])) return null;
  return ascii;
}

/** Is `label` one DNS label (RFC 1035 §2.3.1, lowercase)? */
export const isLabel = (label: string) => LABEL.test(label);
