// Topics (docs/api.md §12.8): what kinds of email a team sends, and each contact's choice about
// them. A contact without a choice of their own has the topic's default (`opt_in`: receives it
// until they opt out; `opt_out`: only once they opt in). Email scoped to a topic (`topic_id` on
// a send or a broadcast) goes only to recipients whose subscription lets it through — see
// `topicAllows`, read by the sending core when the email is queued.
import type { ContactRec, StoreReader, Subscription, TopicRec, Tx, PageQuery } from '../store';
import type { Events } from '../events';
import { type ApiError, errors } from '../errors';
import { isUuid, newId, nowIso } from '../ids';
import type { ContactTopic, CreateTopicRequest, TopicChoice, UpdateTopicRequest } from '../schemas/topics';

export const MAX_NAME = 50;
export const MAX_DESCRIPTION = 200;

// The fields' types are checked by their schemas (src/schemas/topics.ts); their lengths here.
function name(v: string): string {
  if (v.trim() === '' || v.length > MAX_NAME) throw errors.invalidField('name', `must be 1 to ${MAX_NAME} characters.`);
  return v;
}

function description(v: string | null): string | null {
  if (v !== null && v.length > MAX_DESCRIPTION) throw errors.invalidField('description', `must be at most ${MAX_DESCRIPTION} characters.`);
  return v;
}

/** A topic from a create body (docs/api.md §12.8); throws the documented 422s. */
export function newTopic(team: string, body: CreateTopicRequest): TopicRec {
  // `null` reads as not given (docs/api.md §1.4).
  if (body.name === null) throw errors.missingField('name');
  if (body.default_subscription === null) throw errors.missingField('default_subscription');
  return {
    id: newId(),
    team_id: team,
    created_at: nowIso(),
    name: name(body.name),
    description: body.description === undefined ? null : description(body.description),
    default_subscription: body.default_subscription,
    visibility: body.visibility ?? 'private',
  };
}

/**
 * The fields a PATCH changes. `id` in the body is ignored (the SDK echoes it, docs/api.md §2
 * item 10); `default_subscription` is fixed at creation: repeating it is fine, changing it is a 422.
 */
export function topicChanges(cur: TopicRec, body: UpdateTopicRequest): TopicRec {
  const next = { ...cur };
  if (body.name !== undefined) next.name = name(body.name);
  if (body.description !== undefined) next.description = description(body.description);
  if (body.visibility !== undefined) next.visibility = body.visibility;
  if (body.default_subscription !== undefined && body.default_subscription !== cur.default_subscription)
    throw errors.invalidField('default_subscription', 'cannot be changed after the topic is created.');
  return next;
}

/** `data` of topic.created, topic.updated and topic.deleted (docs/api.md §14.3). */
export function topicEventData(t: TopicRec, deleted = false): Record<string, unknown> {
  return {
    id: t.id,
    name: t.name,
    description: t.description,
    default_subscription: t.default_subscription,
    deleted,
    created_at: t.created_at,
    updated_at: t.updated_at ?? t.created_at,
  };
}

/** In a unit of work: store a new topic (newTopic), with `topic.created`. */
export async function createTopic(events: Events, tx: Tx, t: TopicRec): Promise<void> {
  tx.topics.put(t);
  await events.other(tx, t.team_id, 'topic.created', t.id, topicEventData(t));
}

/** In a unit of work: a PATCH over the stored topic (topicChanges); stored, with `topic.updated`, when it changed anything. */
export async function updateTopic(events: Events, tx: Tx, cur: TopicRec, body: UpdateTopicRequest): Promise<void> {
  const next = topicChanges(cur, body);
  if (next.name === cur.name && next.description === cur.description && next.visibility === cur.visibility) return;
  const updated = { ...next, updated_at: nowIso() };
  tx.topics.put(updated);
  await events.other(tx, cur.team_id, 'topic.updated', cur.id, topicEventData(updated));
}

/** In a unit of work: the topic goes, with the contacts' choices about it, and `topic.deleted`. */
export async function deleteTopic(events: Events, tx: Tx, t: TopicRec): Promise<void> {
  await tx.topicChoices.removeTopic(t.team_id, t.id);
  tx.topics.remove(t.team_id, t.id);
  await events.other(tx, t.team_id, 'topic.deleted', t.id, topicEventData({ ...t, updated_at: nowIso() }, true));
}

/** A team's topic by an id given in a request body, or the 422 naming the field (docs/api.md §1.6). */
export async function topicField(store: StoreReader, team: string, id: unknown, field: string): Promise<TopicRec> {
  const t = typeof id === 'string' && isUuid(id) ? await store.topics.get(team, id.toLowerCase()) : undefined;
  if (!t) throw errors.invalidField(field, 'no topic with this id exists.');
  return t;
}

/**
 * In a unit of work: store a contact's choices, every topic checked first (an unknown one is the
 * 422 naming it, and nothing is written). Resolves with the choices that changed.
 */
export async function setChoices(
  tx: Tx,
  team: string,
  contactId: string,
  choices: TopicChoice[],
  field = 'topics',
): Promise<{ id: string; subscription: Subscription }[] | ApiError> {
  for (const [i, c] of choices.entries())
    if (!isUuid(c.id) || !(await tx.topics.get(team, c.id))) return errors.invalidField(`${field}[${i}].id`, 'no topic with this id exists.');
  const changed: { id: string; subscription: Subscription }[] = [];
  for (const c of choices) {
    if ((await tx.topicChoices.get(team, contactId, c.id)) === c.subscription) continue;
    tx.topicChoices.set(team, contactId, c.id, c.subscription);
    changed.push(c);
  }
  return changed;
}

/** `contact.topics.updated` (docs/api.md §14.3) for choices that changed, in their unit of work. */
export async function topicsChanged(events: Events, tx: Tx, c: ContactRec, changed: { id: string; subscription: Subscription }[]): Promise<void> {
  if (changed.length) await events.other(tx, c.team_id, 'contact.topics.updated', c.id, { id: c.id, email: c.email, topics: changed });
}

/** A contact's subscription to a topic: their own choice, or the topic's default. */
export async function subscriptionOf(store: StoreReader, topic: TopicRec, contactId: string): Promise<Subscription> {
  return (await store.topicChoices.get(topic.team_id, contactId, topic.id)) ?? topic.default_subscription;
}

/** A page of the team's topics with one contact's subscription to each (GET /contacts/{id}/topics). */
export async function contactTopics(store: StoreReader, c: ContactRec, q: PageQuery) {
  const choices = await store.topicChoices.of(c.team_id, c.id);
  return store.topics.page(
    c.team_id,
    q,
    20,
    (t): ContactTopic => ({
      id: t.id,
      name: t.name,
      description: t.description,
      subscription: choices[t.id] ?? t.default_subscription,
    }),
  );
}

/**
 * May email scoped to `topic` go to `address`? A contact gets it when subscribed (their choice or
 * the default) and not unsubscribed from everything; an address that is no contact only when the
 * topic is opt-in by default (docs/api.md §7.1).
 */
export async function topicAllows(store: StoreReader, topic: TopicRec, address: string): Promise<boolean> {
  const c = await store.contacts.find('email', address.toLowerCase(), topic.team_id);
  if (!c) return topic.default_subscription === 'opt_in';
  return !c.unsubscribed && (await subscriptionOf(store, topic, c.id)) === 'opt_in';
}
