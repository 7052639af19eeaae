// The dashboard's pages and files (docs/api.md §19.5), and `/`, which sends a browser there.
import type { App, ApiContext } from '../app';

export function dashboardRoutes(app: App, { dashboard }: ApiContext) {
  app.get('/', () => new Response(null, { status: 302, headers: { location: '/dashboard' } }), { detail: { hide: true } });
  app.get('/dashboard', ({ request }) => dashboard.respond('/dashboard', request), { detail: { hide: true } });
  app.get('/dashboard/*', ({ request }) => dashboard.respond(new URL(request.url).pathname, request), { detail: { hide: true } });
}
