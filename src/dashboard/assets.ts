// The dashboard as HTTP responses: the page shell for every dashboard path (the app routes in the
// browser), and the bundled files under /dashboard/assets/ with hashed names. Every response
// carries the security headers of docs/api.md §19.5: a Content-Security-Policy without inline
// script, no framing, no referrer to other sites.
import { createHash } from 'node:crypto';
import { bundleWeb, type BuiltFile } from './bundle';

export const ASSET_PREFIX = '/dashboard/assets/';

/**
 * `img-src` admits http(s) images only so that an email's preview can show its remote images when
 * asked: the preview's sandboxed frame adds its own stricter policy until then. Inline styles are
 * allowed for the same preview (email HTML is styled inline); scripts never are.
 */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: https: http:",
  "font-src 'self'",
  "connect-src 'self'",
  "frame-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': CSP,
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
  'cross-origin-opener-policy': 'same-origin',
};

interface Loaded {
  shell: string;
  files: Map<string, BuiltFile & { etag: string }>;
}

export class DashboardAssets {
  private loaded?: Promise<Loaded>;

  private load(): Promise<Loaded> {
    this.loaded ??= bundleWeb().then((built) => {
      const files = new Map(built.map((f) => [f.name, { ...f, etag: `"${createHash('sha256').update(f.body).digest('base64url').slice(0, 22)}"` }]));
      // The entry (main-…js); chunks (chunk-…js) are imported by it.
      const js = built.find((f) => f.name.startsWith('main-') && f.name.endsWith('.js'))!;
      const css = built.filter((f) => f.name.endsWith('.css'));
      return {
        shell: shell(
          js.name,
          css.map((f) => f.name),
        ),
        files,
      };
    });
    this.loaded.catch(() => (this.loaded = undefined));
    return this.loaded;
  }

  /** Build (or load) the bundle now, so the first page view does not wait for it. */
  async warm(): Promise<void> {
    await this.load();
  }

  async respond(path: string, request: Request): Promise<Response> {
    const { shell, files } = await this.load();
    if (path.startsWith(ASSET_PREFIX)) {
      const file = files.get(path.slice(ASSET_PREFIX.length));
      if (!file) return new Response('Not found', { status: 404, headers: { ...SECURITY_HEADERS, 'content-type': 'text/plain' } });
      const headers = { ...SECURITY_HEADERS, 'content-type': file.type, etag: file.etag, 'cache-control': 'public, max-age=31536000, immutable' };
      if (request.headers.get('if-none-match') === file.etag) return new Response(null, { status: 304, headers });
      return new Response(file.body as Uint8Array<ArrayBuffer>, { headers });
    }
    return new Response(shell, { headers: { ...SECURITY_HEADERS, 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' } });
  }
}

function shell(js: string, css: string[]): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Posthorn</title>
<link rel="icon" href="${ASSET_PREFIX}icon.svg" type="image/svg+xml">
${css.map((c) => `<link rel="stylesheet" href="${ASSET_PREFIX}${c}">`).join('\n')}
<script type="module" src="${ASSET_PREFIX}${js}"></script>
</head>
<body>
<div id="app"></div>
<noscript>The Posthorn dashboard needs JavaScript.</noscript>
</body>
</html>
`;
}
