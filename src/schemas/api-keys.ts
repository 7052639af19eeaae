// API keys on the wire (docs/api.md §10). What a key may do (`permission`, `domain_id`) is checked
// by src/accounts/api-keys.ts: an unknown permission is Resend's `invalid_access`, not a field error.
import { Type } from '@sinclair/typebox';
import { Id, List, Nullable, Timestamp, type Static } from './common';

const Name = Type.String({ maxLength: 50, error: 'The `name` field must be a string of at most 50 characters.' });

/** POST /api-keys, and `posthorn keys create`. */
export const CreateApiKeyRequest = Type.Object({
  name: Name,
  permission: Type.Optional(Type.String({ description: '`full_access` (the default) or `sending_access`' })),
  domain_id: Type.Optional(Nullable(Type.String(), { description: 'A `sending_access` key only: the one domain it may send from' })),
  // Posthorn: a key carries at most its maker's role (docs/api.md §10); ask for less, e.g. a read-only `viewer` key.
  role: Type.Optional(
    Type.Union([Type.Literal('viewer'), Type.Literal('member'), Type.Literal('admin'), Type.Literal('owner')], {
      error: 'Invalid `role` field: use "owner", "admin", "member" or "viewer".',
      description: 'Posthorn: the most the key may do; by default, and at most, the role of whoever makes it',
    }),
  ),
});
export type CreateApiKeyRequest = Static<typeof CreateApiKeyRequest>;

export const RenameApiKeyRequest = Type.Object({ name: Name });

/** The token is shown once, here. */
export const ApiKeyCreated = Type.Object({ object: Type.Literal('api_key'), id: Id, token: Type.String() });

export const ApiKeySummary = Type.Object({ id: Id, name: Type.String(), created_at: Timestamp, last_used_at: Nullable(Timestamp) });
export type ApiKeySummary = Static<typeof ApiKeySummary>;

export const ApiKeyList = List(ApiKeySummary);
