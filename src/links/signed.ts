// Signed links under `public_url` (docs/api.md §7.7, §8, §13.4): usable without an API key,
// tamper-evident (HMAC-SHA256 over the payload with a per-install secret). Download links expire;
// unsubscribe links do not (they sit in mailboxes for years, RFC 8058 §3.2).
import { createHmac, timingSafeEqual } from 'node:crypto';

export const DOWNLOAD_TTL_MS = 3_600_000;

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
}

export class SignedLinks {
  /** `secret`: the install's link secret (32 random bytes kept in the store). */
  constructor(private readonly secret: Buffer, private readonly publicUrl: string) {}

  async download(target: DownloadTarget, now = Date.now()): Promise<{ download_url: string; expires_at: string }> {
    const expires = now + DOWNLOAD_TTL_MS;
    return { download_url: `${this.publicUrl}/d/${this.token({ ...target, x: expires })}`, expires_at: new Date(expires).toISOString() };
  }

  /** The target of a download token, or null when forged, malformed or expired. */
  async verify(token: string, now = Date.now()): Promise<DownloadTarget | null> {
    const t = this.open(token) as (DownloadTarget & { x: unknown }) | null;
    return t && typeof t.x === 'number' && t.x > now ? t : null;
  }

  /** The contact's unsubscribe URL (`{{{RESEND_UNSUBSCRIBE_URL}}}`, List-Unsubscribe). */
  unsubscribeUrl(target: UnsubscribeTarget): string {
    // `k` tells the kinds apart: a download token (kind, x) can never pass as this, nor this as one.
    return `${this.publicUrl}/u/${this.token({ k: 'unsubscribe', t: target.team, c: target.contact })}`;
  }

  /** The target of an unsubscribe token, or null when forged or malformed. */
  verifyUnsubscribe(token: string): UnsubscribeTarget | null {
    const t = this.open(token) as { k?: unknown; t?: unknown; c?: unknown } | null;
    return t && t.k === 'unsubscribe' && typeof t.t === 'string' && typeof t.c === 'string' ? { team: t.t, contact: t.c } : null;
  }

  private token(payload: object): string {
    const text = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return `${text}.${this.sign(text)}`;
  }

  /** The payload of a token whose signature holds, else null. */
  private open(token: string): Record<string, unknown> | null {
    const dot = token.indexOf('.');
    if (dot < 0) return null;
    const payload = token.slice(0, dot);
    // Compare the text, not decoded bytes: base64url's last character carries spare bits, so
    // several spellings decode alike and only the canonical one may pass.
    const given = Buffer.from(token.slice(dot + 1));
    const expected = Buffer.from(this.sign(payload));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    try {
      const t = JSON.parse(Buffer.from(payload, 'base64url').toString()) as unknown;
      return t !== null && typeof t === 'object' && !Array.isArray(t) ? (t as Record<string, unknown>) : null;
    } catch {
      return null;
    }
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.secret).update(payload).digest('base64url');
  }
}
