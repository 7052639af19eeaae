// The preference page behind the unsubscribe link of broadcast emails (docs/api.md §13.4,
// docs/mail.md §6). Every broadcast email names the contact's signed link in List-Unsubscribe
// (RFC 2369) with List-Unsubscribe-Post (RFC 8058). A GET only shows the page — link scanners and
// prefetchers follow GETs, so a GET must never change anything (RFC 8058 §1). The page lists the
// team's public topics with the contact's subscription to each, to change and save, and a button
// that unsubscribes from everything. A POST is the RFC 8058 one-click unsubscribe (from
// everything) unless it is the page's own preferences form. The pages are self-contained: no
// scripts, no external assets.
import { writeOrRefuse, type ContactRec, type StoreReader, type Subscription, type TopicRec, type Tx } from '../store';
import type { UnsubscribeTarget } from '../links/signed';
import { ApiError, errors } from '../errors';
import { nowIso } from '../ids';
import { updateContact, findContact, contactChanged, type ContactDeps } from '../contacts';
import { setChoices, topicsChanged } from '../topics';

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

/** The public topics of the contact's team with the contact's subscription to each, by name. */
export async function preferences(
  deps: Pick<ContactDeps, 'store'> | { store: StoreReader },
  c: ContactRec,
): Promise<{ topic: TopicRec; subscription: Subscription }[]> {
  const choices = await deps.store.topicChoices.of(c.team_id, c.id);
  return (await deps.store.topics.all(c.team_id))
    .filter((t) => t.visibility === 'public')
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((topic) => ({ topic, subscription: choices[topic.id] ?? topic.default_subscription }));
}

/**
 * The preferences form: every public topic ticked is `opt_in`, every other one `opt_out`; a
 * contact unsubscribed from everything who saves it is subscribed again. In one unit of work,
 * with `contact.topics.updated` and `contact.updated` for what changed. False when the contact is gone.
 */
export async function savePreferences(deps: ContactDeps, t: UnsubscribeTarget, chosen: Set<string>): Promise<boolean> {
  const { store, events } = deps;
  try {
    await writeOrRefuse(store, async (tx) => {
      const c = await findContact(tx, t.team, { id: t.contact });
      if (!c) return errors.notFound('Contact');
      // Only what differs from the contact's subscription now becomes a choice of theirs.
      const current = await preferences({ ...deps, store: tx }, c);
      const wanted = current.map(
        ({ topic, subscription }) => ({ id: topic.id, now: subscription, subscription: chosen.has(topic.id) ? 'opt_in' : 'opt_out' }) as const,
      );
      const changed = await setChoices(
        tx,
        t.team,
        c.id,
        wanted.filter((x) => x.subscription !== x.now).map(({ id, subscription }) => ({ id, subscription })),
      );
      if (changed instanceof ApiError) return changed;
      await topicsChanged(events, tx, c, changed);
      const next = { ...c, unsubscribed: false, updated_at: nowIso() };
      if (await contactChanged(events, tx, c, next)) tx.contacts.put(next);
    });
    return true;
  } catch (e) {
    if (e instanceof ApiError && e.statusCode === 404) return false;
    throw e;
  }
}

/** The preferences form's body (application/x-www-form-urlencoded), or null when the POST is something else. */
export function preferencesForm(contentType: string | null, body: string): Set<string> | null {
  if (!contentType?.toLowerCase().startsWith('application/x-www-form-urlencoded')) return null;
  const form = new URLSearchParams(body);
  return form.get('action') === 'preferences' ? new Set(form.getAll('topic')) : null;
}

// Pages.

const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;color:#1f2328;background:#f6f8fa;margin:0;padding:48px 16px}' +
  'main{max-width:420px;margin:0 auto;background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:32px}' +
  'h1{font-size:20px;margin:0 0 12px}p{margin:0 0 20px}' +
  'button{font:inherit;background:#1f2328;color:#fff;border:0;border-radius:6px;padding:10px 18px;cursor:pointer}' +
  'button.quiet{background:#fff;color:#1f2328;border:1px solid #d0d7de}ul{list-style:none;padding:0;margin:0 0 20px}li{margin:0 0 10px}' +
  'small{color:#59636e}hr{border:0;border-top:1px solid #d0d7de;margin:24px 0}';

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
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
      'x-content-type-options': 'nosniff',
    },
  });
}

/**
 * GET (and after saving): the contact's public topics as checkboxes, saved by one form, and the
 * button that unsubscribes from everything (it posts the RFC 8058 body to the same URL).
 */
export function preferencesPage(c: ContactRec, topics: { topic: TopicRec; subscription: Subscription }[], saved = false): Response {
  const note = saved
    ? '<p role="status"><strong>Your preferences are saved.</strong></p>'
    : c.unsubscribed
      ? '<p>You are unsubscribed from everything. Saving your preferences subscribes you again to the topics you choose.</p>'
      : '';
  const list = topics
    .map(({ topic, subscription }) => {
      const id = `t-${topic.id}`;
      const desc = topic.description ? `<br><small>${escapeHtml(topic.description)}</small>` : '';
      const checked = subscription === 'opt_in' && !c.unsubscribed ? ' checked' : '';
      return `<li><input type="checkbox" name="topic" value="${topic.id}" id="${id}"${checked}> <label for="${id}">${escapeHtml(topic.name)}</label>${desc}</li>`;
    })
    .join('');
  const form = topics.length
    ? `<form method="post"><input type="hidden" name="action" value="preferences"><ul>${list}</ul><button type="submit">Save preferences</button></form><hr>`
    : '';
  const all = c.unsubscribed
    ? ''
    : `<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit" class="quiet">Unsubscribe from everything</button></form>`;
  return page(200, 'Email preferences', `<p>Choose what <strong>${escapeHtml(c.email)}</strong> receives.</p>${note}${form}${all}`);
}

export function donePage(c: ContactRec): Response {
  return page(200, 'You are unsubscribed', `<p><strong>${escapeHtml(c.email)}</strong> will no longer receive these emails.</p>`);
}

export function invalidLinkPage(): Response {
  return page(404, 'Link not valid', '<p>This unsubscribe link is not valid, or the address it was for no longer exists.</p>');
}
