// Inbox search in cluster mode (docs/api.md §25.9): PostgreSQL full-text search instead of the
// in-memory index (src/inboxes/search.ts), so every node answers from the one database with no
// index of its own. `inbox_text` holds a tsvector per inbox message — subject (weight A),
// participants (B), body text (D, its first 20,000 characters) — kept by a trigger on
// `inbox_messages` (schema.ts, version 15): the collection's writes are unchanged and the row
// commits with the message. A GIN index answers `@@`; ts_rank orders the matches.
import type { InboxTextSearch } from '../interface';
import type { PgEnv } from './env';

/** A query's words as a tsquery: each word must match, the last as a prefix (search as you type). */
export function tsQuery(q: string): string | null {
  const words = q
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean)
    .slice(0, 20);
  if (!words.length) return null;
  return words.map((w, i) => (i === words.length - 1 ? `'${w}':*` : `'${w}'`)).join(' & ');
}

export class PgInboxText implements InboxTextSearch {
  constructor(private readonly env: PgEnv) {}

  async query(team: string, inboxId: string, q: string, limit: number): Promise<{ thread_id: string; email_id: string }[]> {
    const query = tsQuery(q);
    if (query === null) return [];
    // The best message of each thread, threads by their best message's rank.
    return this.env.query<{ thread_id: string; email_id: string }>(
      `SELECT thread_id, email_id FROM (
         SELECT DISTINCT ON (thread_id) thread_id, id AS email_id, ts_rank(doc, q) AS rank
         FROM inbox_text, to_tsquery('simple', $3) q
         WHERE team = $1 AND inbox_id = $2 AND doc @@ q
         ORDER BY thread_id, rank DESC, id DESC
       ) best ORDER BY rank DESC, email_id DESC LIMIT $4`,
      [team, inboxId, query, limit],
    );
  }
}
