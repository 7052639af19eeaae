// GET /s/{token}: the read-only page of a shared email (docs/api.md §7.10), public (no API key; the
// signed, expiring token is the authority). Tampered, expired or gone → a 404 page.
import type { ApiContext } from '../app';
import { sharedEmailPage, invalidSharePage } from '../../sharing';
import { resource, route } from '../platform/route';
import { TokenParams } from '../../schemas/common';

export const sharedResource = resource('Emails', ({ store, links }: ApiContext) => [
  route({
    method: 'GET',
    path: '/s/:token',
    summary: 'A shared email: a read-only page through a signed link',
    access: 'public',
    params: TokenParams,
    body: 'none',
    response: { raw: 'text/html', description: 'The page' },
    async handler({ params }) {
      const t = links.verifyShare(params.token);
      return (t && (await sharedEmailPage(store, links, t))) ?? invalidSharePage();
    },
  }),
]);
