// Signed links under `public_url` (api-reference §7.7, §8): usable without an API key, valid for
// a limited time, tamper-evident (HMAC-SHA256 over the payload with a per-install secret).
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Secrets } from '../store/secrets';

export const DOWNLOAD_TTL_MS = 3_600_000;

export interface DownloadTarget {
  /** What to serve: a sent email's attachment, a received email's attachment or raw message. */
  kind: 'sent-attachment' | 'received-attachment' | 'received-raw';
  team: string;
  email: string;
  attachment?: string;
}

export class SignedLinks {
  constructor(private readonly secrets: Secrets, private readonly publicUrl: string) {}

  async download(target: DownloadTarget, now = Date.now()): Promise<{ download_url: string; expires_at: string }> {
    const expires = now + DOWNLOAD_TTL_MS;
    const payload = Buffer.from(JSON.stringify({ ...target, x: expires })).toString('base64url');
    const sig = await this.sign(payload);
    return { download_url: `${this.publicUrl}/d/${payload}.${sig}`, expires_at: new Date(expires).toISOString() };
  }

  /** The target of a download token, or null when forged, malformed or expired. */
  async verify(token: string, now = Date.now()): Promise<DownloadTarget | null> {
    const dot = token.indexOf('.');
    if (dot < 0) return null;
    const payload = token.slice(0, dot);
    // Compare the text, not decoded bytes: base64url's last character carries spare bits, so
    // several spellings decode alike and only the canonical one may pass.
    const given = Buffer.from(token.slice(dot + 1));
    const expected = Buffer.from(await this.sign(payload));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    try {
      const t = JSON.parse(Buffer.from(payload, 'base64url').toString()) as DownloadTarget & { x: number };
      return typeof t.x === 'number' && t.x > now ? t : null;
    } catch {
      return null;
    }
  }

  private async sign(payload: string): Promise<string> {
    return createHmac('sha256', await this.secrets.get('links')).update(payload).digest('base64url');
  }
}
