// The one pagination engine (seed rules 1-6, api-reference §4). Items live under a key prefix and
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
        if (reverse ? (s !== undefined && item.id > s) || (e !== undefined && item.id <= e) : (s !== undefined && item.id < s) || (e !== undefined && item.id >= e)) continue;
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
  const data: T[] = [];
  let has_more = false;
  if (q.before !== undefined) {
    // Walk upwards from the cursor (exclusive), keep the `limit` nearest, then present newest first.
    for (const { key, value } of db.getRange({ start: [...prefix, q.before] as Key, end: [...prefix, HIGH] as Key })) {
      const k = key as Key[];
      if (k[prefix.length] === q.before) continue;
      const item = load(k, value);
      if (item === undefined) continue;
      if (data.length === limit) {
        has_more = true;
        break;
      }
      data.push(item);
    }
    data.reverse();
    return { has_more, data };
  }
  const start = [...prefix, q.after ?? HIGH] as Key;
  for (const { key, value } of db.getRange({ start, end: prefix as Key, reverse: true })) {
    const k = key as Key[];
    if (q.after !== undefined && k[prefix.length] === q.after) continue;
    const item = load(k, value);
    if (item === undefined) continue;
    if (data.length === limit) {
      has_more = true;
      break;
    }
    data.push(item);
  }
  return { has_more, data };
}
