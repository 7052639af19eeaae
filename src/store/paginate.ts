// The one pagination engine (docs/api.md §4). Items live under a key prefix and
// end in a UUIDv7 (or other time-sortable id), so "newest first" is a reverse range scan and a
// cursor is just a position in key order: it need not exist any more, and inserts or deletes
// elsewhere never shift a page.
import type { Key } from 'lmdb';

/** What the engine reads: an ordered key range (an lmdb Database, or `sortedSource` below). */
export interface RangeSource {
  getRange(opts: { start?: Key; end?: Key; reverse?: boolean }): Iterable<{ key: Key; value: unknown }>;
}

/**
 * Items held in memory (e.g. the attachments of one email) as a RangeSource keyed [id], so they
 * page by exactly the same rules.
 */
export function sortedSource<T extends { id: string }>(items: T[]): RangeSource {
  const sorted = [...items].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return {
    *getRange({ start, end, reverse }) {
      const s = (start as string[] | undefined)?.[0];
      const e = (end as string[] | undefined)?.[0];
      const list = reverse ? [...sorted].reverse() : sorted;
      for (const item of list) {
        // Forward: start ≤ id < end; reverse: end < id ≤ start (lmdb's semantics).
        if (
          reverse
            ? (s !== undefined && item.id > s) || (e !== undefined && item.id <= e)
            : (s !== undefined && item.id < s) || (e !== undefined && item.id >= e)
        )
          continue;
        yield { key: [item.id], value: item };
      }
    },
  };
}

export interface PageQuery {
  limit?: number; // validated 1-100 by the API layer
  after?: string; // older than this id
  before?: string; // newer than this id
}

export interface Page<T> {
  has_more: boolean;
  data: T[];
}

const HIGH = '\uffff'; // sorts after every id

/**
 * Page through keys `[...prefix, id]` of `db`, newest first.
 * `defaultLimit` is used when no limit is given; `null` means "everything".
 * `load` maps an index entry to the item (or undefined to skip it, e.g. a filtered-out record).
 */
export function paginate<T>(
  db: RangeSource,
  prefix: Key[],
  q: PageQuery,
  defaultLimit: number | null,
  load: (key: Key[], value: unknown) => T | undefined,
): Page<T> {
  const limit = q.limit ?? defaultLimit ?? Infinity;
  // `before` walks upwards from the cursor, keeping the `limit` nearest, then shows them newest
  // first; otherwise walk downwards from `after` (or the top).
  const upwards = q.before !== undefined;
  const cursor = upwards ? q.before : q.after;
  const range = upwards
    ? db.getRange({ start: [...prefix, q.before] as Key, end: [...prefix, HIGH] as Key })
    : db.getRange({ start: [...prefix, q.after ?? HIGH] as Key, end: prefix as Key, reverse: true });
  const data: T[] = [];
  let has_more = false;
  for (const { key, value } of range) {
    const k = key as Key[];
    if (cursor !== undefined && k[prefix.length] === cursor) continue;
    const item = load(k, value);
    if (item === undefined) continue;
    if (data.length === limit) {
      has_more = true;
      break;
    }
    data.push(item);
  }
  if (upwards) data.reverse();
  return { has_more, data };
}

/**
 * `page` — stored items paged by the rules above — with `extra` items that are not stored (derived
 * from their owner) placed among them by id, as if they were: the page holds the `limit` items
 * nearest its cursor of both together. It does, because `page` holds the nearest stored ones.
 */
export function withDerived<T>(page: Page<T>, extra: T[], q: PageQuery, defaultLimit: number | null, idOf: (item: T) => string): Page<T> {
  const limit = q.limit ?? defaultLimit ?? Infinity;
  const upwards = q.before !== undefined;
  const inRange = extra.filter((x) => (upwards ? idOf(x) > q.before! : q.after === undefined || idOf(x) < q.after));
  if (inRange.length === 0) return page;
  // From the cursor outwards: newest first walking down, oldest first walking up.
  const walk = [...page.data, ...inRange].sort((a, b) => (idOf(a) < idOf(b) ? 1 : idOf(a) > idOf(b) ? -1 : 0));
  if (upwards) walk.reverse();
  const data = walk.slice(0, limit);
  if (upwards) data.reverse();
  return { has_more: page.has_more || walk.length > limit, data };
}
