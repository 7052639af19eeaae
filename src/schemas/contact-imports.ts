// Contact imports on the wire (docs/api.md §12.9). POST /contacts/imports takes a multipart form,
// read as a stream by its route: the CSV in the `file` part, `column_map`, `segments` and `topics`
// as JSON strings, `on_conflict` a plain word. Once the JSON strings are decoded, the form's
// fields are checked as `ImportForm`; the segments, topics and properties they name are checked
// against the store when the import is created (src/imports/options.ts).
import { Type } from '@sinclair/typebox';
import { AnyRecord, Id, Nullable, PageQuery, Timestamp, type Static } from './common';
import { TopicChoices } from './topics';

const ColumnText = 'Invalid `{field}` field: must be the name of a column of the file.';
const Column = Type.String({ minLength: 1, error: ColumnText });
/** A contact field's column; left out or null, the header names it as the field. */
const FieldColumn = Type.Optional(Nullable(Column, { error: ColumnText }));

const PropertyColumn = Type.Object(
  {
    column: Column,
    /** The type the mapping asks for: it must be the property's (a `boolean` never fits). */
    type: Type.Optional(
      Type.Union([Type.Literal('string'), Type.Literal('number'), Type.Literal('boolean')], {
        error: 'Invalid `{field}` field: must be `string`, `number` or `boolean`.',
      }),
    ),
  },
  { error: 'Invalid `{field}` field: must be an object with a `column`.' },
);

/** Without one, the header names `email`, `first_name`, `last_name`, `unsubscribed`. */
const ColumnMap = Type.Object(
  {
    email: FieldColumn,
    first_name: FieldColumn,
    last_name: FieldColumn,
    unsubscribed: FieldColumn,
    /** Property key → its column. */
    properties: Type.Optional(Nullable(AnyRecord(PropertyColumn), { error: 'Invalid `{field}` field: must be an object of property keys.' })),
  },
  { error: 'Invalid `{field}` field: must be an object.' },
);

/**
 * `[{id}]` or `[id]`. An object without an `id` is refused by src/imports with this wording too
 * (a required `id` would be reported missing).
 */
const SegmentRef = Type.Union([Type.String(), Type.Object({ id: Type.Optional(Type.String()) })], {
  error: 'Invalid `{field}` field: must be an object with an `id`.',
});

/** The form's fields, `column_map`, `segments` and `topics` decoded from their JSON strings. */
export const ImportForm = Type.Object({
  column_map: Type.Optional(ColumnMap),
  on_conflict: Type.Optional(Type.Union([Type.Literal('upsert'), Type.Literal('skip')], { error: 'Invalid `on_conflict` field: must be `upsert` or `skip`.' })),
  segments: Type.Optional(Type.Array(SegmentRef, { error: 'Invalid `{field}` field: must be an array of `{ id }` objects.' })),
  topics: Type.Optional(TopicChoices),
});
export type ImportForm = Static<typeof ImportForm>;

const statuses = [Type.Literal('queued'), Type.Literal('in_progress'), Type.Literal('completed'), Type.Literal('failed')];

export const ImportListQuery = Type.Composite([
  PageQuery,
  Type.Object({
    status: Type.Optional(Type.Union(statuses, { error: '`status` must be one of queued, in_progress, completed, failed.' })),
  }),
]);

const Count = Type.Integer();

/** GET /contacts/imports[/{id}]: Resend's fields, then Posthorn's (progress and why rows failed). */
export const ContactImport = Type.Object({
  object: Type.Literal('contact_import'),
  id: Id,
  status: Type.Union(statuses),
  created_at: Timestamp,
  completed_at: Nullable(Timestamp),
  counts: Type.Object({ total: Count, created: Count, updated: Count, skipped: Count, failed: Count }),
  /** Posthorn: how far the file is read. */
  progress: Type.Object({ processed_bytes: Count, file_bytes: Count }),
  /** Posthorn: the first failed rows (at most 100) and why. */
  failures: Type.Array(Type.Object({ row: Count, reason: Type.String() })),
  /** Posthorn: why the whole import failed, else null. */
  failure_reason: Nullable(Type.String()),
});
export type ContactImport = Static<typeof ContactImport>;
