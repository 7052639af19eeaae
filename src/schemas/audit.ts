// The team's audit log on the wire (docs/api.md §19.11).
import { Type } from '@sinclair/typebox';
import { AnyRecord, Id, Nullable, Timestamp, type Static } from './common';

export const AuditEntry = Type.Object({
  object: Type.Literal('audit_log_entry'),
  id: Id,
  created_at: Timestamp,
  /** What was done, e.g. `api_key.created`, `member.role_changed`, `auth.sign_in_failed`. */
  action: Type.String(),
  /** Who: a user (`label`: their email), an API key (`label`: its name), or the command line. */
  actor: Type.Object({
    type: Type.Union([Type.Literal('user'), Type.Literal('key'), Type.Literal('cli')]),
    id: Nullable(Id),
    label: Nullable(Type.String()),
  }),
  /** Through the dashboard (a session), the API (a key) or the command line. */
  via: Type.Union([Type.Literal('dashboard'), Type.Literal('api'), Type.Literal('cli')]),
  /** The client's address. */
  ip: Nullable(Type.String()),
  target: Nullable(Type.Object({ type: Type.String(), id: Nullable(Type.String()) })),
  /** The request's fields (never a secret), or why a sign-in failed. */
  details: Nullable(AnyRecord(Type.Unknown())),
});
export type AuditEntry = Static<typeof AuditEntry>;

export const AuditQuery = Type.Object({
  limit: Type.Optional(Type.String({ description: 'Between 1 and 100 (default 20)' })),
  after: Type.Optional(Type.String({ description: 'A cursor: the id of the last entry seen (older entries follow)' })),
  before: Type.Optional(Type.String({ description: 'A cursor: the id of the first entry seen' })),
  action: Type.Optional(Type.String({ description: 'Only entries of this action (e.g. `api_key.created`), or of a group (`member.`)' })),
});
