// Topics and a contact's topics on the wire (docs/api.md §12.8). The types of fields are checked
// here; lengths (a name's blank check counts trimmed), `null` for a required field (read as not
// given, §1.4) and whether a topic exists are src/topics'.
import { Type } from '@sinclair/typebox';
import { Id, Nullable, Timestamp, type Static } from './common';

const subscriptions = [Type.Literal('opt_in'), Type.Literal('opt_out')];
const visibilities = [Type.Literal('public'), Type.Literal('private')];

/** `opt_in` (receives the topic's email until opting out) or `opt_out` (only once opted in). */
const Subscription = Type.Union(subscriptions, { error: 'Invalid `{field}` field: must be `opt_in` or `opt_out`.' });
const Visibility = Type.Union(visibilities, { error: 'Invalid `{field}` field: must be `public` or `private`.' });
const NameText = 'Invalid `name` field: must be a string.';
const Name = Type.String({ error: NameText, description: '1 to 50 characters' });
const Description = Nullable(Type.String({ description: 'At most 200 characters' }), { error: 'Invalid `description` field: must be a string.' });

/** A topic id in a body, read lowercase; whether the team has it is checked when it is used. */
const TopicId = Type.Transform(Type.String({ error: 'Invalid `{field}` field: must be a string.', description: 'A topic id' }))
  .Decode((v) => v.toLowerCase())
  .Encode((v) => v);

/** A contact's choice about a topic, as POST /contacts, PATCH /contacts/{x}/topics and imports take it. */
export const TopicChoice = Type.Object(
  { id: TopicId, subscription: Subscription },
  { error: 'Invalid `{field}` field: must be an object with `id` and `subscription`.' },
);
export const TopicChoices = Type.Array(TopicChoice, { error: 'Invalid `{field}` field: must be an array of `{ id, subscription }` objects.' });
export type TopicChoice = Static<typeof TopicChoice>;

export const CreateTopicRequest = Type.Object({
  name: Nullable(Name, { error: NameText }),
  description: Type.Optional(Description),
  default_subscription: Nullable(Subscription, { error: 'Invalid `default_subscription` field: must be `opt_in` or `opt_out`.' }),
  visibility: Type.Optional(Visibility),
});
export type CreateTopicRequest = Static<typeof CreateTopicRequest>;

/** `id` is ignored (the SDK echoes it, docs/api.md §2 item 10). */
export const UpdateTopicRequest = Type.Object({
  name: Type.Optional(Name),
  description: Type.Optional(Description),
  visibility: Type.Optional(Visibility),
  /** Fixed at creation: the same value again is fine, any other is refused (src/topics). */
  default_subscription: Type.Optional(Type.Unknown({ description: 'The value given at creation (it cannot change)' })),
});
export type UpdateTopicRequest = Static<typeof UpdateTopicRequest>;

export const Topic = Type.Object({
  object: Type.Literal('topic'),
  id: Id,
  name: Type.String(),
  description: Nullable(Type.String()),
  default_subscription: Type.Union(subscriptions),
  visibility: Type.Union(visibilities),
  created_at: Timestamp,
});
export type Topic = Static<typeof Topic>;

/** An item of GET /contacts/{id_or_email}/topics: every topic with the contact's subscription (their choice, or the default). */
export const ContactTopic = Type.Object({ id: Id, name: Type.String(), description: Nullable(Type.String()), subscription: Type.Union(subscriptions) });
export type ContactTopic = Static<typeof ContactTopic>;

/**
 * PATCH /contacts/{id_or_email}/topics: the SDK sends the choices as a bare array, Resend's
 * reference documents `{ topics: [...] }` (docs/api.md §2 item 3). The route reads either and
 * checks it as `UpdateContactTopicsRequest`, so that fields are named `topics[0].id` in both.
 */
export const ContactTopicsBody = Type.Unknown({ description: 'An array of `{ id, subscription }`, or `{ "topics": [...] }` (docs/api.md §2 item 3)' });
export const UpdateContactTopicsRequest = Type.Object({ topics: TopicChoices });

/** `id` is what the SDK's type reads; `contact_id` and `topics` what Resend's reference lists. */
export const ContactTopicsUpdated = Type.Object({
  object: Type.Literal('contact_topics'),
  id: Id,
  contact_id: Id,
  topics: Type.Array(Type.Object({ id: Id, subscription: Type.Union(subscriptions) })),
});
