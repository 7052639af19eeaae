// The wire vocabulary every resource shares (docs/api.md §1, §3, §4): ids, lists, deletions,
// nullable fields, pagination. Schemas here are TypeBox (JSON Schema); `error` words a failure
// the way the API reports it (validate.ts). This folder imports nothing of the app but `errors.ts`
// (validate.ts): the server's routes and sending core, and the dashboard's types, all read it.
import { type Static, type TSchema, Type, type SchemaOptions } from '@sinclair/typebox';

export { Type as T } from '@sinclair/typebox';
export type { Static };

/** Any UUID, either case (src/ids.ts `isUuid`). */
export const UUID = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

/** A path parameter that must be a UUID (docs/api.md §1.6): 422 `invalid_parameter` otherwise; read lowercase. */
export const UuidParam = (name = 'id') =>
  Type.Transform(Type.String({ pattern: UUID, error: `The \`${name}\` must be a valid UUID.`, errorName: 'invalid_parameter', description: 'A UUID' }))
    .Decode((v) => v.toLowerCase())
    .Encode((v) => v);

/** Path parameters: each named one a UUID. */
export const UuidParams = <K extends string>(...names: K[]) =>
  Type.Object(Object.fromEntries(names.map((n) => [n, UuidParam(n)])) as { [P in K]: ReturnType<typeof UuidParam> });

/** A path segment that is an id or an email (docs/api.md §2 item 4); which one is decided by the handler. */
export const IdOrEmail = Type.String({ description: 'A UUID, or an email address' });

/** A resource id in an answer. */
export const Id = Type.String({ description: 'A UUID' });

/** An ISO 8601 UTC timestamp in an answer (docs/api.md §1.7). */
export const Timestamp = Type.String({ description: 'ISO 8601, UTC' });

export const Nullable = <S extends TSchema>(s: S, opts: SchemaOptions = {}) => Type.Union([s, Type.Null()], opts);

/**
 * An object with any keys. (TypeBox's `Record(String, …)` allows only keys matching `^(.*)$`, where
 * `.` stops at a line break, and dropping keys outside the pattern is what cleaning does: a header
 * name with a CR or LF in it would vanish instead of being refused by the check that names it.)
 */
export const AnyRecord = <S extends TSchema>(values: S, opts: SchemaOptions = {}) => Type.Record(Type.String({ pattern: '^[\\s\\S]*$' }), values, opts);

/** Given: neither left out nor null — a field's `null` reads as "not given" (docs/api.md §1.4). */
export const given = <T>(v: T | null | undefined): v is T => v !== undefined && v !== null;

/** A JSON object (not an array, not null). */
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `limit`, `after`, `before` (docs/api.md §4); their rules are `pageQuery`'s (src/api/platform/params.ts). */
export const PageQuery = Type.Object({
  limit: Type.Optional(Type.String({ description: 'Between 1 and 100' })),
  after: Type.Optional(Type.String({ description: 'A cursor: the id of the last item seen' })),
  before: Type.Optional(Type.String({ description: 'A cursor: the id of the first item seen' })),
});

/** The `format` of an export (docs/api.md §4.1): CSV unless NDJSON is asked for. */
export const ExportQuery = Type.Object({
  format: Type.Optional(
    Type.Union([Type.Literal('csv'), Type.Literal('ndjson')], {
      error: 'The `format` parameter must be `csv` or `ndjson`.',
      description: 'Posthorn: `csv` (default) or `ndjson`',
    }),
  ),
});

/** What an export answers (docs/api.md §4.1): a raw response of the route's declaration. */
export const EXPORT_ANSWER = {
  raw: 'text/csv',
  description:
    'The whole list as a CSV file (RFC 4180, with a header record), or with `format=ndjson` one JSON object a line (`application/x-ndjson`), streamed',
};

/** A page of a list (docs/api.md §4). */
export const List = <S extends TSchema>(item: S) => Type.Object({ object: Type.Literal('list'), has_more: Type.Boolean(), data: Type.Array(item) });

export type ListOf<T> = { object: 'list'; has_more: boolean; data: T[] };

/** `{object, id}`: what most changes answer. */
export const Ref = <O extends string>(object: O) => Type.Object({ object: Type.Literal(object), id: Id });

/** `{object, id, deleted: true}` (docs/api.md §1.5). */
export const Deleted = <O extends string>(object: O) => Type.Object({ object: Type.Literal(object), id: Id, deleted: Type.Literal(true) });

/** A body the route reads (and refuses when it is not JSON) but whose fields it ignores. */
export const IgnoredBody = Type.Unknown({ description: 'No fields: any JSON is accepted and ignored' });

/** An error answer (docs/api.md §3.1). */
export const ErrorBody = Type.Object({ statusCode: Type.Integer(), name: Type.String(), message: Type.String() });
export type ErrorBody = Static<typeof ErrorBody>;

/** The token of a signed link (downloads, tracking, unsubscribe, shared pages, invitations): the link's authority. */
// A broken percent-encoding in the path reads as null (Elysia): no token, so the link's 404.
export const TokenParams = Type.Object({ token: Nullable(Type.String({ description: 'A signed token' })) });
