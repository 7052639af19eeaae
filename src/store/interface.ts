// The store interface: every read and write of Posthorn's state goes through these named methods,
// and nothing outside src/store/ sees how they are kept. LMDB (src/store/lmdb/) is the embedded
// backend; a second backend (PostgreSQL, for several nodes) implements the same interface without
// touching its callers. docs/ARCHITECTURE.md § "The store" describes the contract.
//
// Two shapes of access:
//   - `store.<repo>.<read>()` outside a unit of work: each call sees committed data.
//   - `store.write(async (tx) => …)`: one unit of work. Its reads see its own writes; everything it
//     writes commits together, flushed to disk, before the returned promise resolves ("accepted
//     means durable"); when `fn` throws, nothing it wrote is kept.
//
// Rules for a unit of work, which every backend relies on:
//   - `fn` awaits only `tx` reads. It never awaits the network, a timer, or another unit of work
//     (LMDB runs units of work one after another: waiting for another one would never end).
//   - `fn` may run again (a backend retries a unit of work that lost a conflict), so it has no
//     side effects outside `tx`; work to do after the commit goes to `tx.afterCommit`.
//   - Writes (`put`, `remove`, `add`…) return nothing and need no await: the backend orders them
//     before the unit's next read and before its commit.
import type { Readable } from 'node:stream';
import type { SegmentRec, ContactRec, LogRec } from './records';
import type { IncomingRec, QueueEntry } from './email-records';
import type { SpooledMessage } from './inbound-records';
import type { Subscription } from './audience-records';
import type { QueueHold, SiteState, MtaStsPolicy, TlsReportDay, TlsReportPolicy, TlsFailure } from './delivery-records';
import type { TriggerRec } from './automation-records';
import type { Change, Collections, Contentses, ContentOf, DueIndexes, IndexOf, RecordOf, Signal } from './collections';

/** Every record carries its team and a time-ordered id (UUIDv7). */
export interface Rec {
  id: string;
  team_id: string;
  created_at: string;
}

export interface PageQuery {
  /** 1–100, validated by the API layer. */
  limit?: number;
  /** Older than this id. */
  after?: string;
  /** Newer than this id. */
  before?: string;
}

export interface Page<T> {
  has_more: boolean;
  data: T[];
}

/**
 * Read side of a collection of records keyed by team and id. `I` names its indexes: unique ones
 * answer `find`, the others `findAll` and `pageBy`.
 */
export interface Records<T extends Rec, I extends string = never> {
  get(team: string, id: string): Promise<T | undefined>;
  /** The record holding `value` in a unique index (`team` omitted for install-wide indexes). */
  find(index: I, value: string, team?: string): Promise<T | undefined>;
  /** Records whose non-unique index equals `value`, oldest first. */
  findAll(index: I, value: string, team: string): Promise<T[]>;
  /**
   * One page of a team's records, newest first; `defaultLimit` applies without `limit` (null:
   * everything). `map` shapes each record; returning undefined leaves it out (a filter).
   */
  page<R = T>(team: string, q: PageQuery, defaultLimit: number | null, map?: (r: T) => R | undefined): Promise<Page<R>>;
  /** A page of the records whose non-unique index equals `value`, newest first by id. */
  pageBy<R = T>(index: I, value: string, team: string, q: PageQuery, defaultLimit: number | null, map?: (r: T) => R | undefined): Promise<Page<R>>;
  /** Every record of a team, oldest first (small collections: a team's webhooks, domains). */
  all(team: string): Promise<T[]>;
  /** How many records a team has, counted without reading them (GET /usage). */
  count(team: string): Promise<number>;
  /** Every record of every team (small collections only: teams, domains). */
  everything(): Promise<T[]>;
}

export interface RecordsTx<T extends Rec, I extends string = never> extends Records<T, I> {
  /** Insert or replace, keeping indexes and retention in step. */
  put(rec: T): void;
  /** Delete (and what belongs to the record: its content); nothing when it does not exist. */
  remove(team: string, id: string): void;
}

