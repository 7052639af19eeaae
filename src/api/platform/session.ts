// The dashboard's session cookie on the wire (docs/api.md §19.1): HttpOnly, SameSite=Lax, Path=/,
// Secure whenever Posthorn is reached over https (directly or behind a TLS proxy named by
// `public_url`). Bun's CookieMap and Cookie parse and serialise (RFC 6265).
import { CSRF_HEADER, SESSION_COOKIE, type Sessions, type SignedIn } from '../../accounts/sessions';
import { errors } from '../../errors';

export function readCookie(req: Request, name: string): string | null {
  const header = req.headers.get('cookie');
  if (!header) return null;
  return new Bun.CookieMap(header).get(name) ?? null;
}

/** Whether cookies must be Secure: the request came over https, or the public URL is https. */
export function overHttps(req: Request, publicUrl: string): boolean {
  return req.url.startsWith('https:') || publicUrl.startsWith('https:');
}

export function setCookie(name: string, value: string, opts: { maxAgeMs: number; secure: boolean; path?: string }): string {
  return new Bun.Cookie(name, value, {
    path: opts.path ?? '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: opts.secure,
    maxAge: Math.floor(opts.maxAgeMs / 1000),
  }).serialize();
}

export function clearCookie(name: string, secure: boolean, path = '/'): string {
  return setCookie(name, '', { maxAgeMs: 0, secure, path });
}

export function sessionToken(req: Request): string | null {
  return readCookie(req, SESSION_COOKIE);
}

/**
 * The session of a request: the cookie together with its CSRF header (docs/api.md §19.2), or the
 * documented 401 — without a cookie `not_signed_in`, without the header `missing_csrf_token`,
 * otherwise `session_expired`.
 */
export async function requireSession(sessions: Sessions, req: Request): Promise<SignedIn> {
  const token = sessionToken(req);
  if (!token) throw errors.notSignedIn();
  const csrf = req.headers.get(CSRF_HEADER);
  const signedIn = await sessions.authenticate(token, csrf);
  if (!signedIn) throw csrf ? errors.sessionEnded() : errors.missingCsrf();
  return signedIn;
}
