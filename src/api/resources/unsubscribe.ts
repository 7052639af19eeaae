// GET / POST /u/{token}: the unsubscribe link of broadcast emails (docs/api.md §13.4), public
// (no API key; the signed token is the authority). GET shows a confirmation page; POST is RFC 8058
// one-click (body `List-Unsubscribe=One-Click`, form-encoded — not read: the token says it all, and
// app.ts leaves these bodies to the route) or the page's button.
import type { App, ApiContext } from '../app';
import { SignedLinks } from '../../links/signed';
import { linkedContact, unsubscribe, confirmPage, donePage, invalidLinkPage } from '../../tracking/unsubscribe';

export function unsubscribeRoutes(app: App, svc: ApiContext) {
  const links = new SignedLinks(svc.store.secret('links'), svc.config.public_url);
  const detail = (summary: string) => ({ summary, tags: ['Unsubscribe'], security: [] });

  app.get(
    '/u/:token',
    async ({ params }) => {
      const t = links.verifyUnsubscribe(params.token);
      const c = t && (await linkedContact(svc, t));
      return c ? confirmPage(c) : invalidLinkPage();
    },
    { detail: detail('Unsubscribe confirmation page') },
  );

  app.post(
    '/u/:token',
    async ({ params }) => {
      const t = links.verifyUnsubscribe(params.token);
      if (!t || !(await unsubscribe(svc, t))) return invalidLinkPage();
      const c = await linkedContact(svc, t);
      return c ? donePage(c) : invalidLinkPage();
    },
    { detail: detail('Unsubscribe (RFC 8058 one-click)') },
  );
}
