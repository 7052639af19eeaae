// A repository as one unit of work sees it, its writes noting what the commit must do afterwards:
// fire a signal (collections.ts `WAKING`: the queue's puts wake the delivery engine…), clear a
// cache. Both backends wrap so, once per unit of work and repository, on first use.
import type { Firing } from './collections';

/** `repo` whose methods `writes` also call `note` after writing (when their arguments pass the test). */
export function noting<R extends object>(repo: R, writes: readonly (readonly [method: string, when: Firing])[], note: () => void): R {
  const wrapped = Object.create(repo) as Record<string, unknown>;
  for (const [m, when] of writes) {
    const write = (repo as Record<string, (...a: unknown[]) => void>)[m];
    if (typeof write !== 'function') throw new Error(`noting: the repository has no method ${m}`);
    const test = when as true | ((...a: unknown[]) => boolean);
    wrapped[m] =
      test === true
        ? (...args: unknown[]) => {
            write.apply(repo, args);
            note();
          }
        : (...args: unknown[]) => {
            write.apply(repo, args);
            if (test(...args)) note();
          };
  }
  return wrapped as R;
}