/** Bodies kept apart from their record, keyed by team and record id. */
export interface Contents<C> {
  /** Everything, byte fields included. */
  get(team: string, id: string): Promise<C | undefined>;
  /** Only the message bytes, when the body has them (/raw): large bodies are read from outside the database. */
  raw(team: string, id: string): Promise<Uint8Array | undefined>;
  /** The size of the byte fields (message and attachments), without reading them. */
  byteSize(team: string, id: string): Promise<number | undefined>;
  /**
   * `byteSize`, and everything as `get` gives it when that size is under `below`: one read where a
   * small body is the rule (a delivery attempt; on PostgreSQL a read is a round trip).
   */
  sized(team: string, id: string, below: number): Promise<{ size: number; content?: C } | undefined>;
  /** Only one attachment's payload (downloads). */
  file(team: string, id: string, attachment: string): Promise<Uint8Array | undefined>;
  /**
   * `get`, but the payloads of `attachments` that a large body keeps in files stay there: `files`
   * lacks them, and `open` has for each a function reading it as a stream of `slice`-byte pieces,
   * anew at each call (delivery composes a large message twice, and never holds it whole). A body
   * kept whole (small, or in PostgreSQL) comes as `get` gives it, `open` empty.
   */
  getOpening(
    team: string,
    id: string,
    attachments: readonly string[],
    slice: number,
  ): Promise<{ content: C; open: Record<string, () => Readable> } | undefined>;
  /**
   * Outside a unit of work, before the one that will `put` this body: write what a large body keeps
   * apart (its byte fields, as files, flushed) off the event loop, so the unit of work only names
   * it. Nothing for a small body. Once that unit of work has ended, `unstage` says how: the files
   * are kept when it committed, trashed when it failed (or never put the body).
   */
  stage(team: string, id: string, content: C): Promise<void>;
  unstage(team: string, id: string, committed: boolean): void;
}
export interface ContentsTx<C> extends Contents<C> {
  put(team: string, id: string, content: C): void;
}

/** Contact ↔ segment memberships. */
export interface Memberships {
  has(team: string, segmentId: string, contactId: string): Promise<boolean>;
  /** A contact's segment ids, in id order. */
  segmentsOf(team: string, contactId: string): Promise<string[]>;
  /** A contact's memberships with the time each was added, oldest first. */
  membershipsOf(team: string, contactId: string): Promise<{ segment_id: string; at: string }[]>;
  /** A segment's contact ids, in id order (oldest contact first). */
  contactsOf(team: string, segmentId: string): Promise<string[]>;
  /** A page of a segment's contacts, newest first. */
  pageContacts(team: string, segmentId: string, q: PageQuery): Promise<Page<ContactRec>>;
  /** A page of a contact's segments, newest first. */
  pageSegments(team: string, contactId: string, q: PageQuery, defaultLimit: number | null): Promise<Page<SegmentRec>>;
}
export interface MembershipsTx extends Memberships {
  /** Resolves true when the membership is new. */
  add(team: string, segmentId: string, contactId: string, at: string): Promise<boolean>;
  /** Resolves true when a membership was removed. */
  remove(team: string, segmentId: string, contactId: string): Promise<boolean>;
  /** Every membership of a contact (it is being deleted). */
  removeContact(team: string, contactId: string): Promise<void>;
  /** Every membership of a segment (it is being deleted; contacts stay). */
  removeSegment(team: string, segmentId: string): Promise<void>;
}

/**
 * Contacts' own choices about topics: [contact, topic] → opt_in | opt_out, kept in both directions
 * so a contact's choices and a topic's are each one range scan. No entry: the topic's default.
 */
export interface TopicChoices {
  get(team: string, contactId: string, topicId: string): Promise<Subscription | undefined>;
  /** A contact's choices: topic id → subscription. */
  of(team: string, contactId: string): Promise<Record<string, Subscription>>;
}
export interface TopicChoicesTx extends TopicChoices {
  set(team: string, contactId: string, topicId: string, subscription: Subscription): void;
  /** Every choice of a contact (it is being deleted). */
  removeContact(team: string, contactId: string): Promise<void>;
  /** Every choice about a topic (it is being deleted). */
  removeTopic(team: string, topicId: string): Promise<void>;
}

