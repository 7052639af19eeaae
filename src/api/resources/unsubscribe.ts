// GET / POST /u/{token}: the unsubscribe link of broadcast emails (docs/api.md §13.4,
// docs/mail.md §6), public (no API key; the signed token is the authority). GET shows the
// preference page; POST is the page's preferences form, or else RFC 8058 one-click (body
// `List-Unsubscribe=One-Click`, form-encoded or multipart) which unsubscribes from everything.
// The route reads the form itself (`body: 'stream'`), at most a few kilobytes of it.
import type { ApiContext } from '../app';
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
import { resource, route } from '../platform/route';
import { TokenParams } from '../../schemas/common';

/** A preferences form names a few topic ids; anything longer is no form of ours. */
const MAX_FORM_BYTES = 64 * 1024;

export const unsubscribeResource = resource('Unsubscribe', (svc: ApiContext) => {
  const { links } = svc;
  const page = { raw: 'text/html', description: 'The page' };
  return [
    route({
      method: 'GET',
      path: '/u/:token',
      summary: 'Preference page: topics and unsubscribing',
      access: 'public',
      params: TokenParams,
      body: 'none',
      response: page,
      async handler({ params }) {
        const t = links.verifyUnsubscribe(params.token);
        const c = t && (await linkedContact(svc, t));
        return c ? preferencesPage(c, await preferences(svc, c)) : invalidLinkPage();
      },
    }),
    route({
      method: 'POST',
      path: '/u/:token',
      summary: 'Save preferences, or unsubscribe from everything (RFC 8058 one-click)',
      access: 'public',
      params: TokenParams,
      body: 'stream',
      response: page,
      async handler({ params, request }) {
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
    }),
  ];
});
