// Topics (docs/api.md §12.8): what kinds of email a team sends, and each contact's choice about
// them. A contact without a choice of their own has the topic's default (`opt_in`: receives it
// until they opt out; `opt_out`: only once they opt in). Email scoped to a topic (`topic_id` on
// a send or a broadcast) goes only to recipients whose subscription lets it through — see
// `topicAllows`, read by the sending core when the email is queued.
import type { ContactRec, StoreReader, Subscription, TopicRec, Tx, PageQuery } from '../store';
import type { Events } from '../events';
import { type ApiError, errors } from '../errors';
import { isUuid, newId, nowIso } from '../ids';

export const MAX_NAME = 50;
export const MAX_DESCRIPTION = 200;
const SUBSCRIPTIONS = ['opt_in', 'opt_out'];
const VISIBILITIES = ['public', 'private'];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export const topicView = (t: TopicRec) => ({
  object: 'topic' as const,
  id: t.id,
  name: t.name,
  description: t.description,
  default_subscription: t.default_subscription,
  visibility: t.visibility,
  created_at: t.created_at,
});

function name(v: unknown): string {
  if (typeof v !== 'string') throw errors.invalidField('name', 'must be a string.');
  if (v.trim() === '' || v.length > MAX_NAME) throw errors.invalidField('name', `must be 1 to ${MAX_NAME} characters.`);
  return v;
}

function description(v: unknown): string | null {
  if (v === null) return null;
  if (typeof v !== 'string') throw errors.invalidField('description', 'must be a string.');
  if (v.length > MAX_DESCRIPTION) throw errors.invalidField('description', `must be at most ${MAX_DESCRIPTION} characters.`);
  return v;
}

function oneOf<T extends string>(field: string, v: unknown, values: string[]): T {
  if (typeof v !== 'string' || !values.includes(v)) throw errors.invalidField(field, `must be ${values.map((x) => `\`${x}\``).join(' or ')}.`);
  return v as T;
}

/** A topic from a create body (docs/api.md §12.8); throws the documented 422s. */
export function newTopic(team: string, body: Record<string, unknown>): TopicRec {
  if (body.name === undefined || body.name === null) throw errors.missingField('name');
  if (body.default_subscription === undefined || body.default_subscription === null) throw errors.missingField('default_subscription');
  return {
    id: newId(),
    team_id: team,
    created_at: nowIso(),
    name: name(body.name),
    description: body.description === undefined ? null : description(body.description),
    default_subscription: oneOf<Subscription>('default_subscription', body.default_subscription, SUBSCRIPTIONS),
    visibility: body.visibility === undefined ? 'private' : oneOf<'public' | 'private'>('visibility', body.visibility, VISIBILITIES),
  };
}

/**
 * The fields a PATCH changes. `id` in the body is ignored (the SDK echoes it, docs/api.md §2
 * item 10); `default_subscription` is fixed at creation: repeating it is fine, changing it is a 422.
 */
export function topicChanges(cur: TopicRec, body: Record<string, unknown>): TopicRec {
  const next = { ...cur };
  if (body.name !== undefined) next.name = name(body.name);
  if (body.description !== undefined) next.description = description(body.description);
  if (body.visibility !== undefined) next.visibility = oneOf('visibility', body.visibility, VISIBILITIES);
  if (body.default_subscription !== undefined && body.default_subscription !== cur.default_subscription)
    throw errors.invalidField('default_subscription', 'cannot be changed after the topic is created.');
  return next;
}

/** A team's topic by an id given in a request body, or the 422 naming the field (docs/api.md §1.6). */
export async function topicField(store: StoreReader, team: string, id: unknown, field: string): Promise<TopicRec> {
  const t = typeof id === 'string' && isUuid(id) ? await store.topics.get(team, id.toLowerCase()) : undefined;
  if (!t) throw errors.invalidField(field, 'no topic with this id exists.');
  return t;
}

/** Topic choices as a request gives them: `[{id, subscription}]` (checked for shape, not existence). */
export function choicesField(value: unknown, field = 'topics'): { id: string; subscription: Subscription }[] {
  if (!Array.isArray(value)) throw errors.invalidField(field, 'must be an array of `{ id, subscription }` objects.');
  return value.map((item, i) => {
    if (!isObject(item)) throw errors.invalidField(`${field}[${i}]`, 'must be an object with `id` and `subscription`.');
    if (item.id === undefined) throw errors.missingField(`${field}[${i}].id`);
    if (typeof item.id !== 'string') throw errors.invalidField(`${field}[${i}].id`, 'must be a string.');
    if (item.subscription === undefined) throw errors.missingField(`${field}[${i}].subscription`);
    return { id: item.id.toLowerCase(), subscription: oneOf<Subscription>(`${field}[${i}].subscription`, item.subscription, SUBSCRIPTIONS) };
  });
}

/**
 * In a unit of work: store a contact's choices, every topic checked first (an unknown one is the
 * 422 naming it, and nothing is written). Resolves with the choices that changed.
 */
export async function setChoices(
  tx: Tx,
  team: string,
  contactId: string,
  choices: { id: string; subscription: Subscription }[],
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
  return store.topics.page(c.team_id, q, 20, (t) => ({
    id: t.id,
    name: t.name,
    description: t.description,
    subscription: choices[t.id] ?? t.default_subscription,
  }));
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
