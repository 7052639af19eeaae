// Webhook endpoints, their events and attempts on the wire (docs/api.md §14.1).
import { Type } from '@sinclair/typebox';
import { Id, List, Nullable, PageQuery, Timestamp, UuidParam, type Static } from './common';

const Events = Type.Array(Type.String(), { error: 'The `events` field must be an array of event types.' });
const Endpoint = Type.String({ error: 'The `endpoint` field must be a URL string.' });
const Status = Type.Union([Type.Literal('enabled'), Type.Literal('disabled')], { error: 'The `status` field must be "enabled" or "disabled".' });

// Posthorn extensions (docs/api.md §14.1): the domains whose events the webhook takes (null or
// empty: all), and the message itself in `email.received` (docs/api.md §14.3).
const DomainIds = Nullable(Type.Array(Type.String(), { error: 'The `domain_ids` field must be an array of domain ids.' }), {
  error: 'The `domain_ids` field must be an array of domain ids.',
});
const IncludeContent = Type.Boolean({ error: 'The `include_content` field must be a boolean.' });
const Extensions = { domain_ids: Type.Optional(DomainIds), include_content: Type.Optional(IncludeContent) };

export const CreateWebhookRequest = Type.Object({ endpoint: Endpoint, events: Events, ...Extensions });
export const UpdateWebhookRequest = Type.Object({
  endpoint: Type.Optional(Endpoint),
  events: Type.Optional(Events),
  status: Type.Optional(Status),
  ...Extensions,
});
export type UpdateWebhookRequest = Static<typeof UpdateWebhookRequest>;

export const WebhookSecret = Type.Object({ object: Type.Literal('webhook'), id: Id, signing_secret: Type.String() });

export const WebhookSummary = Type.Object({
  id: Id,
  created_at: Timestamp,
  status: Type.Union([Type.Literal('enabled'), Type.Literal('disabled')]),
  endpoint: Type.String(),
  events: Type.Array(Type.String()),
});
export type WebhookSummary = Static<typeof WebhookSummary>;

export const Webhook = Type.Composite([
  Type.Object({ object: Type.Literal('webhook') }),
  WebhookSummary,
  Type.Object({
    signing_secret: Type.String(),
    domain_ids: Type.Array(Id, { description: 'Posthorn: the domains whose events it takes; empty for all (docs/api.md §14.1)' }),
    include_content: Type.Boolean({ description: 'Posthorn: `email.received` carries the message (docs/api.md §14.3)' }),
  }),
]);
export type Webhook = Static<typeof Webhook>;

const EventStatus = Type.String({ description: 'Where the event stands: docs/api.md §14.1' });

export const WebhookEventSummary = Type.Object({ id: Type.String({ description: 'msg_…' }), type: Type.String(), created_at: Timestamp, status: EventStatus });
export type WebhookEventSummary = Static<typeof WebhookEventSummary>;

export const WebhookEvent = Type.Composite([
  Type.Object({ object: Type.Literal('webhook_event') }),
  WebhookEventSummary,
  Type.Object({ next_attempt_at: Nullable(Timestamp), payload: Type.Unknown({ description: 'The payload as signed and sent (docs/api.md §14.3)' }) }),
]);
export type WebhookEvent = Static<typeof WebhookEvent>;

export const WebhookAttempt = Type.Object({ id: Id, http_status_code: Nullable(Type.Integer()), response: Type.String(), sent_at: Timestamp });

export const WebhookList = List(WebhookSummary);
export const WebhookEventList = List(WebhookEventSummary);
export const WebhookAttemptList = List(WebhookAttempt);

/** A webhook event id in a path: `msg_` and 27 base62 characters (src/events/webhooks/signing.ts). */
export const WebhookEventParams = Type.Object({
  id: UuidParam('id'),
  event_id: Type.String({
    pattern: '^msg_[0-9A-Za-z]{27}$',
    error: 'The `event_id` must be a valid webhook event id (`msg_…`).',
    errorName: 'invalid_parameter',
  }),
});

/** Webhook events page with `msg_…` cursors; `before` is refused (docs/api.md §14.1). */
export const WebhookEventsQuery = PageQuery;
