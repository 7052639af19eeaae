// Signed links under `public_url` (docs/api.md §7.7, §8, §13.4): usable without an API key,
// tamper-evident (HMAC-SHA256 over the payload with a per-install secret). Download links expire;
// unsubscribe links do not (they sit in mailboxes for years, RFC 8058 §3.2).
import { Signer } from './signer';

export const DOWNLOAD_TTL_MS = 3_600_000;

/** Where unsubscribe links live under `public_url`. */
export const UNSUBSCRIBE_PATH = '/u/';

export interface DownloadTarget {
  /** What to serve: a sent email's attachment, a received email's attachment or raw message. */
  kind: 'sent-attachment' | 'received-attachment' | 'received-raw';
  team: string;
  email: string;
  attachment?: string;
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
  constructor(secret: Buffer, private readonly publicUrl: string) {
    this.signer = new Signer(secret);
  }

  async download(target: DownloadTarget, now = Date.now()): Promise<{ download_url: string; expires_at: string }> {
    const expires = now + DOWNLOAD_TTL_MS;
    return { download_url: `${this.publicUrl}/d/${this.signer.seal({ ...target, x: expires })}`, expires_at: new Date(expires).toISOString() };
  }

  /** The target of a download token, or null when forged, malformed or expired. */
  async verify(token: string | null, now = Date.now()): Promise<DownloadTarget | null> {
    const t = this.signer.open(token) as (DownloadTarget & { x: unknown }) | null;
    return t && typeof t.x === 'number' && t.x > now ? t : null;
  }

  /** The contact's unsubscribe URL (`{{{RESEND_UNSUBSCRIBE_URL}}}`, List-Unsubscribe). */
  unsubscribeUrl(target: UnsubscribeTarget): string {
    // `k` tells the kinds apart: a download token (kind, x) can never pass as this, nor this as one.
    return `${this.publicUrl}${UNSUBSCRIBE_PATH}${this.signer.seal({ k: 'unsubscribe', t: target.team, c: target.contact, ...(target.email ? { e: target.email } : {}) })}`;
  }

  /** The target of an unsubscribe token, or null when forged or malformed. */
  verifyUnsubscribe(token: string | null): UnsubscribeTarget | null {
    const t = this.signer.open(token) as { k?: unknown; t?: unknown; c?: unknown; e?: unknown } | null;
    if (!t || t.k !== 'unsubscribe' || typeof t.t !== 'string' || typeof t.c !== 'string') return null;
    return typeof t.e === 'string' ? { team: t.t, contact: t.c, email: t.e } : { team: t.t, contact: t.c };
  }
}
