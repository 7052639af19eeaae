// Unsubscribing from broadcasts (docs/api.md §13.4, docs/mail.md §6). Every broadcast email
// names the contact's signed link in List-Unsubscribe (RFC 2369) with List-Unsubscribe-Post
// (RFC 8058). A GET only shows a confirmation page — link scanners and prefetchers follow GETs, so
// a GET must never unsubscribe (RFC 8058 §1); the one-click POST, or the page's button, does. The
// pages are self-contained: no scripts, no external assets.
import type { ContactRec, Tx } from '../store';
import type { UnsubscribeTarget } from '../links/signed';
import { ApiError } from '../errors';
import { updateContact, findContact, type ContactDeps } from '../contacts';

const escapeHtml = Bun.escapeHTML;

/** The contact a verified link names, if it still exists. */
export function linkedContact(deps: ContactDeps, t: UnsubscribeTarget): Promise<ContactRec | undefined> {
  return findContact(deps.store, t.team, { id: t.contact });
}

/**
 * Set `unsubscribed: true` through the contact update path, so `contact.updated` fires — once:
 * unsubscribing an unsubscribed contact changes nothing and emits nothing. False when the contact
 * is gone.
 */
export async function unsubscribe(deps: ContactDeps, t: UnsubscribeTarget): Promise<boolean> {
  try {
    // The email the link came in counts the unsubscribe (metrics), in the same unit of work.
    const email = t.email;
    const counted = email
      ? async (tx: Tx) => {
          const rec = await tx.emails.get(t.team, email);
          if (rec) await deps.events.unsubscribed(tx, rec);
        }
      : undefined;
    await updateContact(deps, t.team, { id: t.contact }, { unsubscribed: true }, undefined, counted);
    return true;
  } catch (e) {
    if (e instanceof ApiError && e.statusCode === 404) return false;
    throw e;
  }
}

// Pages.

const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;color:#1f2328;background:#f6f8fa;margin:0;padding:48px 16px}' +
  'main{max-width:420px;margin:0 auto;background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:32px}' +
  'h1{font-size:20px;margin:0 0 12px}p{margin:0 0 20px}' +
  'button{font:inherit;background:#1f2328;color:#fff;border:0;border-radius:6px;padding:10px 18px;cursor:pointer}';

function page(status: number, title: string, body: string): Response {
  const html =
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>` +
    `<body><main><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`;
  return new Response(html, {
    status,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      // The token is in the URL: never hand it on, nor let the page be framed or run anything.
      'referrer-policy': 'no-referrer',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
      'x-content-type-options': 'nosniff',
    },
  });
}

/** GET: ask before unsubscribing; the button posts the RFC 8058 body to the same URL. */
export function confirmPage(c: ContactRec): Response {
  if (c.unsubscribed) return donePage(c);
  return page(
    200,
    'Unsubscribe',
    `<p>Stop sending emails to <strong>${escapeHtml(c.email)}</strong>?</p>` +
      `<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>`,
  );
}

export function donePage(c: ContactRec): Response {
  return page(200, 'You are unsubscribed', `<p><strong>${escapeHtml(c.email)}</strong> will no longer receive these emails.</p>`);
}

export function invalidLinkPage(): Response {
  return page(404, 'Link not valid', '<p>This unsubscribe link is not valid, or the address it was for no longer exists.</p>');
}