/**
 * Files uploaded for contact imports, kept beside the records (docs/api.md §12.9). A file is
 * streamed to disk and made durable before the record naming it commits; it stays until the
 * import is over.
 */
export interface ImportFiles {
  /**
   * Write `chunks` as the file of import (team, id), never inside a unit of work. Resolves with
   * its size once it is durable, or null — nothing kept — when it grew past `maxBytes`.
   */
  save(team: string, id: string, chunks: AsyncIterable<Uint8Array>, maxBytes: number): Promise<number | null>;
  /** The file from byte `offset` on, read as it is consumed. */
  read(team: string, id: string, offset: number): AsyncIterable<Uint8Array>;
  /** Remove a saved file no record names (an upload refused after it was saved). */
  discard(team: string, id: string): Promise<void>;
}
export interface ImportFilesTx extends ImportFiles {
  /** The import is over (or deleted): its file goes once this unit of work has committed. */
  drop(team: string, id: string): void;
}

/**
 * Where a held queue entry is kept: after every due time, so a claim never reaches it (docs/api.md
 * §19.7). `put` of an entry with `held` set ignores the time it is given and keeps it here.
 */
export const HELD_DUE = Number.MAX_SAFE_INTEGER;

/** Keys a queue scan (`Queue.due`) looks at, at most, entries passed over included. */
export const QUEUE_SCAN_LIMIT = 5000;

/**
 * A queue scan's verdict on a key: true passes the entry over, false takes it, 'stop' ends the
 * scan; 'domain' passes it over and tells the scan that every later key of its domain would be
 * passed over too (its site has no room), so a backend may leave them out unread.
 */
export type QueuePass = (domain: string, entryId: string, due: number) => boolean | 'stop' | 'domain';

/** Where a page of a team's entries to one destination ended: its last entry (`Queue.ofTeam`). */
export type QueueCursor = Pick<QueueEntry, 'id' | 'email_id'>;

/** A queue entry with its due time; null while it is held. */
export interface QueuedEntry {
  due: number | null;
  entry: QueueEntry;
}

/**
 * The durable delivery queue: entries ordered by due time. An entry is moved to its next attempt
 * time before each attempt (persist before acting), so a crash mid-attempt means a retry.
 */
export interface Queue {
  /**
   * Up to `limit` entries due at `now` (ms), earliest first; held entries never; with `after`, only
   * those due later than it. At most QUEUE_SCAN_LIMIT keys are looked at. `pass` leaves out entries
   * by their destination domain, id and due time without reading them (destinations with no room,
   * attempts in flight, sites suspended or over their rate); its 'stop' ends the scan there.
   */
  due(now: number, limit: number, pass?: QueuePass, after?: number): Promise<{ due: number; entry: QueueEntry }[]>;
  /** Due time of the earliest entry that is not held, or null when there is none (as of the latest commit). */
  nextDue(): Promise<number | null>;
  /** The live entries of one email. */
  entriesOf(team: string, emailId: string): Promise<QueueEntry[]>;
  /**
   * Up to `limit` of a team's entries (to one `destination`; after the entry `after` there),
   * held ones included, by destination, then in an order of the backend's that `after` continues.
   */
  ofTeam(team: string, q: { limit: number; destination?: string; after?: QueueCursor }): Promise<QueuedEntry[]>;
  size(): Promise<number>;
  /** Entries due at `now` (ready) and later or held (waiting), and when the oldest entry was queued (ms). */
  stats(now: number): Promise<{ ready: number; waiting: number; oldest: number | null }>;
}
export interface QueueTx extends Queue {
  /** Add or move an entry to `due` (ms); an entry with `held` set goes out of the due range instead. */
  put(entry: QueueEntry, due: number): void;
  /**
   * `put` for an entry just made (its id never queued): there is no earlier place to look up and
   * leave. It is held at once when its team holds its destination (docs/api.md §19.7), so that no
   * claim of the delivery engine has to find it due and move it aside.
   */
  add(entry: QueueEntry, due: number): void;
  /** Move the entry keyed [from, domain, entryId] to `to` (ms) — nothing when it is not there, or held. */
  defer(domain: string, entryId: string, from: number, to: number): void;
  /** The entry is finished. */
  remove(entry: QueueEntry): void;
}

