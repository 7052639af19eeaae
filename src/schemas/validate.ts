// Requests checked against their route's schemas (route.ts), failures in Resend's words
// (docs/api.md §1.4, §3): a missing field → 422 `missing_required_field`, a bad one → 422
// `validation_error` naming it, a body of the wrong top-level type → 400 `validation_error`, a bad
// path parameter → 422 `invalid_parameter`. A schema node may word its own failure with `error`
// (`{field}` stands for the field's name) and name its own error with `errorName`/`errorStatus`
// (e.g. `invalid_attachment`). Unknown keys are dropped, as Resend ignores them (§1.4).
import type { StaticDecode, TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { Clean, HasTransform, TransformDecode, type ValueError, ValueErrorType } from '@sinclair/typebox/value';
import { ApiError, errors } from '../errors';

/** Where a value came from: its failures are worded for that place. */
export type Place = 'body' | 'query' | 'params';

/** Options a schema node may carry to word its own failure. */
export interface ErrorWording {
  /** The message; `{field}` stands for the field's name (`tags[0].name`). */
  error?: string;
  /** The error's `name` (default `validation_error`, `invalid_parameter` for path parameters). */
  errorName?: string;
  errorStatus?: number;
}

interface Compiled {
  check: TypeCheck<TSchema>;
  /** Transforms (a lowercased id, a number from a query string) run after the check. */
  decodes: boolean;
  /** Objects lose the keys the schema does not name. */
  cleans: boolean;
}

const compiled = new WeakMap<TSchema, Compiled>();

/** A schema compiled once (the registrar compiles every route's schemas at start). */
export function compile(schema: TSchema): Compiled {
  let c = compiled.get(schema);
  if (!c) {
    const check = TypeCompiler.Compile(schema);
    c = { check, decodes: HasTransform(schema, []), cleans: cleansKeys(schema) };
    compiled.set(schema, c);
  }
  return c;
}

/** `value` as the schema reads it, or the documented error. */
export function validate<T extends TSchema>(schema: T, value: unknown, place: Place): StaticDecode<T> {
  const c = compile(schema);
  if (!c.check.Check(value)) throw failure(schema, value, place, [...c.check.Errors(value)]);
  const clean = c.cleans ? Clean(schema, value) : value;
  return (c.decodes ? TransformDecode(schema, [], clean) : clean) as StaticDecode<T>;
}

/** `/tags/0/name` → `tags[0].name` */
export function fieldName(path: string): string {
  return path
    .split('/')
    .filter(Boolean)
    .map((p, i) => (/^\d+$/.test(p) ? `[${p}]` : i === 0 ? p : `.${p}`))
    .join('');
}

const jsonType = (v: unknown) => (Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v);

function failure(schema: TSchema, value: unknown, place: Place, all: ValueError[]): ApiError {
  // A body of the wrong top-level type (an array for an object) is a 400, not a field error.
  const expected = schema.type as string | undefined;
  if (place === 'body' && (expected === 'object' || expected === 'array') && expected !== jsonType(value))
    return errors.badJson(`The request body must be a JSON ${expected}.`);
  const first = all[0] && innermost(all[0]);
  if (!first) return errors.validation('Invalid request.');
  if (first.path === '' || first.path === '/') {
    if (place === 'body') return errors.badJson('The request body has the wrong type.');
    return worded(first, '', place) ?? errors.validation(first.message);
  }
  // A missing field is named before other complaints about the same object.
  const missing = all.find((e) => e.type === ValueErrorType.ObjectRequiredProperty && e.path.split('/').length === 2);
  if (missing) return missingError(fieldName(missing.path), place);
  const field = fieldName(first.path);
  // Before the wording: a required property's error carries the property's schema, whose wording
  // is for a value of the wrong kind, not for an absent one (`topics[0].id`).
  if (first.type === ValueErrorType.ObjectRequiredProperty) return missingError(field, place);
  const own = worded(first, field, place);
  if (own) return own;
  if (place === 'params') return errors.invalidParameter(`The \`${field}\` is not valid.`);
  return errors.invalidField(field, `${first.message.toLowerCase()}.`);
}

function missingError(field: string, place: Place): ApiError {
  return place === 'query' ? errors.missingParameter(field) : errors.missingField(field);
}

/**
 * A union's failure (a nullable field, a string-or-array field) told by the variant the value was
 * meant for, when that variant failed further inside the value with a wording of its own (the
 * second attachment's `filename`); otherwise by the union's own wording.
 */
function innermost(e: ValueError): ValueError {
  if (e.type !== ValueErrorType.Union) return e;
  for (const variant of e.errors) {
    const f = variant.First();
    if (!f || f.path.length <= e.path.length) continue;
    const inner = innermost(f);
    if (typeof (inner.schema as ErrorWording).error === 'string' || inner.type === ValueErrorType.ObjectRequiredProperty) return inner;
  }
  return e;
}

/** The failing node's own wording, when it has one. */
function worded(e: ValueError, field: string, place: Place): ApiError | null {
  const w = e.schema as ErrorWording;
  if (typeof w.error !== 'string') return null;
  const name = w.errorName ?? (place === 'params' ? 'invalid_parameter' : 'validation_error');
  return new ApiError(w.errorStatus ?? 422, name, w.error.replaceAll('{field}', field));
}

/** Does cleaning matter: is there an object (whose unknown keys go) anywhere in the schema? */
function cleansKeys(schema: TSchema): boolean {
  return JSON.stringify(schema).includes('"type":"object"');
}
