// A contact's topics (docs/api.md §12.8): every topic of the team with the contact's subscription
// (their own choice, or the topic's default), and changes to those choices. The SDK sends the
// changes as a bare array; Resend's reference documents `{ topics: [...] }`: both are taken
// (docs/api.md §2 item 3).
import type { ApiContext } from '../app';
import { idOrEmail, pageQuery, listOf } from '../platform/params';
import { ApiError, errors } from '../../errors';
import { findContact } from '../../contacts';
import { writeOrRefuse } from '../../store';
import { contactTopics, setChoices, topicsChanged } from '../../topics';
import { resource, route } from '../platform/route';
import { validate } from '../../schemas/validate';
import { isObject, List, PageQuery } from '../../schemas/common';
import { ContactParams } from '../../schemas/contacts';
import { ContactTopic, ContactTopicsBody, ContactTopicsUpdated, UpdateContactTopicsRequest } from '../../schemas/topics';

export const contactTopicsResource = resource('Contacts', ({ store, events }: ApiContext) => [
  route({
    method: 'GET',
    path: '/contacts/:id_or_email/topics',
    summary: "List a contact's topics with their subscription",
    access: 'team',
    params: ContactParams,
    query: PageQuery,
    body: 'none',
    response: List(ContactTopic),
    async handler({ caller, params, query }) {
      const q = pageQuery(query);
      const c = await findContact(store, caller.team, idOrEmail(params.id_or_email));
      if (!c) throw errors.notFound('Contact');
      return listOf(await contactTopics(store, c, q));
    },
  }),
  route({
    method: 'PATCH',
    path: '/contacts/:id_or_email/topics',
    summary: "Change a contact's topic subscriptions",
    access: 'team',
    params: ContactParams,
    body: ContactTopicsBody,
    response: ContactTopicsUpdated,
    async handler({ caller, params, body }) {
      const { team } = caller;
      const ref = idOrEmail(params.id_or_email);
      // Either form is checked as `{ topics }`, so the fields are named alike (`topics[0].id`).
      const { topics: choices } = validate(UpdateContactTopicsRequest, Array.isArray(body) ? { topics: body } : isObject(body) ? body : {}, 'body');
      const result = await writeOrRefuse(store, async (tx) => {
        const c = await findContact(tx, team, ref);
        if (!c) return errors.notFound('Contact');
        const changed = await setChoices(tx, team, c.id, choices);
        if (changed instanceof ApiError) return changed;
        await topicsChanged(events, tx, c, changed);
        return { contact: c, topics: await tx.topicChoices.of(team, c.id) };
      });
      const topics = choices.map((ch) => ({ id: ch.id, subscription: result.topics[ch.id] }));
      return { object: 'contact_topics' as const, id: result.contact.id, contact_id: result.contact.id, topics };
    },
  }),
]);
