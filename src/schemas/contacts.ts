// Contacts on the wire (docs/api.md §12): the top-level `/contacts` routes, segment memberships and
// the legacy audience-scoped routes of SDK ≤ 6.3. The types of fields are checked here; an email
// address's format, property values against the team's definitions (src/contacts/properties.ts)
// and whether the segments and topics named exist are src/contacts'.
import { Type } from '@sinclair/typebox';
import { AnyRecord, ExportQuery, Id, IdOrEmail, Nullable, PageQuery, Timestamp, UuidParam, type Static } from './common';
import { TopicChoices } from './topics';

const Name = Nullable(Type.String(), { error: 'The `{field}` field must be a string or null.' });
const Email = Type.String({ error: 'The `email` field must be a string.' });
const Unsubscribed = Type.Boolean({ error: 'The `unsubscribed` field must be a boolean.' });
/** Keys of the team's contact properties; `null` removes a value (docs/api.md §12.7). */
const Properties = AnyRecord(Type.Unknown(), { error: 'The `properties` field must be an object of property keys and values.' });

// Fields the legacy routes take (docs/api.md §12.2, §12.4); the top-level ones take more.
const changes = {
  first_name: Type.Optional(Name),
  last_name: Type.Optional(Name),
  unsubscribed: Type.Optional(Unsubscribed),
  properties: Type.Optional(Properties),
};

/** What an update may set (both route families, the unsubscribe link, automations): a missing key keeps the stored value. */
export const UpdateContactRequest = Type.Object({ email: Type.Optional(Email), ...changes });
export type UpdateContactRequest = Static<typeof UpdateContactRequest>;

/** PATCH /audiences/{id}/contacts/{id_or_email}: `email` is not for this route (dropped). */
export const LegacyUpdateContactRequest = Type.Object(changes);
export const LegacyCreateContactRequest = Type.Object({ email: Email, ...changes });

/**
 * A segment named by POST /contacts: `[{id}]` (SDK) or `[id]` (Resend spec). An object without an
 * `id` is refused by the route with this wording too (a required `id` would be reported missing).
 */
const SegmentRef = Type.Union([Type.String(), Type.Object({ id: Type.Optional(Type.String()) })], {
  error: 'The `{field}` field must be a segment id or an object with an `id`.',
});

export const CreateContactRequest = Type.Object({
  email: Email,
  ...changes,
  segments: Type.Optional(Type.Array(SegmentRef, { error: 'The `segments` field must be an array.' })),
  /** One more segment (docs/api.md §2 item 9). */
  audience_id: Type.Optional(Type.String({ error: 'The `audience_id` field must be a string.' })),
  topics: Type.Optional(TopicChoices),
});
export type CreateContactRequest = Static<typeof CreateContactRequest>;

const SegmentFilter = Type.Optional(Type.String({ description: "Only this segment's contacts (a UUID)" }));
const ContactSearch = Type.Optional(Type.String({ description: 'Posthorn: text in the email or the name (at most 200 characters)' }));

export const ContactListQuery = Type.Composite([
  PageQuery,
  Type.Object({
    segment_id: SegmentFilter,
    audience_id: Type.Optional(Type.String({ description: 'The legacy name of `segment_id`' })),
    q: ContactSearch,
  }),
]);

/** GET /contacts/export (docs/api.md §4.1): both filters apply together. */
export const ContactExportQuery = Type.Composite([Type.Object({ segment_id: SegmentFilter, q: ContactSearch }), ExportQuery]);

export const ContactParams = Type.Object({ id_or_email: IdOrEmail });
export const ContactSegmentParams = Type.Object({ id_or_email: IdOrEmail, segment_id: UuidParam('segment_id') });
export const AudienceContactParams = Type.Object({ id: UuidParam('id'), id_or_email: IdOrEmail });

export const ContactSummary = Type.Object({
  id: Id,
  email: Type.String(),
  first_name: Nullable(Type.String()),
  last_name: Nullable(Type.String()),
  created_at: Timestamp,
  unsubscribed: Type.Boolean(),
});
export type ContactSummary = Static<typeof ContactSummary>;

const PropertyType = Type.Union([Type.Literal('string'), Type.Literal('number')]);

/** GET /contacts/{id_or_email}: `properties` holds the contact's values of the team's properties (docs/api.md §12.3). */
export const Contact = Type.Composite([
  Type.Object({ object: Type.Literal('contact') }),
  ContactSummary,
  Type.Object({ properties: AnyRecord(Type.Object({ value: Type.Union([Type.String(), Type.Number()]), type: PropertyType })) }),
]);
export type Contact = Static<typeof Contact>;

/** `contact` is the contact's id, or the path value when nothing matched (docs/api.md §12.5). */
export const ContactDeleted = Type.Object({ object: Type.Literal('contact'), contact: Type.String(), deleted: Type.Literal(true) });

// Resend's shapes (docs/api.md §12.1): adding answers the segment as `id`; removing names the
// contact as `id` and the segment as `audienceId` (sic, camelCase).
export const ContactSegmentAdded = Type.Object({ object: Type.Literal('contact_segment'), id: Id, contact_id: Id, segment_id: Id });
export const ContactSegmentRemoved = Type.Object({
  object: Type.Literal('contact_segment'),
  id: Id,
  audienceId: Id,
  contact_id: Id,
  segment_id: Id,
  deleted: Type.Literal(true),
});
