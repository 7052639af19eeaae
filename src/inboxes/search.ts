// Inbox search (docs/api.md §25.9): a full-text index of a team's inbox messages — subject,
// participants and body text — with minisearch (BM25, prefix and fuzzy terms, per-field boosts),
// so a query reads an inverted index and never every message.
//
// The store stays the truth; an index is a cache of it:
//   - One index per team, made on the team's first search and kept in memory while it is used.
//     The indexes in memory hold at most `maxDocs` messages together: past it the least recently
//     searched team's index is written to disk and dropped (memory is bounded by the number of
//     messages searched lately, not by the install's).
//   - On disk (`<dir>/<team>.json`, written whole to a temporary file and renamed) with the id of
//     the newest message it holds. Loaded again, or made from nothing when the file is missing,
//     unreadable or of another format, then caught up from the store.
//   - Before every query, the index reads what the store holds after its newest message
//     (`MessageSource.after`, one range read of time-ordered UUIDv7 ids: nothing at all when
//     nothing arrived). Messages are stored by the inbound processor on the back office thread,
//     or by another node in cluster mode; reading the store is how a query sees them, with no
//     message passed between threads. The read starts `CATCH_UP_MARGIN_MS` before the newest id
//     (an id is made before its commit, so two commits may land out of id order) and skips ids
//     the index has.
//   - Messages removed (a thread deleted, retention) are forgotten when the remover says so
//     (`forget`) and, should that be missed (a crash, another node), dropped from the answer by
//     the caller, which reads each thread it returns (`Hit`s name threads that may be gone).
import { mkdir, readFile, rename, writeFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import MiniSearch, { type Options, type Query, type SearchResult } from 'minisearch';
import { uuidAt, uuidTime } from '../ids';

/** A message as the index reads it: what is searched, and what filters and answers need. */
export interface SearchableMessage {
  /** The message's id (UUIDv7: the index catches up by it). */
  id: string;
  thread_id: string;
  inbox_id: string;
  subject: string;
  /** Addresses, each `Name <address>` or a bare address. */
  from: string;
  to: string[];
  cc: string[];
  bcc: string[];
  /** The body as text (the HTML's text when there is no text part). */
  text: string;
  created_at: string;
  has_attachments: boolean;
}

/** Where an index reads the messages it has not seen: the store. */
export interface MessageSource {
  /** Up to `limit` of a team's messages whose id sorts after `after` (null: from the first), oldest first. */
  after(team: string, after: string | null, limit: number): Promise<SearchableMessage[]>;
}

/** What a search asks (the fields of `resend.inboxes.threads.search`). */
export interface SearchQuery {
  inbox_id: string;
  /** Words of the subject, participants and body; the last one may be the start of a word. */
  query?: string;
  /** Each listed address (or name, or domain) must be among the message's. */
  from?: string[];
  to?: string[];
  cc?: string[];
  bcc?: string[];
  has_attachment?: boolean;
  /** Sent or received at or after / before these times (ms). */
  start?: number;
  end?: number;
}

/** A thread that matched, with its best-matching message. */
export interface Hit {
  thread_id: string;
  email_id: string;
  score: number;
}

/** Body text indexed per message: the rest of a very long message is not searchable (bounds a document's terms). */
export const MAX_INDEXED_TEXT = 20_000;
/** A query's catch-up re-reads this far behind the newest id it holds (commits landing out of id order). */
export const CATCH_UP_MARGIN_MS = 10_000;
/** The most threads a search with words or addresses answers (the caller pages and filters them further); without, every thread. */
export const MAX_HITS = 1000;
/**
 * Messages held in memory across the teams' indexes: about 10 KB of heap each for a 1 KB body
 * (scripts/bench/inbox-search.ts), so about 200 MB at most (a VPS's memory is shared with
 * delivery and the queue, README "Running on a VPS").
 */
export const DEFAULT_MAX_DOCS = 20_000;
/** Messages read from the store per catch-up read. */
const CATCH_UP_BATCH = 500;
/** Messages added since the file was written after which a catch-up writes it again. */
const PERSIST_EVERY = 2000;
/** Bumped when the fields or their processing change: a file of another format is rebuilt. */
const FORMAT = 1;

const ADDRESS_FIELDS = ['from', 'to', 'cc', 'bcc'] as const;
const FIELDS = ['subject', 'text', ...ADDRESS_FIELDS];
const WORDS = /[\p{Z}\p{P}\p{S}\p{C}]+/u;

/**
 * The terms of an address field: each address whole, its local part and domain, and the words of
 * its display name — `from: alice@example.com` finds Alice exactly, `from: example.com` her domain.
 */
export function addressTerms(text: string): string[] {
  const out: string[] = [];
  for (const part of text.toLowerCase().split(/[,;]/)) {
    const m = /<([^<>\s]+@[^<>\s]+)>/.exec(part) ?? /([^\s<>"]+@[^\s<>"]+)/.exec(part);
    const address = m?.[1];
    if (address) {
      const at = address.lastIndexOf('@');
      out.push(address, address.slice(0, at), address.slice(at + 1));
    }
    const name = address ? part.replace(m![0], ' ') : part;
    for (const w of name.split(WORDS)) if (w) out.push(w);
  }
  return out;
}

/**
 * English words in nearly every message, not indexed: a query for one would read most of the
 * index and rank nothing (the benchmark's word in most messages: slower than a scan).
 */
const STOP_WORDS = new Set(
  'a an and are as at be but by for from has have i if in is it me my no not of on or our so that the their this to was we were will with you your'.split(' '),
);

const tokenize = (text: string, field?: string): string[] =>
  field && (ADDRESS_FIELDS as readonly string[]).includes(field) ? addressTerms(text) : text.split(WORDS).filter(Boolean);

/** The index's options: the same when it is made and when it is loaded from disk. */
const OPTIONS: Options = {
  fields: FIELDS,
  storeFields: ['thread_id', 'inbox_id', 'at', 'att'],
  tokenize,
  processTerm: (t, field) => {
    const term = t.toLowerCase();
    return field && (ADDRESS_FIELDS as readonly string[]).includes(field) ? term : STOP_WORDS.has(term) ? null : term;
  },
  extractField: (doc, field) => {
    const v = (doc as Record<string, unknown>)[field];
    return Array.isArray(v) ? v.join(', ') : (v as string);
  },
  // Discarded documents are vacuumed in the background once they are a tenth of the index.
  autoVacuum: { minDirtCount: 100, minDirtFactor: 0.1, batchSize: 1000, batchWait: 10 },
};

const newIndex = () => new MiniSearch(OPTIONS);

/** The document of a message: the fields searched and the ones filters read. */
function documentOf(m: SearchableMessage) {
  return {
    id: m.id,
    thread_id: m.thread_id,
    inbox_id: m.inbox_id,
    subject: m.subject,
    text: m.text.length > MAX_INDEXED_TEXT ? m.text.slice(0, MAX_INDEXED_TEXT) : m.text,
    from: m.from,
    to: m.to,
    cc: m.cc,
    bcc: m.bcc,
    at: Date.parse(m.created_at),
    att: m.has_attachments,
  };
}

/** One team's index and where it stands. */
interface TeamIndex {
  mini: MiniSearch;
  /** The newest message id it holds (null: none). */
  newest: string | null;
  /** Messages added since it was last written to disk. */
  unsaved: number;
  /** Its catch-ups, one at a time. */
  busy: Promise<void>;
}

export interface InboxSearchOptions {
  source: MessageSource;
  /** Where the indexes are kept between uses (data_dir/inbox-search); null: in memory only (rebuilt when loaded again). */
  dir: string | null;
  /** The most messages held in memory across teams' indexes (default DEFAULT_MAX_DOCS). */
  maxDocs?: number;
}

/** The teams' indexes (one per process: the main thread, which answers searches). */
export class InboxSearch {
  private readonly indexes = new Map<string, TeamIndex>();
  private readonly loading = new Map<string, Promise<TeamIndex>>();
  private readonly maxDocs: number;

  constructor(private readonly opts: InboxSearchOptions) {
    this.maxDocs = opts.maxDocs ?? DEFAULT_MAX_DOCS;
  }

  /** The threads of an inbox whose messages match, best first, each with its best message. */
  async search(team: string, q: SearchQuery): Promise<Hit[]> {
    const index = await this.ready(team);
    const { mini } = index;
    const queries: Query[] = [];
    const text = q.query?.trim();
    if (text) {
      queries.push({
        queries: [text],
        fields: FIELDS,
        combineWith: 'AND',
        boost: { subject: 2, from: 1.5, to: 1.2 },
        // The last word may be the start of one (search as you type); long words forgive a typo.
        prefix: (_t, i, terms) => i === terms.length - 1,
        fuzzy: (t) => (t.length >= 5 ? 0.2 : false),
        tokenize: (s) => s.split(WORDS).filter(Boolean),
      });
    }
    for (const field of ADDRESS_FIELDS) {
      for (const who of q[field] ?? []) {
        // An address matches itself, a domain its addresses, anything else the words of names.
        const v = who.trim().toLowerCase();
        const exact = v.includes('@') ? addressTerms(v).slice(0, 1) : /^[\p{L}\p{N}-]+(\.[\p{L}\p{N}-]+)+$/u.test(v) ? [v] : v.split(WORDS).filter(Boolean);
        if (exact.length === 0) continue;
        queries.push({
          queries: exact,
          fields: [field],
          combineWith: 'AND',
          tokenize: (s) => [s],
          processTerm: (t) => t.toLowerCase(),
          prefix: false,
          fuzzy: false,
        });
      }
    }
    const filter = (r: SearchResult) =>
      r.inbox_id === q.inbox_id &&
      (q.has_attachment === undefined || r.att === q.has_attachment) &&
      (q.start === undefined || (r.at as number) >= q.start) &&
      (q.end === undefined || (r.at as number) <= q.end);
    const results =
      queries.length === 0
        ? mini.search(MiniSearch.wildcard, { filter }).sort((a, b) => (b.at as number) - (a.at as number))
        : mini.search({ queries, combineWith: 'AND' }, { filter });
    // One hit per thread: its best message (results come best first).
    const seen = new Map<string, Hit>();
    for (const r of results) {
      const thread = r.thread_id as string;
      if (!seen.has(thread)) seen.set(thread, { thread_id: thread, email_id: r.id as string, score: r.score });
      if (queries.length > 0 && seen.size >= MAX_HITS) break;
    }
    return [...seen.values()];
  }

  /** A message stored just now (the index is in memory): indexed at once rather than at the next query's catch-up. */
  added(team: string, m: SearchableMessage): void {
    const index = this.indexes.get(team);
    if (!index || index.mini.has(m.id)) return;
    index.mini.add(documentOf(m));
    index.unsaved++;
    // `newest` stays: a message stored meanwhile by another thread, with a smaller id, is still to be read.
  }

  /** Messages removed from the store (a thread deleted): dropped from the index if it is in memory. */
  forget(team: string, ids: Iterable<string>): void {
    const index = this.indexes.get(team);
    if (!index) return;
    for (const id of ids)
      if (index.mini.has(id)) {
        index.mini.discard(id);
        index.unsaved++;
      }
  }

  /** A thread removed from the store: its messages dropped from the index if it is in memory. */
  forgetThread(team: string, threadId: string): void {
    this.forgetWhere(team, (r) => r.thread_id === threadId);
  }

  /** An inbox removed from the store: its messages dropped from the index if it is in memory. */
  forgetInbox(team: string, inboxId: string): void {
    this.forgetWhere(team, (r) => r.inbox_id === inboxId);
  }

  private forgetWhere(team: string, which: (r: SearchResult) => boolean): void {
    const index = this.indexes.get(team);
    if (index)
      this.forget(
        team,
        index.mini.search(MiniSearch.wildcard, { filter: which }).map((r) => r.id as string),
      );
  }

  /** Messages held in memory, across teams. */
  get size(): number {
    let n = 0;
    for (const i of this.indexes.values()) n += i.mini.documentCount;
    return n;
  }

  /** Write every index changed since it was written (on stop). */
  async close(): Promise<void> {
    for (const [team, index] of this.indexes) await index.busy.then(() => this.save(team, index));
  }

  /** The team's index in memory, caught up with the store. */
  private async ready(team: string): Promise<TeamIndex> {
    let index = this.indexes.get(team);
    if (index) {
      // Most recently used last: eviction takes the first.
      this.indexes.delete(team);
      this.indexes.set(team, index);
    } else {
      let pending = this.loading.get(team);
      if (!pending) {
        pending = this.load(team).finally(() => this.loading.delete(team));
        this.loading.set(team, pending);
      }
      index = await pending;
      this.indexes.set(team, index);
    }
    const caught = index.busy.then(() => this.catchUp(team, index));
    index.busy = caught.catch(() => {});
    await caught;
    await this.evict(team);
    return index;
  }

  private async catchUp(team: string, index: TeamIndex): Promise<void> {
    let cursor = index.newest === null ? null : uuidAt(uuidTime(index.newest) - CATCH_UP_MARGIN_MS);
    for (;;) {
      const batch = await this.opts.source.after(team, cursor, CATCH_UP_BATCH);
      for (const m of batch) {
        if (!index.mini.has(m.id)) {
          index.mini.add(documentOf(m));
          index.unsaved++;
        }
        if (index.newest === null || m.id > index.newest) index.newest = m.id;
      }
      if (batch.length < CATCH_UP_BATCH) break;
      cursor = batch[batch.length - 1]!.id;
    }
    if (index.unsaved >= PERSIST_EVERY) await this.save(team, index);
  }

  private async load(team: string): Promise<TeamIndex> {
    const fresh = (): TeamIndex => ({ mini: newIndex(), newest: null, unsaved: 0, busy: Promise.resolve() });
    const file = this.fileOf(team);
    if (!file) return fresh();
    try {
      const saved = JSON.parse(await readFile(file, 'utf8')) as { format: number; newest: string | null; index: unknown };
      if (saved.format !== FORMAT) return fresh();
      const mini = MiniSearch.loadJS(saved.index as Parameters<typeof MiniSearch.loadJS>[0], OPTIONS);
      return { mini, newest: saved.newest, unsaved: 0, busy: Promise.resolve() };
    } catch {
      // Missing or unreadable: made again from the store by the catch-up.
      return fresh();
    }
  }

  private async save(team: string, index: TeamIndex): Promise<void> {
    const file = this.fileOf(team);
    if (!file || index.unsaved === 0) return;
    await mkdir(this.opts.dir!, { recursive: true });
    const unsaved = index.unsaved;
    const tmp = `${file}.${process.pid}.tmp`;
    try {
      await writeFile(tmp, JSON.stringify({ format: FORMAT, newest: index.newest, index: index.mini.toJSON() }));
      await rename(tmp, file);
      index.unsaved -= unsaved;
    } catch (e) {
      await unlink(tmp).catch(() => {});
      throw e;
    }
  }

  /** Drop the least recently searched indexes (written to disk first) while over `maxDocs`; never `keep`. */
  private async evict(keep: string): Promise<void> {
    while (this.size > this.maxDocs) {
      const oldest = [...this.indexes.keys()].find((t) => t !== keep);
      if (oldest === undefined) return;
      const index = this.indexes.get(oldest)!;
      this.indexes.delete(oldest);
      await index.busy;
      await this.save(oldest, index).catch(() => {});
    }
  }

  private fileOf(team: string): string | null {
    return this.opts.dir === null ? null : join(this.opts.dir, `${encodeURIComponent(team)}.json`);
  }
}
