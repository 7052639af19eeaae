// Resend's documented webhook payloads (docs/api.md §14.3), as schemas a delivery is checked
// against: every field of the kind's payload, of its type, and nothing else. Each schema is held to
// the official SDK's type of that event at compile time (`npm run typecheck` fails when Resend's
// documented shape and this one disagree), so checking a delivery against it is checking it
// against Resend's shape.
//
//   expect(payloadErrors('contact.created', hook.payload)).toEqual([]);
import { Type, type Static, type TObject, type TProperties } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type {
  ContactCreatedEvent,
  ContactDeletedEvent,
  DomainCreatedEvent,
  DomainDeletedEvent,
  DomainUpdatedEvent,
  EmailFailedEvent,
  EmailReceivedEvent,
  EmailScheduledEvent,
  EmailSuppressedEvent,
  SuppressionAddedEvent,
  SuppressionRemovedEvent,
  TopicCreatedEvent,
  TopicDeletedEvent,
  TopicUpdatedEvent,
} from 'resend';

const Str = Type.String();
/** An object with exactly these fields. */
const Exact = <P extends TProperties>(p: P): TObject<P> => Type.Object(p, { additionalProperties: false });
const Envelope = <K extends string, D extends TObject>(type: K, data: D) => Exact({ type: Type.Literal(type), created_at: Str, data });

const emailBase = {
  broadcast_id: Type.Optional(Str),
  created_at: Str,
  email_id: Str,
  message_id: Str,
  from: Str,
  to: Type.Array(Str),
  subject: Str,
  template_id: Type.Optional(Str),
  tags: Type.Optional(Type.Record(Str, Str)),
};
const Contact = Exact({
  id: Str,
  audience_id: Str,
  segment_ids: Type.Array(Str),
  created_at: Str,
  updated_at: Str,
  email: Str,
  first_name: Type.Optional(Type.Union([Str, Type.Null()])),
  last_name: Type.Optional(Type.Union([Str, Type.Null()])),
  unsubscribed: Type.Boolean(),
});
const Domain = Exact({
  id: Str,
  name: Str,
  status: Str,
  created_at: Str,
  region: Str,
  records: Type.Array(Exact({ record: Str, name: Str, type: Str, ttl: Str, status: Str, value: Str, priority: Type.Optional(Type.Number()) })),
});
const Suppression = Exact({
  id: Str,
  email: Str,
  origin: Type.Union([Type.Literal('bounce'), Type.Literal('complaint'), Type.Literal('manual')]),
  source_id: Type.Union([Str, Type.Null()]),
  created_at: Str,
});
const Topic = Exact({
  id: Str,
  name: Str,
  description: Type.Union([Str, Type.Null()]),
  default_subscription: Type.Union([Type.Literal('opt_in'), Type.Literal('opt_out')]),
  deleted: Type.Boolean(),
  created_at: Str,
  updated_at: Str,
});
const receivedFields = {
  email_id: Str,
  created_at: Str,
  from: Str,
  to: Type.Array(Str),
  bcc: Type.Array(Str),
  cc: Type.Array(Str),
  received_for: Type.Array(Str),
  message_id: Str,
  subject: Str,
};
const receivedAttachment = {
  id: Str,
  filename: Type.Union([Str, Type.Null()]),
  content_type: Str,
  content_disposition: Type.Union([Str, Type.Null()]),
  content_id: Type.Union([Str, Type.Null()]),
};

export const PAYLOADS = {
  'email.scheduled': Envelope('email.scheduled', Exact(emailBase)),
  'email.failed': Envelope('email.failed', Exact({ ...emailBase, failed: Exact({ reason: Str }) })),
  'email.suppressed': Envelope('email.suppressed', Exact({ ...emailBase, suppressed: Exact({ message: Str, type: Str }) })),
  'email.received': Envelope('email.received', Exact({ ...receivedFields, attachments: Type.Array(Exact(receivedAttachment)) })),
  'contact.created': Envelope('contact.created', Contact),
  'contact.deleted': Envelope('contact.deleted', Contact),
  'domain.created': Envelope('domain.created', Domain),
  'domain.updated': Envelope('domain.updated', Domain),
  'domain.deleted': Envelope('domain.deleted', Domain),
  'suppression.added': Envelope('suppression.added', Suppression),
  'suppression.removed': Envelope('suppression.removed', Suppression),
  'topic.created': Envelope('topic.created', Topic),
  'topic.updated': Envelope('topic.updated', Topic),
  'topic.deleted': Envelope('topic.deleted', Topic),
};

/**
 * `email.received` to a webhook with `include_content` (Posthorn, docs/api.md §14.3): Resend's
 * payload, its attachments with their links, and the message.
 */
const Link = { download_url: Str, expires_at: Str };
export const RECEIVED_WITH_CONTENT = Envelope(
  'email.received',
  Exact({
    ...receivedFields,
    attachments: Type.Array(Exact({ ...receivedAttachment, size: Type.Number(), ...Link })),
    text: Type.Union([Str, Type.Null()]),
    html: Type.Union([Str, Type.Null()]),
    headers: Type.Record(Str, Str),
    raw: Exact(Link),
    truncated: Type.Array(Type.Union([Type.Literal('text'), Type.Literal('html'), Type.Literal('headers')])),
  }),
);

// Compile time: each schema is the SDK's type of its event.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Is<K extends keyof typeof PAYLOADS, T> = Same<Static<(typeof PAYLOADS)[K]>, T>;
const sameAsTheSdk: [
  Is<'email.scheduled', EmailScheduledEvent>,
  Is<'email.failed', EmailFailedEvent>,
  Is<'email.suppressed', EmailSuppressedEvent>,
  Is<'email.received', EmailReceivedEvent>,
  Is<'contact.created', ContactCreatedEvent>,
  Is<'contact.deleted', ContactDeletedEvent>,
  Is<'domain.created', DomainCreatedEvent>,
  Is<'domain.updated', DomainUpdatedEvent>,
  Is<'domain.deleted', DomainDeletedEvent>,
  Is<'suppression.added', SuppressionAddedEvent>,
  Is<'suppression.removed', SuppressionRemovedEvent>,
  Is<'topic.created', TopicCreatedEvent>,
  Is<'topic.updated', TopicUpdatedEvent>,
  Is<'topic.deleted', TopicDeletedEvent>,
] = [true, true, true, true, true, true, true, true, true, true, true, true, true, true];
export const HELD_TO_THE_SDK = sameAsTheSdk.every(Boolean);

/** Where `payload` departs from the documented shape of its kind: `<path>: <why>` each, none when it conforms. */
export function payloadErrors(kind: keyof typeof PAYLOADS | 'email.received+content', payload: unknown): string[] {
  const schema = kind === 'email.received+content' ? RECEIVED_WITH_CONTENT : PAYLOADS[kind];
  return [...Value.Errors(schema, payload)].map((e) => `${e.path || '/'}: ${e.message}`);
}
