// The seam of inbox search (docs/api.md §25.4): GET /inboxes/{inbox}/threads/search asks a
// ThreadSearch, and every message that joins a thread is handed to its `index` after its commit.
// The HTTP thread's services implement it with an index (§25.9: search-store.ts over search.ts's
// minisearch index, or PostgreSQL full-text search in cluster mode); the back office, which never
// searches, keeps `scanSearch`, which reads the inbox's threads and their messages.
import type { InboxMessageRec, InboxThreadRec, StoreReader } from '../store';

/** One thread that matched, with the message that matched best (null: the thread's own fields did). */
export interface ThreadHit {
  thread_id: string;
  matched_email_id: string | null;
}

export interface ThreadSearch {
  /** A message joined (or was sent in) a thread: index it. After the commit; never throws. */
  index(team: string, inboxId: string, thread: InboxThreadRec, message: InboxMessageRec): void;
  /** A thread (and its messages) is gone. */
  remove(team: string, inboxId: string, threadId: string): void;
  /** An inbox and everything in it is gone. */
  removeInbox(team: string, inboxId: string): void;
  /**
   * The threads of an inbox whose subject, participants or body text match `q`, best first; an empty
   * `q` matches every thread. The caller filters by folder, label and the other fields.
   */
  query(store: StoreReader, team: string, inboxId: string, q: string): Promise<ThreadHit[]>;
}

/** Search by reading: each thread's subject and participants, then its messages' text. */
export const scanSearch: ThreadSearch = {
  index() {},
  remove() {},
  removeInbox() {},
  async query(store, team, inboxId, q) {
    const terms = q.toLowerCase().split(/\s+/).filter(Boolean);
    const threads = await store.inboxThreads.findAll('inbox', inboxId, team);
    threads.sort((a, b) => (a.last_at < b.last_at ? 1 : -1));
    if (!terms.length) return threads.map((t) => ({ thread_id: t.id, matched_email_id: null }));
    const hits: ThreadHit[] = [];
    const has = (text: string) => terms.every((t) => text.includes(t));
    for (const t of threads) {
      if (has(`${t.subject ?? ''} ${t.participants.join(' ')}`.toLowerCase())) {
        hits.push({ thread_id: t.id, matched_email_id: null });
        continue;
      }
      const msgs = await store.inboxMessages.findAll('thread', t.id, team);
      const m = msgs.find((x) => has(`${x.subject ?? ''} ${x.from} ${x.to.join(' ')} ${x.cc.join(' ')} ${x.text ?? x.html ?? ''}`.toLowerCase()));
      if (m) hits.push({ thread_id: t.id, matched_email_id: m.id });
    }
    return hits;
  },
};
