// Custom events on the wire (docs/api.md §23): definitions (a name and the schema of a payload) and
// a send for a contact. The types of the fields are checked here; what needs their meaning — a
// reserved or taken name, the payload's size and its fields against the definition, a contact that
// exists, an address — and the required fields given as null are src/automations/custom-events.ts.
import { Type } from '@sinclair/typebox';
import { AnyRecord, Deleted, Id, List, Nullable, Timestamp, UUID, type Static } from './common';
import { OneOf } from './literals';

const invalid = (field: string, why: string) => `Invalid \`${field}\` field: ${why}`;

/** Types a definition gives its payload fields (docs/api.md §23.2). */
export const EVENT_FIELD_TYPES = ['string', 'number', 'boolean', 'date'] as const;

/** A field name → its type; null: no schema (docs/api.md §23.2). */
const EventSchema = Nullable(
  AnyRecord(OneOf(EVENT_FIELD_TYPES, { error: invalid('{field}', 'must be `string`, `number`, `boolean` or `date`.') }), {
    description: 'At most 50 fields; names of 1 to 100 ASCII letters, digits, `_` or `-`',
  }),
  { error: invalid('schema', 'must be an object of field names and types (`string`, `number`, `boolean`, `date`), or null.') },
);

/** POST /events. */
export const CreateEventRequest = Type.Object({
  name: Nullable(
    // 1 to 256 characters, not all white space, no control characters.
    Type.String({ maxLength: 256, pattern: '^(?=[\\s\\S]*\\S)[^\\u0000-\\u001f]*$' }),
    { error: invalid('name', 'must be 1 to 256 characters without control characters.'), description: 'Not `resend:…`, not a UUID, not `send`' },
  ),
  schema: Type.Optional(EventSchema),
});
export type CreateEventRequest = Static<typeof CreateEventRequest>;

/** PATCH /events/{id_or_name}: the schema only (null clears it); the name is fixed. */
export const UpdateEventRequest = Type.Object({ schema: EventSchema });
export type UpdateEventRequest = Static<typeof UpdateEventRequest>;

/** POST /events/send: the event, exactly one of `contact_id` and `email`, and its payload (docs/api.md §23.3). */
export const SendEventRequest = Type.Object({
  event: Nullable(Type.String({ minLength: 1 }), { error: invalid('event', 'must be the name of an event.') }),
  contact_id: Type.Optional(Nullable(Type.String({ pattern: UUID }), { error: invalid('contact_id', 'must be the id of a contact.') })),
  email: Type.Optional(Nullable(Type.String(), { error: 'Invalid `email` field. The email address needs to follow the `email@example.com` format.' })),
  payload: Type.Optional(
    Nullable(AnyRecord(Type.Unknown()), { error: invalid('payload', 'must be an object.'), description: 'At most 64 KB as JSON; coerced to the schema' }),
  ),
});
export type SendEventRequest = Static<typeof SendEventRequest>;

export const EventParams = Type.Object({ id_or_name: Type.String({ description: 'An event definition id, or its name' }) });

const summaryFields = {
  id: Id,
  name: Type.String(),
  schema: Nullable(AnyRecord(OneOf(EVENT_FIELD_TYPES))),
  created_at: Timestamp,
  updated_at: Nullable(Timestamp),
};

/** An item of GET /events (docs/api.md §23.1). */
export const EventSummary = Type.Object(summaryFields);
export type EventSummary = Static<typeof EventSummary>;

export const EventDefinition = Type.Object({ object: Type.Literal('event'), ...summaryFields });
export type EventDefinition = Static<typeof EventDefinition>;

export const EventList = List(EventSummary);

export const EventRef = Type.Object({ object: Type.Literal('event'), id: Id });
export const EventDeleted = Deleted('event');

/** 202: the trigger is committed (docs/api.md §23.3). */
export const EventSent = Type.Object({ object: Type.Literal('event'), event: Type.String() });
