// Inbox search behind the inboxes' search seam (search-index.ts `ThreadSearch`), docs/api.md
// §25.9: with the embedded store, the index of search.ts, which reads the store's inbox messages
// by id and hears of messages added and threads or inboxes removed on its own thread; in cluster
// mode, the database's full-text search (store/pg/inbox-text.ts), which needs to hear of nothing.
import type { InboxMessageRec, InboxTextSearch, InboxThreadRec, StoreReader } from '../store';
import { type InboxSearch, MAX_HITS, MAX_INDEXED_TEXT, type MessageSource, type SearchableMessage } from './search';
import { scanSearch, type ThreadHit, type ThreadSearch } from './search-index';
import { snippetOf } from './threading';

/** A thread's message as the index reads it: its text part, else its HTML's text. */
export function searchable(m: InboxMessageRec): SearchableMessage {
  return {
    id: m.id,
    thread_id: m.thread_id,
    inbox_id: m.inbox_id,
    subject: m.subject ?? '',
    from: m.from,
    to: m.to,
    cc: m.cc,
    bcc: m.bcc,
    text: (m.text ? m.text.slice(0, MAX_INDEXED_TEXT) : snippetOf(null, m.html, MAX_INDEXED_TEXT)) ?? '',
    created_at: m.received_at,
    has_attachments: m.attachments.length > 0,
  };
}

/** A team's inbox messages after an id, oldest first: one range read of the `inboxMessages` collection. */
export function storeMessages(store: StoreReader): MessageSource {
  return {
    async after(team, after, limit) {
      // `before` reads upwards from the cursor (ids sort in time: '' is before them all), newest first.
      const page = await store.inboxMessages.page(team, { before: after ?? '', limit }, limit);
      return page.data.reverse().map(searchable);
    },
  };
}

/** ThreadSearch by the index (the main thread's; the back office, which never searches, keeps the seam's scan). */
export class IndexedThreadSearch implements ThreadSearch {
  constructor(readonly engine: InboxSearch) {}

  index(team: string, _inboxId: string, _thread: InboxThreadRec, message: InboxMessageRec): void {
    this.engine.added(team, searchable(message));
  }

  remove(team: string, _inboxId: string, threadId: string): void {
    this.engine.forgetThread(team, threadId);
  }

  removeInbox(team: string, inboxId: string): void {
    this.engine.forgetInbox(team, inboxId);
  }

  async query(_store: StoreReader, team: string, inboxId: string, q: string): Promise<ThreadHit[]> {
    const hits = await this.engine.search(team, { inbox_id: inboxId, query: q });
    return hits.map((h) => ({ thread_id: h.thread_id, matched_email_id: h.email_id }));
  }
}

/** ThreadSearch by the database (PostgreSQL): its rows follow the messages by a trigger. */
export class DatabaseThreadSearch implements ThreadSearch {
  constructor(private readonly text: InboxTextSearch) {}

  index(): void {}
  remove(): void {}
  removeInbox(): void {}

  async query(store: StoreReader, team: string, inboxId: string, q: string): Promise<ThreadHit[]> {
    // No words: every thread, newest first — the seam's listing reads only the threads.
    if (!q.trim()) return scanSearch.query(store, team, inboxId, q);
    const hits = await this.text.query(team, inboxId, q, MAX_HITS);
    return hits.map((h) => ({ thread_id: h.thread_id, matched_email_id: h.email_id }));
  }
}
