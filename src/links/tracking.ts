// Open-pixel and click-redirect links (docs/mail.md §6): `/t/o/<token>` and `/t/c/<token>` under
// `public_url`, or under the domain's tracking subdomain once its CNAME is verified. The token holds
// the team, the email, the recipient (when the message has exactly one, see `recipient` below) and,
// for a click, the destination URL, sealed with AES-256-GCM under a key derived from the install's
// tracking secret: it can be read by no one else (a recipient, a mail provider, a proxy log) and
// changed by no one — a link cannot be pointed anywhere else (no open redirect) nor credited to
// another email. Nothing is stored per link, so sending costs no write and a hit no lookup before
// its answer. Tokens never expire — links sit in mailboxes for years, and keep redirecting after the
// email itself has expired. Links made before tokens were sealed (HMAC-signed JSON, readable) still
// work: they are told apart by their `.`.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { Signer } from './signer';

export interface TrackingTarget {
  team: string;
  email: string;
  /**
   * The recipient the message was delivered to, or null when one message went to several envelope
   * recipients (to, cc and bcc share one body, so a hit cannot say which of them it came from).
   */
  recipient: string | null;
}

export interface ClickTarget extends TrackingTarget {
  url: string;
}

export const OPEN_PATH = '/t/o/';
export const CLICK_PATH = '/t/c/';

/**
 * A token's first byte, in the clear and authenticated with the rest: the format and the kind, so a
 * pixel token never passes as a click token nor the reverse.
 */
const KIND = { open: 0x01, click: 0x02 } as const;
type Kind = (typeof KIND)[keyof typeof KIND];

/**
 * Each token has a key of its own, derived (HKDF, RFC 5869) from the secret and 16 random bytes
 * carried in the token: no key ever seals two tokens, so GCM's fixed nonce is safe however many
 * links an install makes (a random 96-bit nonce under one key would wear out after some 2^32).
 */
const SALT = 16;
const TAG = 16;
const NONCE = Buffer.alloc(12);
const INFO = Buffer.from('posthorn tracking link v1');

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Flags of the sealed payload: which ids are UUIDs (16 bytes, else a length and UTF-8), whether a recipient follows. */
const TEAM_UUID = 1;
const EMAIL_UUID = 2;
const HAS_RECIPIENT = 4;

export class TrackingLinks {
  private readonly legacy: Signer;

  constructor(private readonly secret: Buffer) {
    this.legacy = new Signer(secret);
  }

  /** The pixel URL under `base` (an origin without a trailing slash). */
  openUrl(base: string, t: TrackingTarget): string {
    return `${base}${OPEN_PATH}${this.seal(KIND.open, t, null)}`;
  }

  clickUrl(base: string, t: ClickTarget): string {
    return `${base}${CLICK_PATH}${this.seal(KIND.click, t, t.url)}`;
  }

  /** The target of a pixel token, or null when forged, malformed or of another kind. */
  verifyOpen(token: string | null): TrackingTarget | null {
    if (token?.includes('.')) {
      const p = this.legacy.open(token);
      return p && p.k === 'o' ? legacyTarget(p) : null;
    }
    const t = this.open(KIND.open, token);
    return t && { team: t.team, email: t.email, recipient: t.recipient };
  }

  verifyClick(token: string | null): ClickTarget | null {
    if (token?.includes('.')) {
      const p = this.legacy.open(token);
      if (p?.k !== 'c' || typeof p.u !== 'string') return null;
      const t = legacyTarget(p);
      return t && { ...t, url: p.u };
    }
    const t = this.open(KIND.click, token);
    return t?.url != null ? { team: t.team, email: t.email, recipient: t.recipient, url: t.url } : null;
  }

  private key(salt: Uint8Array): Buffer {
    return Buffer.from(hkdfSync('sha256', this.secret, salt, INFO, 32));
  }

