// The dashboard's pages and files (docs/api.md §19.5), and `/`, which sends a browser there.
import type { ApiContext } from '../app';
import { resource, route } from '../platform/route';
import { T } from '../../schemas/common';

const page = { raw: 'text/html', description: 'The dashboard (a page, or one of its files)' };

export const dashboardResource = resource('Dashboard', ({ dashboard }: ApiContext) => [
  route({
    method: 'GET',
    path: '/',
    summary: 'Sends a browser to the dashboard',
    access: 'public',
    hidden: true,
    body: 'none',
    response: { raw: 'redirect', description: 'To /dashboard' },
    handler: () => new Response(null, { status: 302, headers: { location: '/dashboard' } }),
  }),
  route({
    method: 'GET',
    path: '/dashboard',
    summary: 'The dashboard',
    access: 'public',
    hidden: true,
    body: 'none',
    response: page,
    handler: ({ request }) => dashboard.respond('/dashboard', request),
  }),
  route({
    method: 'GET',
    path: '/dashboard/*',
    summary: "The dashboard's pages and files",
    access: 'public',
    hidden: true,
    params: T.Object({ '*': T.String() }),
    body: 'none',
    response: page,
    handler: ({ request }) => dashboard.respond(new URL(request.url).pathname, request),
  }),
]);