/** Destination domains a team has put on hold (docs/api.md §19.7). */
export interface QueueHolds {
  has(team: string, destination: string): Promise<boolean>;
  /** A team's holds, by destination. */
  list(team: string): Promise<QueueHold[]>;
  /** Every team's holds (the delivery engine's claims: a handful). */
  all(): Promise<QueueHold[]>;
}
export interface QueueHoldsTx extends QueueHolds {
  hold(h: QueueHold): void;
  release(team: string, destination: string): void;
}

/** The shaping state of destination sites (docs/mail.md §3.1), written by delivery, read by GET /queue. */
export interface Sites {
  get(site: string): Promise<SiteState | undefined>;
  /** Every site with a state (those throttled lately: a handful). */
  all(): Promise<SiteState[]>;
}
export interface SitesTx extends Sites {
  put(state: SiteState): void;
  remove(site: string): void;
}

/** MTA-STS policies fetched for recipient domains (docs/mail.md §3.2), install-wide, kept until they expire. */
export interface MtaStsPolicies {
  get(domain: string): Promise<MtaStsPolicy | undefined>;
}
export interface MtaStsPoliciesTx extends MtaStsPolicies {
  /** Replace the domain's policy (a fetch under a new id, or a refresh). */
  put(policy: MtaStsPolicy): void;
}

/** Where a page of TLS-RPT days starts: after this day and policy domain (docs/api.md §19.8). */
export interface TlsReportCursor {
  day: string;
  domain: string;
}

/**
 * TLS-RPT data (RFC 8460): a team's TLS sessions per UTC day and MTA-STS policy domain, written
 * with the delivery attempts they come from, kept for the retention period.
 */
export interface TlsReports {
  /** One day of one policy domain. */
  get(team: string, day: string, domain: string): Promise<TlsReportDay | undefined>;
  /**
   * Up to `limit` of a team's days, newest day first and policy domains in order within a day,
   * from `since` to `until` (days, inclusive), after `after`.
   */
  list(team: string, q: { limit: number; since?: string; until?: string; after?: TlsReportCursor }): Promise<TlsReportDay[]>;
}
export interface TlsReportsTx extends TlsReports {
  /** Count one attempt's sessions: successes, and failures merged by kind (bounded, see MAX_TLS_FAILURE_KINDS). */
  add(team: string, day: string, domain: string, policy: TlsReportPolicy, success: number, failures: TlsFailure[]): void;
}

/**
 * Emails a team has had accepted, per clock hour and per UTC day (`limits.emails_per_hour` /
 * `emails_per_day`, docs/api.md §6.1): read and counted inside the unit of work that accepts them.
 */
export interface SendCounts {
  /** The team's counts for the hour and the UTC day holding `at` (ms). */
  used(team: string, at: number): Promise<{ hour: number; day: number }>;
}
export interface SendCountsTx extends SendCounts {
  /** Count `n` more emails in the hour and the day of `at`. */
  add(team: string, at: number, n: number): void;
}

/** A due index of (team, id) pairs by time: scheduled emails, broadcasts with work to do. */
export interface DueIndex {
  due(now: number, limit?: number): Promise<{ due: number; team: string; id: string }[]>;
  /** Due time of the earliest item, or null when there is none (as of the latest commit). */
  nextDue(): Promise<number | null>;
  size(): Promise<number>;
}
export interface DueIndexTx extends DueIndex {
  add(due: number, team: string, id: string): void;
  remove(due: number, team: string, id: string): void;
}

/**
 * The inbound spool (docs/mail.md §4): messages answered 250 and not processed yet, by due time,
 * with their bytes (large ones in files, like other large bodies). A message given up on stays,
 * never due again, until retention removes it.
 */
