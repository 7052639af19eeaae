// Templates on the wire (docs/api.md §20). The types of the fields are checked here; what needs
// their meaning — Mustache that parses, an alias that is no UUID, addresses, reserved and repeated
// variable keys, a fallback of its variable's type, how many variables — and the required fields
// given as null are src/templates/validate.ts.
import { Type } from '@sinclair/typebox';
import { Deleted, Id, List, Nullable, Timestamp, UUID, type Static } from './common';
import { OneOf } from './literals';

const invalid = (field: string, why: string) => `Invalid \`${field}\` field: ${why}`;
const Text = (field: string) => Type.String({ error: invalid(field, 'must be a string.') });
/** A field that may be null (it clears, or — for a required one — reads as missing). */
const Maybe = (field: string) => Nullable(Type.String(), { error: invalid(field, 'must be a string.') });

/** A variable's key: ASCII letters, digits and `_`, at most 50 (templates/validate.ts refuses the reserved names). */
export const VARIABLE_KEY = '^[A-Za-z0-9_]{1,50}$';

/** A declared variable. `key` and `type` left out or null are missing (validate.ts), so they are optional here. */
const VariableDef = Type.Object(
  {
    key: Type.Optional(
      Nullable(Type.String({ pattern: VARIABLE_KEY }), { error: invalid('{field}', 'must be 1 to 50 ASCII letters, digits or underscores.') }),
    ),
    type: Type.Optional(Nullable(OneOf(['string', 'number']), { error: invalid('{field}', 'must be `string` or `number`.') })),
    fallback_value: Type.Optional(Type.Unknown({ description: 'A string (at most 2,000 characters) or a number, of the variable’s type; null: none' })),
  },
  { error: invalid('{field}', 'must be an object with `key` and `type`.') },
);

const fields = {
  alias: Type.Optional(Maybe('alias')),
  from: Type.Optional(Maybe('from')),
  subject: Type.Optional(Maybe('subject')),
  reply_to: Type.Optional(
    Nullable(Type.Union([Type.String(), Type.Array(Type.String())]), { error: invalid('reply_to', 'must be a string or an array of strings.') }),
  ),
  text: Type.Optional(Maybe('text')),
  variables: Type.Optional(
    Nullable(Type.Array(VariableDef, { description: 'At most 50' }), {
      error: invalid('variables', 'must be an array of `{ key, type, fallback_value }` objects.'),
    }),
  ),
};

/** POST /templates: a draft. */
export const CreateTemplateRequest = Type.Object({ name: Maybe('name'), html: Maybe('html'), ...fields });
export type CreateTemplateRequest = Static<typeof CreateTemplateRequest>;

/** PATCH /templates/{id_or_alias}: the fields given change (null clears; `name` and `html` cannot be cleared). */
export const UpdateTemplateRequest = Type.Object({ name: Type.Optional(Text('name')), html: Type.Optional(Text('html')), ...fields });
export type UpdateTemplateRequest = Static<typeof UpdateTemplateRequest>;

export const TemplateParams = Type.Object({ id_or_alias: Type.String({ description: 'A template id, or its alias' }) });

const Status = OneOf(['draft', 'published']);

const summaryFields = {
  id: Id,
  name: Type.String(),
  status: Status,
  published_at: Nullable(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
  alias: Nullable(Type.String()),
  /** Posthorn: the latest version is not the one sends use. */
  has_unpublished_versions: Type.Boolean(),
};

/** An item of GET /templates (docs/api.md §20.1). */
export const TemplateSummary = Type.Object(summaryFields);
export type TemplateSummary = Static<typeof TemplateSummary>;

export const TemplateVariable = Type.Object({
  id: Id,
  key: Type.String(),
  type: OneOf(['string', 'number']),
  fallback_value: Nullable(Type.Union([Type.String(), Type.Number()])),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type TemplateVariable = Static<typeof TemplateVariable>;

/** GET /templates/{id_or_alias}: the template with its latest version (docs/api.md §20.2). */
export const Template = Type.Object({
  object: Type.Literal('template'),
  id: Id,
  current_version_id: Id,
  alias: Nullable(Type.String()),
  name: Type.String(),
  created_at: Timestamp,
  updated_at: Timestamp,
  status: Status,
  published_at: Nullable(Timestamp),
  from: Nullable(Type.String()),
  subject: Nullable(Type.String()),
  reply_to: Nullable(Type.Array(Type.String())),
  html: Type.String(),
  text: Nullable(Type.String()),
  variables: Type.Array(TemplateVariable),
  has_unpublished_versions: Type.Boolean(),
});
export type Template = Static<typeof Template>;

export const TemplateList = List(TemplateSummary);

/** What a create, an update and the action POSTs answer: the template made or changed. */
export const TemplateRef = Type.Object({ id: Id, object: Type.Literal('template') });

export const TemplateDeleted = Deleted('template');

// ---- Version history (docs/api.md §20.5, Posthorn) ------------------------------------------

/** `{id_or_alias}` and `{version}`: a version's number (1, 2, …) or its id. */
export const TemplateVersionParams = Type.Object({
  id_or_alias: Type.String({ description: 'A template id, or its alias' }),
  version: Type.String({
    pattern: `^([1-9][0-9]{0,8}|${UUID.slice(1, -1)})$`,
    error: 'The `version` must be a version number (1, 2, …) or a version id.',
    errorName: 'invalid_parameter',
    description: 'A version number (1 for the first published), or a version id',
  }),
});

const versionFields = {
  object: Type.Literal('template_version'),
  /** The version's id: the template's `current_version_id` while it was the latest. */
  id: Id,
  template_id: Id,
  /** 1 for the first version published, then in the order of publishing. */
  version: Type.Integer({ minimum: 1 }),
  published_at: Timestamp,
  /** The version this one restored (POST …/revert), or null. */
  reverted_from: Nullable(Type.Integer({ minimum: 1 })),
  /** Sends use this version now. */
  current: Type.Boolean(),
  subject: Nullable(Type.String()),
};

/** An item of GET /templates/{id_or_alias}/versions. */
export const TemplateVersionSummary = Type.Object(versionFields);
export type TemplateVersionSummary = Static<typeof TemplateVersionSummary>;

/** GET /templates/{id_or_alias}/versions/{version}: the version's content as it was published. */
export const TemplateVersion = Type.Object({
  ...versionFields,
  created_at: Timestamp,
  from: Nullable(Type.String()),
  reply_to: Nullable(Type.Array(Type.String())),
  html: Type.String(),
  text: Nullable(Type.String()),
  variables: Type.Array(TemplateVariable),
});
export type TemplateVersion = Static<typeof TemplateVersion>;

export const TemplateVersionList = List(TemplateVersionSummary);
