// Requests checked against their route's schemas (route.ts), failures in Resend's words
// (docs/api.md §1.4, §3): a missing field → 422 `missing_required_field`, a bad one → 422
// `validation_error` naming it, a body of the wrong top-level type → 400 `validation_error`, a bad
// path parameter → 422 `invalid_parameter`. A schema node may word its own failure with `error`
// (`{field}` stands for the field's name) and name its own error with `errorName`/`errorStatus`
// (e.g. `invalid_attachment`). Unknown keys are dropped, as Resend ignores them (§1.4).
import { Kind, type StaticDecode, type TSchema } from '@sinclair/typebox';
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
  // Clean walks the value and checks each union's variants again: skipped when nothing would go.
  const clean = c.cleans && !keepsAsIs(schema, value) ? Clean(schema, value) : value;
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

/**
 * Would TypeBox's Clean leave `value` as it is — no object in it with a key its schema does not
 * name? Walked without Clean's checks of each union variant (most of its cost on a send's body);
 * a union is looked through every variant, so whichever Clean would pick, nothing goes. False,
 * and Clean runs, wherever this cannot tell cheaply (references, intersections, tuples).
 */
export function keepsAsIs(schema: TSchema, value: unknown): boolean {
  // Clean changes only objects and arrays (value/clean: every kind returns other values as they are).
  if (value === null || typeof value !== 'object') return true;
  switch (schema[Kind]) {
    case 'Object': {
      if (Array.isArray(value)) return true;
      const props = schema.properties as Record<string, TSchema>;
      for (const key of Object.getOwnPropertyNames(value)) {
        // A key the schema does not name goes, or is checked against additionalProperties.
        if (!Object.hasOwn(props, key)) return false;
        if (!keepsAsIs(props[key]!, (value as Record<string, unknown>)[key])) return false;
      }
      return true;
    }
    case 'Array':
      return !Array.isArray(value) || value.every((item) => keepsAsIs(schema.items as TSchema, item));
    case 'Union':
      return (schema.anyOf as TSchema[]).every((variant) => keepsAsIs(variant, value));
    case 'Record': {
      if (Array.isArray(value)) return false;
      const { test, inner } = recordKeys(schema);
      return Object.getOwnPropertyNames(value).every((key) => test.test(key) && keepsAsIs(inner, (value as Record<string, unknown>)[key]));
    }
    case 'Import':
    case 'Intersect':
    case 'Ref':
    case 'This':
    case 'Tuple':
      return false;
    default:
      return true;
  }
}

const recordPatterns = new WeakMap<TSchema, { test: RegExp; inner: TSchema }>();

/** A record schema's key pattern (the one Clean tests keys with) and its values' schema, made once. */
function recordKeys(schema: TSchema): { test: RegExp; inner: TSchema } {
  let r = recordPatterns.get(schema);
  if (!r) {
    const [pattern, inner] = Object.entries(schema.patternProperties as Record<string, TSchema>)[0]!;
    r = { test: new RegExp(pattern), inner };
    recordPatterns.set(schema, r);
  }
  return r;
}

/** Does cleaning matter: is there an object (whose unknown keys go) anywhere in the schema? */
function cleansKeys(schema: TSchema): boolean {
  return JSON.stringify(schema).includes('"type":"object"');
}
