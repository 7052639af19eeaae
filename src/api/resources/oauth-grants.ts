// OAuth grants (docs/api.md §22): the grants third-party OAuth clients hold on the team. Posthorn
// issues none — the dashboard signs in with passwords, TOTP and OpenID Connect as a client, never as
// an authorization server — so the list is always empty and every grant id is unknown.
import { pageQuery, listOf } from '../platform/params';
import { errors } from '../../errors';
import { resource, route } from '../platform/route';
import { IgnoredBody, List, PageQuery, T, UuidParams } from '../../schemas/common';

/** The SDK's `OAuthGrant`: never present, since Posthorn issues no grants. */
const Grant = T.Object({
  id: T.String(),
  client_id: T.String(),
  scopes: T.Array(T.String()),
  created_at: T.String(),
  revoked_at: T.Union([T.String(), T.Null()]),
  revoked_reason: T.Union([T.String(), T.Null()]),
  client: T.Object({ name: T.String(), logo_uri: T.Union([T.String(), T.Null()]) }),
});
const Revoked = T.Object({ object: T.Literal('oauth_grant'), id: T.String(), revoked_at: T.String(), revoked_reason: T.String() });

export const oauthGrantsResource = resource('OAuth grants', () => [
  route({
    method: 'GET',
    path: '/oauth/grants',
    summary: "List the team's OAuth grants (Posthorn issues none)",
    access: 'team',
    query: PageQuery,
    body: 'none',
    response: List(Grant),
    handler({ query }) {
      // Pagination is checked as on every list (docs/api.md §4), though there is nothing to page.
      pageQuery(query);
      return listOf({ has_more: false, data: [] });
    },
  }),
  route({
    method: 'DELETE',
    path: '/oauth/grants/:id',
    summary: 'Revoke an OAuth grant (Posthorn issues none: 404)',
    access: 'team',
    params: UuidParams('id'),
    body: IgnoredBody,
    response: Revoked,
    handler() {
      throw errors.notFound('OAuth grant');
    },
  }),
]);