export interface InboundSpool {
  /** Ids of the messages due at `now` (ms), earliest first (the index only: nothing decoded). */
  due(now: number, limit: number): Promise<{ due: number; id: string }[]>;
  /** Due time of the earliest message, or null when none is due ever (as of the latest commit). */
  nextDue(): Promise<number | null>;
  get(id: string): Promise<SpooledMessage | undefined>;
  /** The bytes as received. */
  raw(id: string): Promise<Uint8Array | undefined>;
  /** Messages waiting to be processed, and given up on. */
  counts(): Promise<{ waiting: number; failed: number }>;
}
export interface InboundSpoolTx extends InboundSpool {
  /** A new message and its bytes, due at `due` (ms). */
  add(msg: SpooledMessage, raw: Uint8Array, due: number): void;
  /** Store the message's new state, due at `due`; null: given up, never due again. */
  update(msg: SpooledMessage, due: number | null): void;
  /** Processed: the message and its bytes go. */
  remove(id: string): void;
}

/**
 * Automation triggers (docs/api.md §24.6): committed by the ways in — an event sent, a contact
 * created or added to a segment — and taken by the back office, oldest first, in bounded batches,
 * to start runs and wake runs waiting for them. A trigger leaves in the unit of work that acts on it.
 */
export interface AutomationTriggers {
  /** Up to `limit` triggers, oldest first, of every team. */
  next(limit: number): Promise<TriggerRec[]>;
  size(): Promise<number>;
}
export interface AutomationTriggersTx extends AutomationTriggers {
  add(t: TriggerRec): void;
  remove(id: string): void;
}

/** Which contacts a broadcast being sent has covered: contact id → email id, or null (skipped). */
export interface BroadcastProgress {
  has(team: string, broadcastId: string, contactId: string): Promise<boolean>;
}
export interface BroadcastProgressTx extends BroadcastProgress {
  put(team: string, broadcastId: string, contactId: string, emailId: string | null): void;
  /** Forget a broadcast's progress (it is sent, or deleted). */
  clear(team: string, broadcastId: string): Promise<void>;
}

export interface IdempotencyRecord {
  fingerprint: string;
  status: number;
  body: unknown;
  /** ms */
  created_at: number;
}

/**
 * A unit of work stored an idempotency key that another process stored first, after this one
 * looked (cluster mode; a unique key in the database). Running it again would only collide again:
 * the caller reads the stored answer instead (sending/idempotency.ts).
 */
export class IdempotencyKeyTaken extends Error {
  constructor() {
    super('the idempotency key was stored by a concurrent request');
  }
}

/** How long an idempotency key is remembered after the first request (docs/api.md §5). */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;

/** Idempotency records of sends: (team, endpoint, key) → the first request's outcome, for 24 h. */
export interface Idempotency {
  get(team: string, endpoint: string, key: string, now?: number): Promise<IdempotencyRecord | undefined>;
}
export interface IdempotencyTx extends Idempotency {
  put(team: string, endpoint: string, key: string, rec: IdempotencyRecord): void;
}

export interface OutboxHead {
  team: string;
  webhook: string;
  /** Due time (ms) of the endpoint's earliest entry. */
  due: number;
}

/** The webhook outbox: one entry per webhook event with an attempt due, per endpoint. */
export interface Outbox {
  /** Entries of one endpoint due at `now`, earliest first. */
  due(team: string, webhook: string, now: number, limit: number): Promise<{ due: number; id: string }[]>;
  /**
   * The earliest entry of every endpoint that has any, in endpoint order starting after `after`
   * and wrapping around to it (round robin).
   */
  heads(after?: { team: string; webhook: string }): Promise<OutboxHead[]>;
  /** Due time of the earliest entry, or null when there is none (as of the latest commit). */
  nextDue(): Promise<number | null>;
  size(): Promise<number>;
}
export interface OutboxTx extends Outbox {
  put(team: string, webhook: string, due: number, eventId: string): void;
  remove(team: string, webhook: string, due: number, eventId: string): void;
}

/** Counters of one bucket: metric name → count. */
export type Counters = Record<string, number>;

/**
 * What a counter is kept per: the email's sending domain, its broadcast, the mailbox provider its
 * mail went to (a site of src/delivery/sites.toml or `other`; null before any attempt: docs/api.md
 * §7.9, "By mailbox provider"), the email itself.
 */
