// Tamper-evident tokens for links under `public_url`: a JSON payload in base64url and an
// HMAC-SHA256 of it under one of the install's secrets. Each kind of link names itself in the
// payload (`k`), so a token of one kind never passes as another.
import { createHmac, timingSafeEqual } from 'node:crypto';

export class Signer {
  /** `secret`: 32 random bytes kept in the store (store.secret). */
  constructor(private readonly secret: Buffer) {}

  seal(payload: object): string {
    const text = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return `${text}.${this.sign(text)}`;
  }

  /**
   * The payload of a token whose signature holds, else null. The router hands over null for a
   * path segment that is not valid percent-encoding (`/d/%ZZ`): that is no token either.
   */
  open(token: string | null | undefined): Record<string, unknown> | null {
    if (typeof token !== 'string') return null;
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
