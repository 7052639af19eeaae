// Emptying inbox trash: a thread moved to the trash is deleted, with its emails and drafts,
// TRASH_DAYS after it was moved there, as Resend's inboxes do (README "Inboxes"). A thread taken
// out of the trash keeps nothing of its stay; moved back in, its clock starts again.
import type { Store } from '../store';
import type { ThreadSearch } from './search-index';
import { deleteThread } from './threads';

/** Days a thread stays in the trash before it is deleted. */
export const TRASH_DAYS = 30;
const DAY_MS = 86_400_000;

/**
 * Delete every thread that has been in its inbox's trash for TRASH_DAYS by `now`, one unit of
 * work per thread (re-read inside it: a thread moved out meanwhile stays). Answers how many went.
 * Reads only the trash of each inbox (the threads' `trash` index), not their other threads.
 */
export async function emptyTrash(store: Store, search: Pick<ThreadSearch, 'remove'>, now: number): Promise<number> {
  const before = now - TRASH_DAYS * DAY_MS;
  let removed = 0;
  for (const inbox of await store.inboxes.everything()) {
    for (const t of await store.inboxThreads.findAll('trash', inbox.id, inbox.team_id)) {
      // A thread trashed before `trashed_at` was kept counts from its last activity.
      const at = Date.parse(t.trashed_at ?? t.last_at);
      if (!(at <= before)) continue;
      const gone = await store.write(async (tx) => {
        const cur = await tx.inboxThreads.get(inbox.team_id, t.id);
        if (cur?.folder !== 'trash' || Date.parse(cur.trashed_at ?? cur.last_at) > before) return false;
        await deleteThread(tx, inbox, cur);
        return true;
      });
      if (!gone) continue;
      search.remove(inbox.team_id, inbox.id, t.id);
      removed++;
    }
  }
  return removed;
}
