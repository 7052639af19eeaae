// The dashboard's session cookie on the wire (docs/api.md §19.1): HttpOnly, SameSite=Lax, Path=/,
// Secure whenever Posthorn is reached over https (directly or behind a TLS proxy named by
// `public_url`). Bun's CookieMap and Cookie parse and serialise (RFC 6265).
import { SESSION_COOKIE } from '../../accounts/sessions';

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