  private seal(kind: Kind, t: TrackingTarget, url: string | null): string {
    const head = Buffer.of(kind);
    const salt = randomBytes(SALT);
    const cipher = createCipheriv('aes-256-gcm', this.key(salt), NONCE);
    cipher.setAAD(head);
    const body = Buffer.concat([cipher.update(encode(t, url)), cipher.final()]);
    return Buffer.concat([head, salt, body, cipher.getAuthTag()]).toString('base64url');
  }

  private open(kind: Kind, token: string | null): (TrackingTarget & { url: string | null }) | null {
    if (typeof token !== 'string' || token.length > 8192) return null;
    const raw = Buffer.from(token, 'base64url');
    // One spelling per token: base64url's last character carries spare bits.
    if (raw.length < 1 + SALT + TAG + 1 || raw[0] !== kind || raw.toString('base64url') !== token) return null;
    const decipher = createDecipheriv('aes-256-gcm', this.key(raw.subarray(1, 1 + SALT)), NONCE);
    decipher.setAAD(raw.subarray(0, 1));
    decipher.setAuthTag(raw.subarray(raw.length - TAG));
    let plain: Buffer;
    try {
      plain = Buffer.concat([decipher.update(raw.subarray(1 + SALT, raw.length - TAG)), decipher.final()]);
    } catch {
      return null;
    }
    return decode(plain);
  }
}

/** The payload: flags, team, email, recipient?, then the URL (a click's) to the end. */
function encode(t: TrackingTarget, url: string | null): Buffer {
  const parts: Buffer[] = [];
  let flags = 0;
  const id = (value: string, bit: number) => {
    if (UUID.test(value)) {
      flags |= bit;
      parts.push(Buffer.from(value.replace(/-/g, ''), 'hex'));
    } else parts.push(text(value));
  };
  id(t.team, TEAM_UUID);
  id(t.email, EMAIL_UUID);
  if (t.recipient !== null) {
    flags |= HAS_RECIPIENT;
    parts.push(text(t.recipient));
  }
  if (url !== null) parts.push(Buffer.from(url));
  return Buffer.concat([Buffer.of(flags), ...parts]);
}

/** A string with its length first (2 bytes: an address may be longer than 255 bytes of UTF-8). */
function text(value: string): Buffer {
  const bytes = Buffer.from(value);
  const len = Buffer.alloc(2);
  len.writeUInt16BE(bytes.length);
  return Buffer.concat([len, bytes]);
}

function decode(plain: Buffer): (TrackingTarget & { url: string | null }) | null {
  let at = 1;
  const flags = plain[0]!;
  const uuid = () => {
    const h = plain.toString('hex', at, at + 16);
    at += 16;
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  };
  const str = () => {
    const n = plain.readUInt16BE(at);
    const text = plain.toString('utf8', at + 2, at + 2 + n);
    at += 2 + n;
    return text;
  };
  try {
    const team = flags & TEAM_UUID ? uuid() : str();
    const email = flags & EMAIL_UUID ? uuid() : str();
    const recipient = flags & HAS_RECIPIENT ? str() : null;
    if (at > plain.length) return null;
    return { team, email, recipient, url: at < plain.length ? plain.toString('utf8', at) : null };
  } catch {
    return null;
  }
}

function legacyTarget(p: Record<string, unknown>): TrackingTarget | null {
  if (typeof p.t !== 'string' || typeof p.e !== 'string' || (p.r !== null && typeof p.r !== 'string')) return null;
  return { team: p.t, email: p.e, recipient: p.r as string | null };
}

/** The origin tracking links of a domain live under (docs/mail.md §6). */
export function trackingBase(
  publicUrl: string,
  domain: { name: string; tracking_subdomain: string | null; record_status: Record<string, string | undefined> },
): string {
  const pub = new URL(publicUrl);
  // The subdomain only once its CNAME to public_url's host is verified: before, links would not resolve.
  if (domain.tracking_subdomain && domain.record_status.Tracking === 'verified') {
    pub.hostname = `${domain.tracking_subdomain}.${domain.name}`;
    return pub.toString().replace(/\/+$/, '');
  }
  return publicUrl.replace(/\/+$/, '');
}
