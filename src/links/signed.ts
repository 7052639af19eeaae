// Signed links under `public_url` (docs/api.md §7.7, §7.10, §8, §13.4): usable without an API key,
// tamper-evident (HMAC-SHA256 over the payload with a per-install secret). Download and share links
// expire; unsubscribe links do not (they sit in mailboxes for years, RFC 8058 §3.2).
import { Signer } from './signer';

export const DOWNLOAD_TTL_MS = 3_600_000;

/** Where unsubscribe links live under `public_url`. */
export const UNSUBSCRIBE_PATH = '/u/';

/** Where shared emails live under `public_url`. */
export const SHARE_PATH = '/s/';

export interface DownloadTarget {
  /** What to serve: a sent email's attachment, a received email's attachment or raw message. */
  kind: 'sent-attachment' | 'received-attachment' | 'received-raw';
  team: string;
  email: string;
  attachment?: string;
}

const DOWNLOAD_KINDS: DownloadTarget['kind'][] = ['sent-attachment', 'received-attachment', 'received-raw'];

/** What a share link shows: a team's sent or received email, read-only, until `expires` (ms). */
export interface ShareTarget {
  team: string;
  email: string;
  received: boolean;
  expires: number;
}

/** Whom an unsubscribe link opts out: a contact of a team. */
export interface UnsubscribeTarget {
  team: string;
  contact: string;
  /** The broadcast email the link was sent in, so the unsubscribe counts for it (metrics). */
  email?: string;
}

export class SignedLinks {
  private readonly signer: Signer;

  /** `secret`: the install's link secret (32 random bytes kept in the store). */
  constructor(
    secret: Buffer,
    private readonly publicUrl: string,
  ) {
    this.signer = new Signer(secret);
  }

  /** A download link valid an hour (or `ttl` ms), or until `until` (ms) when that comes first. */
  async download(target: DownloadTarget, now = Date.now(), until = Infinity, ttl = DOWNLOAD_TTL_MS): Promise<{ download_url: string; expires_at: string }> {
    const expires = Math.min(now + ttl, until);
    return { download_url: `${this.publicUrl}/d/${this.signer.seal({ ...target, x: expires })}`, expires_at: new Date(expires).toISOString() };
  }

  /** The target of a download token, or null when forged, malformed or expired. */
  async verify(token: string | null, now = Date.now()): Promise<DownloadTarget | null> {
    const t = this.signer.open(token) as (DownloadTarget & { x: unknown }) | null;
    // Only a download token: one of another kind (a share link's) names no download.
    if (!t || !DOWNLOAD_KINDS.includes(t.kind) || typeof t.team !== 'string' || typeof t.email !== 'string') return null;
    return typeof t.x === 'number' && t.x > now ? t : null;
  }

  /** The public, read-only page of an email (POST /emails/{id}/share). */
  shareUrl(target: ShareTarget): string {
    // `k` tells the kinds apart, as for unsubscribe links.
    const payload = { k: 'share', t: target.team, e: target.email, ...(target.received ? { r: 1 } : {}), x: target.expires };
    return `${this.publicUrl}${SHARE_PATH}${this.signer.seal(payload)}`;
  }

  /** The target of a share token, or null when forged, malformed or expired. */
  verifyShare(token: string | null, now = Date.now()): ShareTarget | null {
    const t = this.signer.open(token) as { k?: unknown; t?: unknown; e?: unknown; r?: unknown; x?: unknown } | null;
    if (t?.k !== 'share' || typeof t.t !== 'string' || typeof t.e !== 'string' || typeof t.x !== 'number' || t.x <= now) return null;
    return { team: t.t, email: t.e, received: t.r === 1, expires: t.x };
  }

  /** The contact's unsubscribe URL (`{{{RESEND_UNSUBSCRIBE_URL}}}`, List-Unsubscribe). */
  unsubscribeUrl(target: UnsubscribeTarget): string {
    // `k` tells the kinds apart: a download token (kind, x) can never pass as this, nor this as one.
    return `${this.publicUrl}${UNSUBSCRIBE_PATH}${this.signer.seal({ k: 'unsubscribe', t: target.team, c: target.contact, ...(target.email ? { e: target.email } : {}) })}`;
  }

  /** The target of an unsubscribe token, or null when forged or malformed. */
  verifyUnsubscribe(token: string | null): UnsubscribeTarget | null {
    const t = this.signer.open(token) as { k?: unknown; t?: unknown; c?: unknown; e?: unknown } | null;
    if (t?.k !== 'unsubscribe' || typeof t.t !== 'string' || typeof t.c !== 'string') return null;
    return typeof t.e === 'string' ? { team: t.t, contact: t.c, email: t.e } : { team: t.t, contact: t.c };
  }
}
