// Path and query parameters shared by every resource: ids, id-or-email segments, pagination.
import { errors } from '../../errors';
import { isUuid } from '../../ids';
import type { PageQuery } from '../../store';

/** A path id that must be a UUID (docs/api.md §1.6). */
export function pathId(value: string | undefined | null, name = 'id'): string {
  const v = value ?? '';
  if (!isUuid(v)) throw errors.invalidParameter(`The \`${name}\` must be a valid UUID.`);
  return v.toLowerCase();
}

/**
 * A path segment that is an id or an email (docs/api.md §2 item 4): UUID → id, contains `@` →
 * email, else 422 invalid_parameter. Elysia has already percent-decoded `params` exactly once
 * (`%40` → `@`, `%2B` → `+`, `%252B` → `%2B`; a literal `+` stays a plus; a malformed escape
 * gives null), so path values must not be decoded again here.
 */
export function idOrEmail(value: string | undefined | null): { id: string } | { email: string } {
  const v = value ?? '';
  if (isUuid(v)) return { id: v.toLowerCase() };
  if (v.includes('@')) return { email: v };
  throw errors.invalidParameter('The `id` must be a valid UUID or an email address.');
}

const LIMIT_MSG = 'The pagination limit must be a number between 1 and 100.';

/** Validate `limit`, `after`, `before` (docs/api.md §4). */
export function pageQuery(query: Record<string, string | undefined>, opts: { cursor?: (v: string) => boolean; before?: boolean } = {}): PageQuery {
  const valid = opts.cursor ?? isUuid;
  const q: PageQuery = {};
  if (query.limit !== undefined) {
    const raw = String(query.limit).trim();
    if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 100) throw errors.validation(LIMIT_MSG);
    q.limit = Number(raw);
  }
  const { after, before } = query;
  if (after !== undefined && before !== undefined) throw errors.validation('You can only use either `after` or `before`, not both.');
  if (before !== undefined && opts.before === false) throw errors.validation('The `before` parameter is not supported on this list.');
  for (const [name, v] of [
    ['after', after],
    ['before', before],
  ] as const) {
    if (v === undefined) continue;
    if (!valid(v)) throw errors.validation(`The \`${name}\` cursor must be a valid id.`);
    q[name] = v.toLowerCase().startsWith('msg_') ? v : v.toLowerCase();
  }
  return q;
}

export function listOf<T>(page: { has_more: boolean; data: T[] }) {
  return { object: 'list' as const, has_more: page.has_more, data: page.data };
}
