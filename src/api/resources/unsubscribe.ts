// GET / POST /u/{token}: the unsubscribe link of broadcast emails (docs/api.md §13.4,
// docs/mail.md §6), public (no API key; the signed token is the authority). GET shows the
// preference page; POST is the page's preferences form, or else RFC 8058 one-click (body
// `List-Unsubscribe=One-Click`, form-encoded or multipart) which unsubscribes from everything.
// app.ts leaves these bodies to the route, which reads at most a few kilobytes of them.
import type { App, ApiContext } from '../app';
import { SignedLinks } from '../../links/signed';
import { readBounded } from '../../net/stream';
import {
  linkedContact,
  unsubscribe,
  preferences,
  preferencesForm,
  preferencesPage,
  savePreferences,
  donePage,
  invalidLinkPage,
} from '../../tracking/unsubscribe';

/** A preferences form names a few topic ids; anything longer is no form of ours. */
const MAX_FORM_BYTES = 64 * 1024;

export function unsubscribeRoutes(app: App, svc: ApiContext) {
  const links = new SignedLinks(svc.store.secret('links'), svc.config.public_url);
  const detail = (summary: string) => ({ summary, tags: ['Unsubscribe'], security: [] });

  app.get(
    '/u/:token',
    async ({ params }) => {
      const t = links.verifyUnsubscribe(params.token);
      const c = t && (await linkedContact(svc, t));
      return c ? preferencesPage(c, await preferences(svc, c)) : invalidLinkPage();
    },
    { detail: detail('Preference page: topics and unsubscribing') },
  );

  app.post(
    '/u/:token',
    async ({ params, request }) => {
      const t = links.verifyUnsubscribe(params.token);
      if (!t) return invalidLinkPage();
      const bytes = await readBounded(request.body, MAX_FORM_BYTES, true);
      const chosen = preferencesForm(request.headers.get('content-type'), Buffer.from(bytes ?? []).toString('utf8'));
      if (chosen) {
        if (!(await savePreferences(svc, t, chosen))) return invalidLinkPage();
        const c = await linkedContact(svc, t);
        return c ? preferencesPage(c, await preferences(svc, c), true) : invalidLinkPage();
      }
      if (!(await unsubscribe(svc, t))) return invalidLinkPage();
      const c = await linkedContact(svc, t);
      return c ? donePage(c) : invalidLinkPage();
    },
    { detail: detail('Save preferences, or unsubscribe from everything (RFC 8058 one-click)') },
  );
}
