// A unit of work whose checks may refuse it: the callback reads, decides, and either writes and
// answers its result or answers the ApiError that refuses the request, before writing anything
// (docs/api.md §3: bad input changes nothing). The error is thrown once the unit is over.
import { ApiError } from '../errors';
import type { Store, Tx } from './interface';

/** Run `fn` in one unit of work; its result, or the ApiError it answered, thrown. */
export async function writeOrRefuse<T>(store: Store, fn: (tx: Tx) => Promise<T | ApiError>): Promise<T> {
  const r = await store.write(fn);
  if (r instanceof ApiError) throw r;
  return r;
}