export interface MetricDims {
  domain_id: string;
  broadcast_id: string | null;
  site?: string | null;
  /** The sending IP of `delivery.ips` the event's attempt left from (README.md, "Sending IPs and warm-up"); none when the kernel chose. */
  ip?: string | null;
  email_id: string;
}

/** One hour of a team's counters for one domain × broadcast × site (or one email). */
export interface MetricBucket {
  /** Start of the hour, ms since the epoch (UTC). */
  hour: number;
  domain_id: string;
  broadcast_id: string | null;
  /** The mailbox provider (MetricDims.site); null: none (counted before any attempt, or before sites were kept). */
  site: string | null;
  /** The sending IP (MetricDims.ip); null: none (the kernel chose, or counted before any attempt). */
  ip: string | null;
  counts: Counters;
}
export interface EmailMetricBucket extends MetricBucket {
  email_id: string;
}

/** Clicks of one destination URL of a broadcast. */
export interface LinkClicks {
  url: string;
  clicks: number;
  unique_clicks: number;
}

/**
 * Engagement and delivery counters (docs/api.md §7.9), updated in the unit of work of the
 * event they count, so reading them never scans emails. Team buckets (per hour × domain ×
 * broadcast × site) are kept 13 months (`METRICS_TTL_MS`); per-email buckets as long as emails are.
 */
export interface Metrics {
  /** Team buckets with `from <= hour < to`, in hour order, handed to `each` one at a time. */
  scan(team: string, from: number, to: number, each: (b: MetricBucket) => void): Promise<void>;
  /** Per-email buckets with `from <= hour < to`, in hour order. */
  scanEmails(team: string, from: number, to: number, each: (b: EmailMetricBucket) => void): Promise<void>;
  /** A page of a broadcast's clicked links, in URL order; `after`/`before` are cursors from `cursor`. */
  links(team: string, broadcastId: string, q: PageQuery): Promise<Page<LinkClicks & { cursor: string }>>;
}
export interface MetricsTx extends Metrics {
  /** Add `counts` to the hour of `at` (ms) for these dimensions, team and email buckets alike. */
  add(team: string, at: number, dims: MetricDims, counts: Counters): void;
  /** Add to a broadcast link's clicks. */
  addLink(team: string, broadcastId: string, url: string, clicks: number, uniqueClicks: number): void;
}

/**
 * The incoming queue (docs/ARCHITECTURE.md §4, "The incoming queue"): batches accepted as received, waiting to be written as
 * their emails, keyed (team, first email id), oldest first.
 */
export interface Incoming {
  /** The requests waiting, oldest first: one team's, or every team's (null). Keys only. */
  waiting(team: string | null, limit: number): Promise<{ team: string; id: string }[]>;
  /** How many requests wait. */
  count(): Promise<number>;
}
export interface IncomingTx extends Incoming {
  add(rec: IncomingRec): void;
  /**
   * Read and remove a waiting request, or undefined when another unit of work took it first
   * (PostgreSQL: its row stays locked until this unit ends, so a concurrent take waits, then finds none).
   */
  take(team: string, id: string): Promise<IncomingRec | undefined>;
}

/** How long team metric buckets are kept: 13 months, beyond email retention. */
export const METRICS_TTL_MS = 396 * 24 * 3_600_000;

/** A repository in its read-only form (`R`) or with its writes (`W`). */
type Repo<M extends Mode, R, W extends R> = M extends 'write' ? W : R;
type Mode = 'read' | 'write';
type Coll<M extends Mode, T extends Rec, I extends string = never> = Repo<M, Records<T, I>, RecordsTx<T, I>>;

/** The collections of records, their bodies and the due indexes, typed from their declaration (collections.ts). */
type Declared<M extends Mode> = {
  [K in keyof Collections]: Coll<M, RecordOf<Collections[K]>, IndexOf<Collections[K]>>;
} & {
  [K in keyof Contentses]: Repo<M, Contents<ContentOf<Contentses[K]>>, ContentsTx<ContentOf<Contentses[K]>>>;
} & {
  [K in keyof DueIndexes]: Repo<M, DueIndex, DueIndexTx>;
};

