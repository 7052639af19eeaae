// Suppressions on the wire (docs/api.md §16). Addresses are parsed by the route (an address is more
// than a string), and the batch sizes are checked there: their wording is not the array's.
import { Type } from '@sinclair/typebox';
import { Deleted, ExportQuery, Id, IdOrEmail, List, Nullable, PageQuery, Ref, Timestamp, type Static } from './common';
import { OneOf } from './literals';
import { BounceClassName } from './deliverability';
import { BOUNCE_CLASSES } from '../mail/bounce-class-names';

/** Why an address is on the list: a permanent bounce, a complaint, or added by hand. */
export const SUPPRESSION_ORIGINS = ['bounce', 'complaint', 'manual'] as const;
const Origin = OneOf(SUPPRESSION_ORIGINS, { error: `The \`origin\` parameter must be one of ${SUPPRESSION_ORIGINS.join(', ')}.` });

/** A list of strings: the array and each item worded apart (`emails[1]`). */
const Strings = Type.Array(Type.String({ error: 'The `{field}` field must be a string.' }), { error: 'The `{field}` field must be an array of strings.' });

export const AddSuppressionRequest = Type.Object({ email: Type.String({ error: 'The `email` field must be a string.' }) });

const SuppressionFilters = Type.Object({ origin: Type.Optional(Origin) });

export const SuppressionListQuery = Type.Composite([PageQuery, SuppressionFilters]);

/** GET /suppressions/export (docs/api.md §4.1). */
export const SuppressionExportQuery = Type.Composite([SuppressionFilters, ExportQuery]);

export const SuppressionParams = Type.Object({ id_or_email: IdOrEmail });

export const BatchAddRequest = Type.Object({ emails: Strings }, { description: '1 to 100 addresses' });

/** Exactly one of `emails` and `ids`, 1 to 100 of them. */
export const BatchRemoveRequest = Type.Object({ emails: Type.Optional(Strings), ids: Type.Optional(Strings) });

export const SuppressionSummary = Type.Object({
  id: Id,
  email: Type.String(),
  origin: OneOf(SUPPRESSION_ORIGINS),
  source_id: Nullable(Id, { description: 'The bounced or complained-about email' }),
  created_at: Timestamp,
  /** Posthorn: a bounce's class and the reply that caused it (docs/api.md §16). */
  class: Nullable(BounceClassName, {
    description: 'Posthorn: the bounce class of the reply that caused it; null for complaints, manual entries and older bounces',
  }),
  reply: Nullable(Type.String(), { description: 'Posthorn: the reply that caused it' }),
});
export type SuppressionSummary = Static<typeof SuppressionSummary>;

export const Suppression = Type.Composite([Type.Object({ object: Type.Literal('suppression') }), SuppressionSummary]);
export type Suppression = Static<typeof Suppression>;

export const SuppressionList = List(SuppressionSummary);

export const BatchAdded = Type.Object({ data: Type.Array(Ref('suppression')) });
export const BatchRemoved = Type.Object({ data: Type.Array(Deleted('suppression')) });

/** POST /suppressions/lift (Posthorn, docs/api.md §16.1): which bounce entries (every filter given must match; at least one of the first three). */
export const LiftRequest = Type.Object({
  incident_id: Type.Optional(Type.String({ description: 'Entries made while this incident lasted, at its site' })),
  class: Type.Optional(
    Type.Union([BounceClassName, Type.Array(BounceClassName)], {
      description: 'The class their reply has under the rules in force',
      error: `The \`class\` field must be a bounce class or a list of them: ${BOUNCE_CLASSES.join(', ')}.`,
    }),
  ),
  reply_contains: Type.Optional(
    Type.String({ error: 'The `reply_contains` field must be a string.', description: 'Their reply contains this (case-insensitive)' }),
  ),
  since: Type.Optional(Type.String({ error: 'The `since` field must be a timestamp.', description: 'Made at or after (ISO 8601)' })),
  until: Type.Optional(Type.String({ error: 'The `until` field must be a timestamp.', description: 'Made before (ISO 8601)' })),
  dry_run: Type.Optional(Type.Boolean({ error: 'The `dry_run` field must be a boolean.', description: 'Only say which entries it would lift' })),
});
export type LiftRequest = Static<typeof LiftRequest>;

/** What POST /suppressions/lift lifted (or would lift, `dry_run`): how many, and the first 100 of them, oldest first. */
export const LiftResult = Type.Object({
  object: Type.Literal('suppression_lift'),
  dry_run: Type.Boolean(),
  lifted: Type.Integer(),
  has_more: Type.Boolean(),
  data: Type.Array(SuppressionSummary),
});
