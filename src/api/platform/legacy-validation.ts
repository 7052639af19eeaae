// TRANSITIONAL: Elysia-validated legacy routes (resources not yet declared with route()). Deleted when the last one is converted.
// TypeBox validation failures (raised by Elysia before a handler runs) in Resend's words:
// a missing field → 422 missing_required_field, a bad one → 422 validation_error naming it,
// a body of the wrong top-level type → 400 validation_error (docs/api.md §1.4).
import { type ApiError, errors } from '../../errors';

interface ValueErrorLike {
  path: string;
  value: unknown;
  message: string;
  schema?: { error?: unknown; [k: string]: unknown };
}

/** `/tags/0/name` → `tags[0].name` */
export function fieldName(path: string): string {
  return path
    .split('/')
    .filter(Boolean)
    .map((p, i) => (/^\d+$/.test(p) ? `[${p}]` : i === 0 ? p : `.${p}`))
    .join('');
}

interface ValidationErrorLike {
  all?: ValueErrorLike[];
  type?: string;
  validator?: { schema?: { type?: string } };
}

const jsonType = (v: unknown) => (Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v);

/** `body` is the body as parsed (before Elysia normalised it), undefined when there was none. */
export function fromValidation(err: ValidationErrorLike, body: unknown): ApiError {
  // A body of the wrong top-level type (array vs object) is a 400, not a field error.
  const expected = err.validator?.schema?.type;
  if (err.type === 'body' && body !== undefined && expected && expected !== jsonType(body))
    return errors.badJson(`The request body must be a JSON ${expected}.`);
  const all = err.all ?? [];
  const first = all[0];
  if (!first) return errors.validation('Invalid request.');
  if (first.path === '' || first.path === '/') {
    if (err.type === 'body') return errors.badJson('The request body has the wrong type.');
    return errors.validation(first.message);
  }
  // Prefer a missing field over other complaints about the same object.
  const missing = all.find((e) => e.value === undefined && e.path.split('/').length === 2);
  if (missing) return errors.missingField(fieldName(missing.path));
  const field = fieldName(first.path);
  const custom = typeof first.schema?.error === 'string' ? first.schema.error : null;
  return custom ? errors.validation(custom.replace('{field}', field)) : errors.invalidField(field, `${first.message.toLowerCase()}.`);
}