/**
 * Every repository of the store, the one list both access modes are made from: the declared ones,
 * and those with layouts of their own (collections.ts `REPOSITORIES`).
 */
interface Repositories<M extends Mode> extends Declared<M> {
  /** Inbound messages answered 250, waiting for the inbound processor. */
  inboundSpool: Repo<M, InboundSpool, InboundSpoolTx>;
  /** Batches accepted as received, waiting to be written as their emails. */
  incoming: Repo<M, Incoming, IncomingTx>;
  memberships: Repo<M, Memberships, MembershipsTx>;
  queue: Repo<M, Queue, QueueTx>;
  /** Destinations held per team: their entries wait, out of the due range, until released. */
  queueHolds: Repo<M, QueueHolds, QueueHoldsTx>;
  /** Destination sites throttled lately: suspended until when, how slowed. */
  sites: Repo<M, Sites, SitesTx>;
  /** MTA-STS policies of recipient domains, as fetched (install-wide). */
  mtaSts: Repo<M, MtaStsPolicies, MtaStsPoliciesTx>;
  /** TLS-RPT results per team, day and policy domain. */
  tlsReports: Repo<M, TlsReports, TlsReportsTx>;
  /** Emails accepted per team, hour and day (sending limits). */
  sendCounts: Repo<M, SendCounts, SendCountsTx>;
  broadcastProgress: Repo<M, BroadcastProgress, BroadcastProgressTx>;
  idempotency: Repo<M, Idempotency, IdempotencyTx>;
  outbox: Repo<M, Outbox, OutboxTx>;
  metrics: Repo<M, Metrics, MetricsTx>;
  topicChoices: Repo<M, TopicChoices, TopicChoicesTx>;
  importFiles: Repo<M, ImportFiles, ImportFilesTx>;
  automationTriggers: Repo<M, AutomationTriggers, AutomationTriggersTx>;
}

/** What can be read, outside a unit of work or inside one. */
export interface StoreReader extends Repositories<'read'> {}

/** One unit of work (see the top of this file). */
export interface Tx extends Repositories<'write'> {
  /** Run `fn` once the unit of work has committed (never when it fails or is retried). */
  afterCommit(fn: () => void): void;
  /**
   * Note a change the dashboard's live stream tells the team's sessions of, once the unit commits
   * (the event function's emails; the collections declaring `changes` note their own writes).
   */
  changed(change: Change): void;
}

/** Due work the store announces after a commit: a worker sleeping on it looks again (collections.ts `SIGNALS`). */
export type { Signal, Change };

/** Per-install secrets (link signing, VERP tags…): 32 random bytes each, created on first open. */
export const SECRET_NAMES = ['links', 'verp', 'tracking', 'sessions'] as const;
export type SecretName = (typeof SECRET_NAMES)[number];

/** What GET /health and the rate limiter's share ask of the store. */
export interface StoreStatus {
  backend: 'lmdb' | 'postgres';
  /** The store answers now (always true for the embedded one). */
  reachable: boolean;
  /** Processes sharing the store, seen in the last 30 s (1 for the embedded store). */
  nodes: number;
  /** With regions (README.md, "Regions"): regions whose queued mail waits, no node of theirs alive. */
  regions_waiting?: string[];
}

/** Full-text search of inbox messages kept by the database itself (PostgreSQL, pg/inbox-text.ts; docs/api.md §25.9). */
export interface InboxTextSearch {
  /**
   * The threads of an inbox with a message holding every word of `q` (the last as a prefix), best
   * first, each with its best message; at most `limit`. No words: none.
   */
  query(team: string, inboxId: string, q: string, limit: number): Promise<{ thread_id: string; email_id: string }[]>;
}

