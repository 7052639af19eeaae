// A contact's topics (docs/api.md §12.8): every topic of the team with the contact's subscription
// (their own choice, or the topic's default), and changes to those choices. The SDK sends the
// changes as a bare array; Resend's reference documents `{ topics: [...] }`: both are taken
// (docs/api.md §2 item 3).
import type { App, ApiContext } from '../app';
import { caller } from '../platform/context';
import { idOrEmail, pageQuery, listOf } from '../platform/params';
import { ApiError, errors } from '../../errors';
import { findContact } from '../../contacts';
import { writeOrRefuse } from '../../store';
import { choicesField, contactTopics, setChoices, topicsChanged } from '../../topics';

const tags = ['Contacts'];

export function contactTopicsRoutes(app: App, svc: ApiContext) {
  const { store, events } = svc;

  app.get(
    '/contacts/:id_or_email/topics',
    async ({ request, params, query }) => {
      const { team } = caller(request);
      const q = pageQuery(query);
      const c = await findContact(store, team, idOrEmail(params.id_or_email));
      if (!c) throw errors.notFound('Contact');
      return listOf(await contactTopics(store, c, q));
    },
    { detail: { summary: "List a contact's topics with their subscription", tags } },
  );

  app.patch(
    '/contacts/:id_or_email/topics',
    async ({ request, params, body }) => {
      const { team } = caller(request);
      const ref = idOrEmail(params.id_or_email);
      const given = Array.isArray(body) ? body : (body as { topics?: unknown } | undefined)?.topics;
      if (given === undefined) throw errors.missingField('topics');
      const choices = choicesField(given);
      const result = await writeOrRefuse(store, async (tx) => {
        const c = await findContact(tx, team, ref);
        if (!c) return errors.notFound('Contact');
        const changed = await setChoices(tx, team, c.id, choices);
        if (changed instanceof ApiError) return changed;
        await topicsChanged(events, tx, c, changed);
        return { contact: c, topics: await tx.topicChoices.of(team, c.id) };
      });
      const topics = choices.map((ch) => ({ id: ch.id, subscription: result.topics[ch.id] }));
      // `id` is what the SDK's type reads; `contact_id` and `topics` what Resend's reference lists.
      return { object: 'contact_topics', id: result.contact.id, contact_id: result.contact.id, topics };
    },
    { detail: { summary: "Change a contact's topic subscriptions", tags } },
  );
}
