// Contact properties on the wire (docs/api.md §12.7). Responses use `created_at` and
// `fallback_value`: the SDK renames exactly these (docs/api.md §2 item 11). A key's format and a
// type's name are checked here; reserved keys, a fallback of the property's type, `null` for a
// required field (read as not given, §1.4) and a key's uniqueness are src/contacts/properties.ts'.
import { Type } from '@sinclair/typebox';
import { Id, Nullable, Timestamp, type Static } from './common';

const KeyText = 'Invalid `key` field: must be 1 to 50 letters, digits or underscores.';
const TypeText = 'Invalid `type` field: must be `string` or `number`.';
const Key = Type.String({ pattern: '^[A-Za-z0-9_]+$', maxLength: 50, error: KeyText });
const types = [Type.Literal('string'), Type.Literal('number')];
/** A string or a number, as the property's type says, or null. */
const Fallback = Type.Unknown({ description: "A value of the property's type, or null" });

export const CreateContactPropertyRequest = Type.Object({
  key: Nullable(Key, { error: KeyText }),
  type: Nullable(Type.Union(types), { error: TypeText }),
  fallback_value: Type.Optional(Fallback),
});
export type CreateContactPropertyRequest = Static<typeof CreateContactPropertyRequest>;

/** Only `fallback_value` changes (null clears it); `key` and `type` may be repeated, not changed. */
export const UpdateContactPropertyRequest = Type.Object({
  key: Type.Optional(Type.Unknown({ description: 'The key given at creation (it cannot change)' })),
  type: Type.Optional(Type.Unknown({ description: 'The type given at creation (it cannot change)' })),
  fallback_value: Type.Optional(Fallback),
});
export type UpdateContactPropertyRequest = Static<typeof UpdateContactPropertyRequest>;

export const ContactProperty = Type.Object({
  object: Type.Literal('contact_property'),
  id: Id,
  key: Type.String(),
  type: Type.Union(types),
  fallback_value: Nullable(Type.Union([Type.String(), Type.Number()])),
  created_at: Timestamp,
});
export type ContactProperty = Static<typeof ContactProperty>;