export interface Store extends StoreReader {
  /** Inbox search by the database (PostgreSQL); null: the store has none (LMDB — src/inboxes/search.ts indexes in memory). */
  readonly inboxText: InboxTextSearch | null;
  /** One unit of work; resolves with `fn`'s result once its writes are committed and flushed. */
  write<T>(fn: (tx: Tx) => Promise<T>, opts?: WriteOptions): Promise<T>;
  /** Call `listener` after every commit that made work of this kind due (or due sooner). */
  on(signal: Signal, listener: () => void): void;
  /**
   * Call `listener` with the changes (Tx.changed) of every commit of this store instance and, when
   * `hearsOthers`, of every other instance sharing the database (PostgreSQL: other nodes, and this
   * node's other thread), carried by the signals' NOTIFY (pg/signals.ts).
   */
  onChange(listener: (changes: readonly Change[]) => void): void;
  /** True when onChange hears other store instances' commits (PostgreSQL); LMDB hears only its own. */
  readonly hearsOthers: boolean;
  secret(name: SecretName): Buffer;
  /**
   * True when this process is the only one working the store (LMDB): an attempt found in flight
   * at start was this process's own, cut short. False in cluster mode (PostgreSQL), where it may be
   * another node's: it is retried when its lease — the next attempt time its claim persisted —
   * runs out, by whichever node claims it then.
   */
  readonly exclusive: boolean;
  /**
   * Run `fn` unless another process sharing the store runs the job `name` now (PostgreSQL: an
   * advisory lock held for the run; LMDB: one process, `fn` always runs). Resolves false when it
   * was skipped. For jobs one node at a time must do: retention sweeps, DNS re-checks, one
   * broadcast's or import's batches.
   */
  singleton(name: string, fn: () => Promise<void>): Promise<boolean>;
  status(): Promise<StoreStatus>;
  /** Delete what has expired (retention, idempotency keys). Resolves to the number removed. */
  sweep(now?: number): Promise<number>;
  /** True when the store holds no team yet (first start). */
  isEmpty(): Promise<boolean>;
  /** Resolves once every write issued so far is committed. */
  settled(): Promise<void>;
  /**
   * Request-log entries (docs/api.md §15), written outside any unit of work: nothing reads them in
   * one, and nothing has to commit with them. Resolves once they are committed. The embedded store
   * encodes them on the calling thread and leaves their insertion to LMDB's writer thread, with
   * its next commit: the HTTP thread spends on it only the encoding, about a quarter of the write.
   */
  appendLogs(recs: LogRec[]): Promise<void>;
  /**
   * Files the store keeps beside its records (large bodies): a crash's orphans go to the trash,
   * old trash goes. Once at start, before anything writes.
   */
  sweepFiles(): Promise<{ orphans: number; purged: number }>;
  /**
   * A consistent copy of the whole store, taken while it keeps serving: `dest`, and the files of
   * large bodies under `<dest>.content/` (as many as `files` says).
   */
  backup(dest: string, opts: { compact: boolean }): Promise<{ files: number }>;
  close(): Promise<void>;
}

export interface StoreOptions {
  dataDir: string;
  /** `postgres://…`: the PostgreSQL backend (cluster mode); unset: LMDB in `dataDir`. */
  databaseUrl?: string | null;
  /** Days sent mail, events, logs and received mail are kept (retention.days). */
  retentionDays: number;
  /**
   * How long past its send time a record may still be work in progress (the delivery retry
   * window, a webhook's retries); retention never deletes an email or webhook event before that.
   */
  holdMs: number;
  /** This node's region (`cluster.region`): the PostgreSQL queue hands it only its region's mail (README.md, "Regions"). */
  region?: string | null;
}

/** How a unit of work may be committed (Store.write). */
export interface WriteOptions {
  /**
   * It may wait for the patient units of this thread under way to be committed and go with the
   * next of them (group commit): fewer, larger commits for background work that waits for nobody —
   * the delivery engine's claims and outcomes. Both backends honour it (PostgreSQL: one
   * transaction for the group, a savepoint for each unit, pg/env.ts).
   */
  patient?: boolean;
  /**
   * The unit claims work for this process: what it writes to the work tables (queue, webhook
   * outbox, due indexes, inbound spool) is this node's lease, handed to the other nodes at once if
   * this one dies (PostgreSQL: pg/index.ts, takeOver). The embedded store has one process: no-op.
   */
  lease?: boolean;
}
