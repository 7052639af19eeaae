// Broadcasts on the wire (docs/api.md §13). The types of fields are checked here; addresses, the
// segment and topic named, `segment_id` given once with its alias `audience_id`, `scheduled_at`
// only with `send: true`, and the state rules are src/broadcasts'.
import { Type } from '@sinclair/typebox';
import { Id, Nullable, PageQuery, Timestamp, type Static } from './common';

const Text = (field: string) => Type.String({ error: `The \`${field}\` field must be a string.` });
const NullableText = (field: string) => Nullable(Type.String(), { error: `The \`${field}\` field must be a string.` });

/** Content fields of a create and an update (an update takes any subset, docs/api.md §13.2). */
const content = {
  name: Type.Optional(NullableText('name')),
  segment_id: Type.Optional(Text('segment_id')),
  /** The deprecated alias of `segment_id`. */
  audience_id: Type.Optional(Text('audience_id')),
  from: Text('from'),
  subject: Text('subject'),
  reply_to: Type.Optional(
    Type.Union([Type.String(), Type.Array(Type.String()), Type.Null()], { error: 'The `reply_to` field must be a string or an array of strings.' }),
  ),
  preview_text: Type.Optional(NullableText('preview_text')),
  html: Type.Optional(NullableText('html')),
  text: Type.Optional(NullableText('text')),
  topic_id: Type.Optional(NullableText('topic_id')),
};
const ScheduledAt = Type.Optional(NullableText('scheduled_at'));
/** Posthorn: send even though the review holds the broadcast (docs/api.md §13.6). */
const Review = Type.Optional(
  Type.Literal('accepted', { error: 'The `review` field must be `accepted`.', description: 'Posthorn: send despite the review findings (docs/api.md §13.6)' }),
);

export const CreateBroadcastRequest = Type.Object({
  ...content,
  send: Type.Optional(Type.Boolean({ error: 'The `send` field must be a boolean.' })),
  scheduled_at: ScheduledAt,
  review: Review,
});
export type CreateBroadcastRequest = Static<typeof CreateBroadcastRequest>;

export const UpdateBroadcastRequest = Type.Partial(Type.Object(content));
/** The content fields a create or an update gives. */
export type BroadcastInput = Static<typeof UpdateBroadcastRequest>;

export const SendBroadcastRequest = Type.Object({ scheduled_at: ScheduledAt, review: Review });
export const BroadcastSent = Type.Object({ id: Id });

/** draft → (scheduled) → queued → sent; `canceled`: stopped while being sent (docs/api.md §13.3). */
const Status = Type.Union([Type.Literal('draft'), Type.Literal('scheduled'), Type.Literal('queued'), Type.Literal('sent'), Type.Literal('canceled')]);

/** An item of GET /broadcasts; `audience_id` always equals `segment_id`. */
export const BroadcastSummary = Type.Object({
  id: Id,
  name: Nullable(Type.String()),
  audience_id: Id,
  segment_id: Id,
  status: Status,
  created_at: Timestamp,
  scheduled_at: Nullable(Timestamp),
  sent_at: Nullable(Timestamp),
});
export type BroadcastSummary = Static<typeof BroadcastSummary>;

/** GET /broadcasts/{id}. */
export const Broadcast = Type.Object({
  object: Type.Literal('broadcast'),
  id: Id,
  name: Nullable(Type.String()),
  audience_id: Id,
  segment_id: Id,
  from: Type.String(),
  subject: Type.String(),
  reply_to: Nullable(Type.Array(Type.String())),
  preview_text: Nullable(Type.String()),
  html: Nullable(Type.String()),
  text: Nullable(Type.String()),
  status: Status,
  created_at: Timestamp,
  scheduled_at: Nullable(Timestamp),
  sent_at: Nullable(Timestamp),
  topic_id: Nullable(Id),
  delivery_forecast: Type.Optional(
    Type.Object(
      {
        pending: Type.Integer({ description: 'Recipients not yet delivered (pending or delayed)' }),
        completes_at: Timestamp,
      },
      {
        description:
          "Posthorn (docs/api.md §19.17): only while a sent broadcast's recipients wait on the warm-up allowances of its pool's sending IPs — when the last is expected to have gone",
      },
    ),
  ),
});
export type Broadcast = Static<typeof Broadcast>;

/** `type` and `bounce_type` are checked by src/analytics/broadcasts.ts (`type` empty is missing; `bounce_type` only with `type=bounced`). */
export const RecipientsQuery = Type.Composite([
  PageQuery,
  Type.Object({
    type: Type.Optional(Type.String({ description: 'Required: sent, delivered, opened, clicked, bounced, complained, unsubscribed or suppressed' })),
    email: Type.Optional(Type.String({ description: 'One recipient address' })),
    bounce_type: Type.Optional(Type.String({ description: 'With `type=bounced`: permanent, transient or undetermined' })),
  }),
]);
export type RecipientsQuery = Static<typeof RecipientsQuery>;

/** One recipient that reached the state asked for (docs/api.md §13.5). */
export const BroadcastRecipient = Type.Object({
  /** The email's id. */
  id: Id,
  contact_id: Nullable(Id),
  email: Type.String(),
  /** Opened, clicked. */
  count: Type.Optional(Type.Integer()),
  /** Clicked. */
  clicked_links: Type.Optional(Type.Array(Type.Object({ url: Type.String(), clicks: Type.Integer() }))),
  /** Bounced. */
  bounce_type: Type.Optional(Type.Union([Type.Literal('permanent'), Type.Literal('transient'), Type.Literal('undetermined')])),
});
export type BroadcastRecipient = Static<typeof BroadcastRecipient>;

/** `id` is an opaque cursor (64 hex digits) for `after`/`before`, naming no entity. */
export const ClickedLink = Type.Object({ id: Type.String(), url: Type.String(), clicks: Type.Integer(), unique_clicks: Type.Integer() });
export type ClickedLink = Static<typeof ClickedLink>;

/**
 * POST /broadcasts/{id}/cancel: `{object, id}` for a scheduled broadcast (back to draft); one
 * stopped while being sent adds its status and its emails' counts (docs/api.md §13.3).
 */
export const BroadcastCanceled = Type.Object({
  object: Type.Literal('broadcast'),
  id: Id,
  status: Type.Optional(Type.Literal('canceled')),
  /** Its emails not canceled: they had left the delivery queue (delivered, bounced, suppressed, being tried). */
  sent: Type.Optional(Type.Integer({ minimum: 0 })),
  /** Its emails taken out of the delivery queue, their recipient `canceled`. */
  canceled: Type.Optional(Type.Integer({ minimum: 0 })),
});
export type BroadcastCanceled = Static<typeof BroadcastCanceled>;

/** POST /broadcasts/{id}/test (Posthorn, docs/api.md §13.7): 1 to 5 addresses. */
export const TestBroadcastRequest = Type.Object({
  to: Type.Union([Type.String(), Type.Array(Type.String(), { minItems: 1, maxItems: 5 })], {
    error: 'Invalid `to` field: a test goes to 1 to 5 addresses, a string or an array of strings.',
  }),
});
export type TestBroadcastRequest = Static<typeof TestBroadcastRequest>;

/** The test's emails, one per address, in the order given. */
export const BroadcastTestSent = Type.Object({
  object: Type.Literal('broadcast_test'),
  /** The broadcast's id. */
  id: Id,
  emails: Type.Array(Type.Object({ id: Id, to: Type.String() })),
});
export type BroadcastTestSent = Static<typeof BroadcastTestSent>;
