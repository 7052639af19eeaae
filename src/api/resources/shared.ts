// GET /s/{token}: the read-only page of a shared email (docs/api.md §7.10), public (no API key; the
// signed, expiring token is the authority). Tampered, expired or gone → a 404 page.
import type { App, ApiContext } from '../app';
import { SignedLinks } from '../../links/signed';
import { sharedEmailPage, invalidSharePage } from '../../sharing';

export function sharedRoutes(app: App, svc: ApiContext) {
  const links = new SignedLinks(svc.store.secret('links'), svc.config.public_url);
  app.get(
    '/s/:token',
    async ({ params }) => {
      const t = links.verifyShare(params.token);
      return (t && (await sharedEmailPage(svc.store, links, t))) ?? invalidSharePage();
    },
    { detail: { summary: 'A shared email: a read-only page through a signed link', tags: ['Emails'], security: [] } },
  );
}
