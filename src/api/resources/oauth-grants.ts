// OAuth grants (docs/api.md §22): the grants third-party OAuth clients hold on the team. Posthorn
// issues none — the dashboard signs in with passwords, TOTP and OpenID Connect as a client, never as
// an authorization server — so the list is always empty and every grant id is unknown.
import type { App } from '../app';
import { pageQuery, pathId, listOf } from '../platform/params';
import { errors } from '../../errors';

const tags = ['OAuth grants'];

export function oauthGrantsRoutes(app: App) {
  app.get(
    '/oauth/grants',
    ({ query }) => {
      // Pagination is checked as on every list (docs/api.md §4), though there is nothing to page.
      pageQuery(query);
      return listOf({ has_more: false, data: [] });
    },
    { detail: { summary: "List the team's OAuth grants (Posthorn issues none)", tags } },
  );

  app.delete(
    '/oauth/grants/:id',
    ({ params }) => {
      pathId(params.id);
      throw errors.notFound('OAuth grant');
    },
    { detail: { summary: 'Revoke an OAuth grant (Posthorn issues none: 404)', tags } },
  );
}
