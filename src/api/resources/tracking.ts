// GET /t/o/{token} (the open pixel) and GET /t/c/{token} (the click redirect), public: the signed
// token is the authority (docs/mail.md §6). A token that does not verify answers 404 and never
// redirects anywhere (no open redirect); a good click answers 302 to exactly the URL that was in
// the email. Neither waits for the hit to be committed (tracking/hits.ts).
import type { ApiContext } from '../app';
import { TrackingLinks } from '../../links/tracking';
import { TrackingHits } from '../../tracking/hits';
import { clientIp } from '../platform/context';
import { errors } from '../../errors';
import { resource, route } from '../platform/route';
import { TokenParams } from '../../schemas/common';

/** A transparent 1×1 GIF (GIF89a), the smallest image every mail client shows. */
export const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

const NO_STORE = { 'cache-control': 'no-store, no-cache, must-revalidate, private', pragma: 'no-cache' };

export const trackingResource = resource('Tracking', (svc: ApiContext) => {
  const links = new TrackingLinks(svc.store.secret('tracking'));
  const hits = new TrackingHits(svc);
  const requestOf = (request: Request) => ({ method: request.method, userAgent: request.headers.get('user-agent') ?? '', ip: clientIp(request) });

  return [
    route({
      method: 'GET',
      path: '/t/o/:token',
      summary: 'Open-tracking pixel',
      access: 'public',
      params: TokenParams,
      body: 'none',
      response: { raw: 'image/gif', description: 'A transparent 1×1 GIF' },
      async handler({ params, request }) {
        const t = links.verifyOpen(params.token);
        if (!t) throw errors.notFound('Link');
        await hits.open(t, requestOf(request));
        return new Response(PIXEL, { headers: { 'content-type': 'image/gif', ...NO_STORE } });
      },
    }),
    route({
      method: 'GET',
      path: '/t/c/:token',
      summary: 'Click-tracking redirect',
      access: 'public',
      params: TokenParams,
      body: 'none',
      response: { raw: 'redirect', description: 'To the URL that was in the email' },
      async handler({ params, request }) {
        const t = links.verifyClick(params.token);
        if (!t) throw errors.notFound('Link');
        await hits.click(t, requestOf(request));
        // The URL as written; characters a header cannot carry (non-ASCII, spaces) percent-encoded as UTF-8,
        // which is what a browser following the original href sends.
        const location = t.url.replace(/[^\x21-\x7e]+/g, (m) => encodeURIComponent(m));
        return new Response(null, { status: 302, headers: { location, ...NO_STORE, 'referrer-policy': 'no-referrer' } });
      },
    }),
  ];
});
