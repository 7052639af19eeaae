// VERP envelope senders (docs/mail.md §1): MAIL FROM is `bounces+<token>@<return path>.<domain>`,
// the token naming the email and the recipient domain of the delivery it was used for, so a DSN or
// ARF report arriving at Posthorn's MX maps back to the email and can only speak for recipients
// of that delivery (a recipient at one domain cannot get another domain's recipients suppressed
// with the return path it saw). token = the email id's 32 hex digits + "-" + a 10-hex-digit tag,
// HMAC-SHA256 of id and recipient domain under a per-install secret: a forged bounce for a guessed
// id is told apart. The local part stays at 51 characters, inside RFC 5321 §4.5.3.1.1's 64, and
// lowercase only, so it survives MTAs that fold case.
import { createHmac, timingSafeEqual } from 'node:crypto';

const PREFIX = 'bounces+';
const TAG_HEX = 10;
const TOKEN_RE = /^([0-9a-f]{32})-([0-9a-f]{10})$/;

/** What names a sending domain's return-path host. */
export interface ReturnPath {
  name: string;
  custom_return_path: string;
}

/** The return-path host of a domain (its `custom_return_path` subdomain, docs/api.md §9.7). */
export function returnPathHost(d: ReturnPath): string {
  return `${d.custom_return_path}.${d.name}`;
}

/** A VERP-shaped address, taken apart; the tag is not checked yet (see `Verp.tagMatches`). */
export interface VerpAddress {
  emailId: string;
  hex: string;
  tag: string;
  /** The host it was sent to, lowercase. */
  host: string;
}

export class Verp {
  private readonly key: Buffer;

  /** `secret`: the install's VERP secret (32 random bytes kept in the store). */
  constructor(secret: Buffer) {
    this.key = createHmac('sha256', secret).update('posthorn verp v1').digest();
  }

  /** MAIL FROM for the delivery of email `emailId` from domain `d` to recipients at `rcptDomain`. */
  sender(emailId: string, d: ReturnPath, rcptDomain: string): string {
    return `${PREFIX}${this.token(emailId, rcptDomain)}@${returnPathHost(d)}`;
  }

  token(emailId: string, rcptDomain: string): string {
    const hex = emailId.replace(/-/g, '').toLowerCase();
    return `${hex}-${this.tag(hex, rcptDomain)}`;
  }

  /** Did this install write `v`'s tag for a delivery to `rcptDomain`? (constant time) */
  tagMatches(v: VerpAddress, rcptDomain: string): boolean {
    return timingSafeEqual(Buffer.from(v.tag), Buffer.from(this.tag(v.hex, rcptDomain)));
  }

  private tag(hex: string, rcptDomain: string): string {
    return createHmac('sha256', this.key).update(`${hex}|${rcptDomain.toLowerCase()}`).digest('hex').slice(0, TAG_HEX);
  }
}

/** The parts of a VERP-shaped address, or null. Case-insensitive. */
export function decodeVerp(address: string): VerpAddress | null {
  const at = address.lastIndexOf('@');
  if (at < 0) return null;
  const local = address.slice(0, at).toLowerCase();
  const host = address
    .slice(at + 1)
    .toLowerCase()
    .replace(/\.$/, '');
  if (!local.startsWith(PREFIX) || !host) return null;
  const m = TOKEN_RE.exec(local.slice(PREFIX.length));
  if (!m) return null;
  const [, hex, tag] = m;
  const emailId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  return { emailId, hex, tag, host };
}
