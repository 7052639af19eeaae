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
