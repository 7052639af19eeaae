// What runs after a commit (listeners, `tx.afterCommit`) must not make the caller believe the
// commit failed: its errors are logged, never thrown. Shared by every backend.
import { log } from '../log';

export function guarded(fn: () => void): void {
  try {
    fn();
  } catch (e) {
    log.error('store.after_commit_failed', { error: String((e as Error)?.stack ?? e) });
  }
}

/**
 * A write nobody waits for (usage stamps, the request log): when it fails — cluster mode, the
 * database out of reach — it is logged and dropped, never an unhandled rejection.
 */
export function inBackground(what: string, write: Promise<unknown>): void {
  write.catch((e) => log.warn('store.background_write_failed', { what, error: String((e as Error)?.message ?? e) }));
}
