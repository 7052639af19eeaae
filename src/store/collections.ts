// Every repository of the store, declared once (docs/ARCHITECTURE.md §3): what it is called, where
// each backend keeps it, how long its records live, what goes with a record, and which worker a
// write to it wakes. Both backends build their repositories from it (lmdb/index.ts, pg/index.ts),
// the PostgreSQL migrations create the collections' tables from it (pg/schema.ts), the store
// interface types the repositories from it (interface.ts), and test/store/collections.test.ts
// holds both backends and the PostgreSQL schema to it.
//
// A new collection of records is one entry of COLLECTIONS (its `since` the schema version whose
// migration creates its table: a new migration at the end of pg/schema.ts, for a version not yet
// released) plus the code that uses it. Repositories with layouts of their own (the queue, the
// outbox, counters…) are classes of each backend; REPOSITORIES lists them with their databases
// and tables, so that this file names everything the store keeps.
import type { Rec } from './interface';
import type {
  TeamRec,
  UserRec,
  SessionRec,
  InviteRec,
  AccountTokenRec,
  ApiKeyRec,
  DomainRec,
  SegmentRec,
  ContactRec,
  BroadcastRec,
  SuppressionRec,
  FullMailboxRec,
  LogRec,
  AuditRec,
} from './records';
import type { IncidentRec, ListingRec, SendingIpRec } from './delivery-records';
import type { EmailRec, EmailContent, EventRec } from './email-records';
import type { WebhookRec, WebhookEventRec, WebhookAttemptRec } from './webhook-records';
import type { ReceivedEmailRec, ReceivedContent, SpooledMessage, DmarcReportRec, TlsReportSentRec } from './inbound-records';
import type { TemplateRec, TemplateVersionRec } from './template-records';
import type { TopicRec, ContactPropertyRec, ContactImportRec, DomainClaimRec } from './audience-records';
import type { CustomEventRec, AutomationRec, AutomationRunRec } from './automation-records';
import type { EmailInsightsRec } from './insight-records';
import type { AcmeRec } from './acme-records';
import type { InboxRec, InboxLabelRec, InboxThreadRec, InboxMessageRec, InboxDraftRec } from './inbox-records';
import type { AgentRunRec } from './agent-records';

/** Due work a store signal announces after a commit, and the back office's worker it wakes (backoffice/parts.ts). */
export const SIGNALS = {
  queue: 'delivery',
  outbox: 'webhooks',
  inbound: 'inbound',
  automations: 'automations',
  agent: 'agent',
  incoming: 'incoming',
} as const;
export type Signal = keyof typeof SIGNALS;

/**
 * What a change a dashboard session is told of concerns (docs/api.md §19.15, the live stream): the
 * record's kind. `email` comes from the event function (events/index.ts), the others from the
 * writes of the collections that declare them (`changes`).
 */
export const CHANGE_TOPICS = ['email', 'broadcast', 'domain', 'import', 'automation_run', 'queue', 'inbox_thread'] as const;
export type ChangeTopic = (typeof CHANGE_TOPICS)[number];

/** A record of a team that changed in a commit; `id` null: several of that kind (reload the list). */
export interface Change {
  team: string;
  topic: ChangeTopic;
  id: string | null;
}

/** A write method that makes work due: always (`true`), or when its arguments pass the test. */
export type Firing = true | ((...args: never[]) => boolean);

/** Which signal a repository's writes fire, and which of its write methods do. */
export interface Wakes {
  signal: Signal;
  by: Record<string, Firing>;
}

// ---- Retention -----------------------------------------------------------------------------

const DAY = 86_400_000;

/** What retention is made of: the store's options (StoreOptions), in ms. */
export interface RetentionPolicy {
  /** retention.days. */
  retentionMs: number;
  /** How long past its send time a record may still be work in progress (StoreOptions.holdMs). */
  holdMs: number;
}

export const retentionPolicy = (o: { retentionDays: number; holdMs: number }): RetentionPolicy => ({ retentionMs: o.retentionDays * DAY, holdMs: o.holdMs });

/** How long a collection's records are kept. */
export interface Retention<T> {
  /** The expiry (ms) of a record, or null to keep it: made once per store, called per put. */
  expiresAt(p: RetentionPolicy): (r: T) => number | null;
  /** The least time any record is kept (the embedded store's sweep by id, `byId`). */
  minAgeMs?(p: RetentionPolicy): number;
}

/** Kept for the retention period after creation. */
const AFTER_CREATION: Retention<{ created_at: string }> = {
  expiresAt: (p) => (r) => Date.parse(r.created_at) + p.retentionMs,
  minAgeMs: (p) => p.retentionMs,
};

/** Kept for the retention period after the later of creation and scheduled send, plus the hold. */
const AFTER_SEND: Retention<{ created_at: string; scheduled_at?: string | null }> = {
  expiresAt: (p) => (r) => Math.max(Date.parse(r.created_at), r.scheduled_at ? Date.parse(r.scheduled_at) : 0) + p.retentionMs + p.holdMs,
  minAgeMs: (p) => p.retentionMs + p.holdMs,
};

/** Kept while it runs (a loop with waits may run for ever), then for the retention period. */
const AFTER_COMPLETION: Retention<{ completed_at: string | null }> = {
  expiresAt: (p) => (r) => (r.completed_at ? Date.parse(r.completed_at) + p.retentionMs : null),
};

/** Kept until the record's own `expires_at` (ms). */
const UNTIL_EXPIRES_AT: Retention<{ expires_at: number }> = { expiresAt: () => (r) => r.expires_at };

/** Kept for the retention period after creation, and never less than 90 days (DMARC's policy step reads 30). */
const REPORTS_KEPT: Retention<{ created_at: string }> = {
  expiresAt: (p) => (r) => Date.parse(r.created_at) + Math.max(p.retentionMs, 90 * DAY),
};

/** Kept for the retention period after it was last seen (an incident that goes on is kept). */
const AFTER_LAST_SEEN: Retention<{ last_seen_at: string }> = { expiresAt: (p) => (r) => Date.parse(r.last_seen_at) + p.retentionMs };

/** Kept for the retention period after it was last checked (a zone or address no longer asked about goes). */
const AFTER_CHECKED: Retention<{ checked_at: string }> = { expiresAt: (p) => (r) => Date.parse(r.checked_at) + p.retentionMs };

// ---- Collections of records ------------------------------------------------------------------

/** A secondary index of a collection, kept in the same unit of work as the record. */
export interface IndexDef<T, I extends string> {
  name: I;
  /** Index value of a record; null/undefined = not indexed. */
  value: (r: T) => string | null | undefined;
  /** One record per value (per team, or install-wide when `global`): a PostgreSQL constraint. */
  unique?: boolean;
  /** Across teams (domain names, API key hashes). */
  global?: boolean;
  /**
   * The value is set when the record is made and never changes (an email's broadcast): the
   * embedded store's put writes its row again rather than reading the stored record to remove
   * the old one.
   */
  fixed?: boolean;
}

/**
 * A collection of records keyed (team, id) — ids are UUIDv7, so a team's records sort oldest
 * first — with secondary indexes. LMDB: databases `<table>` and `<table>.idx`; PostgreSQL: table
 * `<table>` with a column `i_<index>` per index and `expires` (pg/schema.ts `recordsTable`).
 */
export interface CollectionDecl<T extends Rec, I extends string = never> {
  /** Its LMDB database and PostgreSQL table. */
  table: string;
  /**
   * The schema version whose migration creates its table (pg/schema.ts). A released migration is
   * never edited: a released collection's indexes stay as they are (a new one is a migration of
   * its own, and an LMDB index rebuilt).
   */
  since: number;
  indexes?: IndexDef<T, I>[];
  retention?: Retention<T>;
  /**
   * Retention walks ids: they are UUIDv7 made with the record, so the embedded store's sweep
   * reads each team's oldest (lmdb/collection.ts `RangeRetention`) and writes no TTL row per
   * record. `append`: records are written once and never replaced (a put reads nothing first).
   */
  byId?: 'append' | 'rewrite';
  /** The repository holding what belongs to a record (its body, its file): dropped with it. */
  owns?: keyof typeof CONTENTS | 'importFiles';
  /** Read through an in-memory cache outside units of work (cached.ts), cleared by its writes on every node. */
  cached?: true;
  /** The worker a write wakes (none does today: work is announced by the work tables). */
  wakes?: Wakes;
  /** Its puts and removes are changes the dashboard's live stream carries, under this topic. */
  changes?: ChangeTopic;
}

const collection = <T extends Rec, I extends string = never>(d: CollectionDecl<T, I>) => d;

/** The collections of records, in the order of their tables in the schema. */
export const COLLECTIONS = {
  teams: collection<TeamRec>({ table: 'teams', since: 1 }),
  /** Dashboard users, by address (install-wide). */
  users: collection<UserRec, 'email'>({
    table: 'users',
    since: 1,
    indexes: [{ name: 'email', value: (u) => u.email.toLowerCase(), unique: true, global: true }],
  }),
  /** Dashboard sessions: by token hash (install-wide) and per user. */
  sessions: collection<SessionRec, 'token' | 'user'>({
    table: 'sessions',
    since: 1,
    indexes: [
      { name: 'token', value: (x) => x.token_hash, unique: true, global: true },
      { name: 'user', value: (x) => x.user_id },
    ],
    retention: UNTIL_EXPIRES_AT,
  }),
  /** Pending team invitations, by token hash (install-wide). */
  invites: collection<InviteRec, 'token'>({
    table: 'invites',
    since: 1,
    indexes: [{ name: 'token', value: (x) => x.token_hash, unique: true, global: true }],
    retention: UNTIL_EXPIRES_AT,
  }),
  /** Single-use links mailed to users (password resets, email changes), by token hash (install-wide). */
  accountTokens: collection<AccountTokenRec, 'token'>({
    table: 'account_tokens',
    since: 13,
    indexes: [{ name: 'token', value: (x) => x.token_hash, unique: true, global: true }],
    retention: UNTIL_EXPIRES_AT,
  }),
  /** API keys, by the hash of their token (install-wide): read by every request. */
  apiKeys: collection<ApiKeyRec, 'hash'>({
    table: 'api_keys',
    since: 1,
    indexes: [{ name: 'hash', value: (k) => k.token_hash, unique: true, global: true }],
    cached: true,
  }),
  /** Sending domains, by name (install-wide): read by every send. */
  domains: collection<DomainRec, 'name'>({
    table: 'domains',
    since: 1,
    indexes: [{ name: 'name', value: (d) => d.name, unique: true, global: true }],
    cached: true,
    changes: 'domain',
  }),
  segments: collection<SegmentRec>({ table: 'segments', since: 1 }),
  /** Contacts, one per address and team. */
  contacts: collection<ContactRec, 'email'>({ table: 'contacts', since: 1, indexes: [{ name: 'email', value: (c) => c.email.toLowerCase(), unique: true }] }),
  broadcasts: collection<BroadcastRec>({ table: 'broadcasts', since: 1, changes: 'broadcast' }),
  suppressions: collection<SuppressionRec, 'email'>({
    table: 'suppressions',
    since: 1,
    indexes: [{ name: 'email', value: (s) => s.email.toLowerCase(), unique: true }],
  }),
  /** The API request log. */
  logs: collection<LogRec>({ table: 'logs', since: 1, retention: AFTER_CREATION, byId: 'append' }),
  /** The audit log of administrative actions (docs/api.md §19.11): kept like the request log, never changed. */
  auditLog: collection<AuditRec>({ table: 'audit_log', since: 7, retention: AFTER_CREATION, byId: 'append' }),
  /** Sent emails; a broadcast's through the `broadcast` index. */
  emails: collection<EmailRec, 'broadcast'>({
    table: 'emails',
    since: 1,
    indexes: [{ name: 'broadcast', value: (e) => e.broadcast_id, fixed: true }],
    retention: AFTER_SEND,
    byId: 'rewrite',
    owns: 'emailContent',
  }),
  /** Event log of emails and contacts, listed per subject through the `subject` index. */
  events: collection<EventRec, 'subject'>({
    table: 'events',
    since: 1,
    indexes: [{ name: 'subject', value: (e) => e.subject_id }],
    retention: AFTER_CREATION,
    byId: 'append',
  }),
  webhooks: collection<WebhookRec>({ table: 'webhooks', since: 1 }),
  /** One record per webhook and event (`msg_…` ids), listed per webhook; `outstanding` while due. */
  webhookEvents: collection<WebhookEventRec, 'webhook' | 'outstanding'>({
    table: 'webhook_events',
    since: 1,
    indexes: [
      { name: 'webhook', value: (e) => e.webhook_id },
      { name: 'outstanding', value: (e) => (e.due === null ? null : e.webhook_id) },
    ],
    retention: AFTER_SEND,
  }),
  webhookAttempts: collection<WebhookAttemptRec, 'event'>({
    table: 'webhook_attempts',
    since: 1,
    indexes: [{ name: 'event', value: (a) => a.event_id }],
    retention: AFTER_CREATION,
  }),
  receivedEmails: collection<ReceivedEmailRec>({ table: 'received_emails', since: 1, retention: AFTER_CREATION, byId: 'append', owns: 'receivedContent' }),
  /** Email templates; `alias` is unique per team. */
  templates: collection<TemplateRec, 'alias'>({ table: 'templates', since: 1, indexes: [{ name: 'alias', value: (t) => t.alias, unique: true }] }),
  /**
   * The published versions of templates (docs/api.md §20.5), by template (`template`) and by
   * `<template id>:<number>` (`number`, unique); keyed by the version's id (UUIDv7, made when the
   * content was: a template's versions sort in the order they were published).
   */
  templateVersions: collection<TemplateVersionRec, 'template' | 'number'>({
    table: 'template_versions',
    since: 4,
    indexes: [
      { name: 'template', value: (v) => v.template_id, fixed: true },
      { name: 'number', value: (v) => `${v.template_id}:${v.number}`, unique: true, fixed: true },
    ],
  }),
  topics: collection<TopicRec>({ table: 'topics', since: 1 }),
  /** Contact property definitions, one per key and team. */
  contactProperties: collection<ContactPropertyRec, 'key'>({
    table: 'contact_properties',
    since: 1,
    indexes: [{ name: 'key', value: (p) => p.key, unique: true }],
  }),
  /** Contact imports; each owns its uploaded file (`importFiles`). */
  contactImports: collection<ContactImportRec>({ table: 'contact_imports', since: 1, owns: 'importFiles', changes: 'import' }),
  /** Domain claims, by the id their domain gets (`domain`, unique) and by name. */
  domainClaims: collection<DomainClaimRec, 'domain' | 'name'>({
    table: 'domain_claims',
    since: 1,
    indexes: [
      { name: 'domain', value: (c) => c.domain_id, unique: true },
      { name: 'name', value: (c) => c.name },
    ],
  }),
  /** Custom event definitions, one per name and team. */
  customEvents: collection<CustomEventRec, 'name'>({ table: 'custom_events', since: 1, indexes: [{ name: 'name', value: (e) => e.name, unique: true }] }),
  /** Automations; `trigger` indexes the enabled ones by their trigger's event name. */
  automations: collection<AutomationRec, 'trigger'>({
    table: 'automations',
    since: 1,
    indexes: [{ name: 'trigger', value: (a) => (a.status === 'enabled' ? a.trigger : null) }],
  }),
  /**
   * Automation runs, by automation (`automation`), running ones by automation (`active`), paused
   * ones by automation (`paused`), and those waiting for an event by `<contact id>:<event name>`
   * (`waiting`).
   */
  automationRuns: collection<AutomationRunRec, 'automation' | 'active' | 'paused' | 'waiting'>({
    table: 'automation_runs',
    since: 1,
    indexes: [
      { name: 'automation', value: (r) => r.automation_id },
      { name: 'active', value: (r) => (r.status === 'running' ? r.automation_id : null) },
      { name: 'paused', value: (r) => (r.state === 'paused' ? r.automation_id : null) },
      { name: 'waiting', value: (r) => (r.state === 'waiting' && r.waiting_for !== null ? `${r.contact_id}:${r.waiting_for}` : null) },
    ],
    retention: AFTER_COMPLETION,
    changes: 'automation_run',
  }),
  /**
   * The deliverability insights of sent emails, keyed by the email's id, made when first asked for
   * (never on the accept or delivery path) and kept as long as the email.
   */
  emailInsights: collection<EmailInsightsRec>({ table: 'email_insights', since: 3, retention: AFTER_SEND, byId: 'rewrite' }),
  /**
   * Deliverability incidents (docs/api.md §19.9); a team's newest of each site and class by
   * `<site> <class>` (`latest`): the one a further reply counts on.
   */
  incidents: collection<IncidentRec, 'latest'>({
    table: 'incidents',
    since: 5,
    indexes: [{ name: 'latest', value: (r) => (r.latest ? `${r.site} ${r.class}` : null), unique: true }],
    retention: AFTER_LAST_SEEN,
  }),
  /**
   * Blocklist standings of the sending addresses and domains (docs/deliverability.md §3.1),
   * install-wide under one team key, by `<zone> <target>` (delivery/listings.ts).
   */
  listings: collection<ListingRec, 'key'>({
    table: 'listings',
    since: 10,
    indexes: [{ name: 'key', value: (r) => `${r.zone} ${r.target}`, unique: true }],
    retention: AFTER_CHECKED,
  }),
  /** Addresses whose mailbox was full at a permanent bounce lately, by address (suppressions/index.ts). */
  fullMailboxes: collection<FullMailboxRec, 'email'>({
    table: 'full_mailboxes',
    since: 5,
    indexes: [{ name: 'email', value: (r) => r.email.toLowerCase(), unique: true }],
    retention: UNTIL_EXPIRES_AT,
  }),
  /**
   * ACME (docs/mail.md §4, "Certificates by ACME"), install-wide (team ''): the account, the certificates and their
   * renewal state, the HTTP-01 challenges being answered — one copy every node of a cluster reads.
   */
  acme: collection<AcmeRec>({ table: 'acme', since: 8 }),
  /** Sending IPs' warm-up and state, install-wide (team `-`), by address (delivery/ips.ts). */
  sendingIps: collection<SendingIpRec>({ table: 'sending_ips', since: 11 }),
  /**
   * DMARC aggregate reports received (docs/deliverability.md §4), by domain (`domain`) and by
   * `<org_name> <report_id>` (`report`, unique per team: the same report mailed twice is kept once).
   */
  dmarcReports: collection<DmarcReportRec, 'domain' | 'report'>({
    table: 'dmarc_reports',
    since: 12,
    indexes: [
      { name: 'domain', value: (r) => r.domain_id, fixed: true },
      { name: 'report', value: (r) => `${r.org_name} ${r.report_id}`, unique: true, fixed: true },
    ],
    retention: REPORTS_KEPT,
  }),
  /** TLS-RPT reports sent (docs/deliverability.md §5), by `<day> <policy domain>` across teams: each goes out once. */
  tlsReportsSent: collection<TlsReportSentRec, 'report'>({
    table: 'tls_reports_sent',
    since: 12,
    indexes: [{ name: 'report', value: (r) => `${r.day} ${r.policy_domain}`, unique: true, global: true, fixed: true }],
    retention: AFTER_CREATION,
  }),
  /**
   * Inboxes (docs/api.md §25), by address across teams (`address`, unique): inbound mail to it
   * joins its threads (src/inboxes/intake.ts). Kept until deleted, with their threads, messages,
   * labels and drafts: a mailbox outlives retention.days.
   */
  inboxes: collection<InboxRec, 'address'>({
    table: 'inboxes',
    since: 14,
    indexes: [{ name: 'address', value: (r) => r.email_address, unique: true, global: true }],
  }),
  /** An inbox's labels, by inbox. */
  inboxLabels: collection<InboxLabelRec, 'inbox'>({ table: 'inbox_labels', since: 14, indexes: [{ name: 'inbox', value: (r) => r.inbox_id, fixed: true }] }),
  /**
   * Threads, by inbox (`inbox`), by `<inbox> <subject key>` (`subject`: threading by normalised
   * subject and participants, src/inboxes/threading.ts) and those in the trash by inbox (`trash`).
   */
  inboxThreads: collection<InboxThreadRec, 'inbox' | 'subject' | 'trash'>({
    table: 'inbox_threads',
    since: 14,
    indexes: [
      { name: 'inbox', value: (r) => r.inbox_id, fixed: true },
      { name: 'subject', value: (r) => `${r.inbox_id} ${r.subject_key}`, fixed: true },
      // The threads of an inbox's trash, which inboxes/trash.ts empties.
      { name: 'trash', value: (r) => (r.folder === 'trash' ? r.inbox_id : null) },
    ],
    changes: 'inbox_thread',
  }),
  /** A thread's messages, by thread (`thread`) and by `<inbox> <Message-ID>` (`message`: In-Reply-To and References). */
  inboxMessages: collection<InboxMessageRec, 'thread' | 'message'>({
    table: 'inbox_messages',
    since: 14,
    indexes: [
      { name: 'thread', value: (r) => r.thread_id, fixed: true },
      { name: 'message', value: (r) => (r.message_id ? `${r.inbox_id} ${r.message_id}` : null), fixed: true },
    ],
  }),
  /** Drafts, by inbox (`inbox`) and by thread (`thread`). */
  inboxDrafts: collection<InboxDraftRec, 'inbox' | 'thread'>({
    table: 'inbox_drafts',
    since: 14,
    indexes: [
      { name: 'inbox', value: (r) => (r.email_id ? null : r.inbox_id) },
      { name: 'thread', value: (r) => (r.email_id ? null : r.thread_id) },
    ],
  }),
  /** The Inbox Agent's runs (docs/api.md §25.10), by inbox (`inbox`): each new inbox message's, kept like the request log. */
  agentRuns: collection<AgentRunRec, 'inbox'>({
    table: 'agent_runs',
    since: 16,
    indexes: [{ name: 'inbox', value: (r) => r.inbox_id, fixed: true }],
    retention: AFTER_CREATION,
    byId: 'rewrite',
  }),
};

export type Collections = typeof COLLECTIONS;
export type RecordOf<D> = D extends CollectionDecl<infer T extends Rec, infer _I> ? T : never;
export type IndexOf<D> = D extends CollectionDecl<infer _T extends Rec, infer I> ? I : never;

// ---- Bodies ----------------------------------------------------------------------------------

/**
 * Bodies kept apart from their records, keyed (team, id) like them: text fields with the record,
 * bytes apart (LMDB: over 256 KB in files beside the database, lmdb/spill.ts; PostgreSQL: `bytea`
 * columns, pg/schema.ts `contentsTable`). Dropped with the record that owns them (`owns`).
 */
export interface ContentsDecl<C> {
  /** Its LMDB database (and spill folder) and PostgreSQL table. */
  table: string;
  /** The schema version whose migration creates its table. */
  since: number;
  /** The type of a body (never set). */
  readonly content?: C;
}

const contents = <C>(d: ContentsDecl<C>) => d;

export const CONTENTS = {
  /** Bodies and attachments of sent emails. */
  emailContent: contents<EmailContent>({ table: 'email_content', since: 1 }),
  /** Bodies and attachments of received emails. */
  receivedContent: contents<ReceivedContent>({ table: 'received_content', since: 1 }),
};

export type Contentses = typeof CONTENTS;
export type ContentOf<D> = D extends ContentsDecl<infer C> ? C : never;

// ---- Due indexes -----------------------------------------------------------------------------

/**
 * A durable to-do list, (dueAt, team, id) read from its head. LMDB: database `<name>`;
 * PostgreSQL: the rows of table `due_index` named `<name>`.
 */
export interface DueIndexDecl {
  name: string;
  wakes?: Wakes;
}

/** Work for the automation runner: runs due, automations to clean up after. */
const WAKES_RUNNER: Wakes = { signal: 'automations', by: { add: true } };

export const DUE_INDEXES = {
  /** Scheduled emails by send time. */
  schedule: { name: 'schedule' },
  /** Broadcasts with work to do: scheduled ones at their time, queued ones at 0 (due now). */
  broadcastSchedule: { name: 'broadcast_schedule' },
  /** Imports with rows still to process (due at 0): the durable to-do list a restart resumes. */
  importQueue: { name: 'import_queue' },
  /** Runs by the time their next step is due (the runner's due-work loop reads the head). */
  automationDue: { name: 'automation_due', wakes: WAKES_RUNNER },
  /** Automations whose runs are to be cancelled, resumed or deleted in batches (due at 0). */
  automationCleanup: { name: 'automation_cleanup', wakes: WAKES_RUNNER },
  /** Inbox Agent runs by the time they are due (queued: at once; taken: when their lease ends). */
  agentDue: { name: 'agent_due', wakes: { signal: 'agent', by: { add: true } } },
} satisfies Record<string, DueIndexDecl>;

export type DueIndexes = typeof DUE_INDEXES;

// ---- Repositories of their own -----------------------------------------------------------------

/**
 * A repository with a layout of its own, a class in each backend (lmdb/<name>.ts, pg/<name>.ts;
 * each file describes its keys): the LMDB databases and PostgreSQL tables it keeps.
 */
export interface RepositoryDecl {
  lmdb: string[];
  pg: string[];
  wakes?: Wakes;
}

export const REPOSITORIES = {
  /** The delivery queue (entries keyed by due time, destination and id). */
  queue: { lmdb: ['queue', 'queue.by_destination'], pg: ['queue'], wakes: { signal: 'queue', by: { put: true, add: true } } },
  /** The webhook outbox: one entry per event with an attempt due, per endpoint. */
  outbox: { lmdb: ['webhook_outbox'], pg: ['webhook_outbox'], wakes: { signal: 'outbox', by: { put: true } } },
  /** Inbound messages answered 250, waiting for the inbound processor (its bytes in `inbound_spool_content`). */
  inboundSpool: {
    lmdb: ['inbound_spool', 'inbound_spool.due', 'inbound_spool_content'],
    pg: ['inbound_spool'],
    // An update that gives up on a message (no due time) makes nothing due.
    wakes: { signal: 'inbound', by: { add: true, update: (_msg: SpooledMessage, due: number | null) => due !== null } },
  },
  /** Batches accepted as received, waiting to be written as their emails (sending/incoming.ts). */
  incoming: { lmdb: ['incoming'], pg: ['incoming'], wakes: { signal: 'incoming', by: { add: true } } },
  /** The automation trigger inbox, oldest first. */
  automationTriggers: { lmdb: ['automation_triggers'], pg: ['automation_triggers'], wakes: WAKES_RUNNER },
  /** Contact ↔ segment memberships, both ways. */
  memberships: { lmdb: ['members.by_segment', 'members.by_contact'], pg: ['memberships'] },
  /** Contacts' choices about topics, both ways. */
  topicChoices: { lmdb: ['topic_choices.by_contact', 'topic_choices.by_topic'], pg: ['topic_choices'] },
  /** A broadcast's contacts sent to so far. */
  broadcastProgress: { lmdb: ['broadcast_progress'], pg: ['broadcast_progress'] },
  /** Idempotency keys of sends (24 h). */
  idempotency: { lmdb: ['idempotency'], pg: ['idempotency'] },
  /** Counters per team and hour, per email, per broadcast link. */
  metrics: { lmdb: ['metrics', 'metrics_email', 'metrics_links'], pg: ['metrics', 'metrics_email', 'metrics_links'] },
  /** Uploaded CSV files of contact imports (LMDB: files under `content/contact_imports/`). */
  importFiles: { lmdb: [], pg: ['import_files'] },
  /** Destinations held per team. */
  queueHolds: { lmdb: ['queue_holds'], pg: ['queue_holds'] },
  /** Destination sites throttled lately (install-wide). */
  sites: { lmdb: ['sites'], pg: ['sites'] },
  /** MTA-STS policies as fetched (install-wide). */
  mtaSts: { lmdb: ['mta_sts'], pg: ['mta_sts'] },
  /** TLS-RPT results per team, day and policy domain. */
  tlsReports: { lmdb: ['tls_reports'], pg: ['tls_reports'] },
  /** Emails accepted per team, hour and day. */
  sendCounts: { lmdb: ['send_counts'], pg: ['send_counts'] },
} satisfies Record<string, RepositoryDecl>;

/**
 * What each backend keeps besides the repositories: LMDB's TTL index and per-install secrets;
 * PostgreSQL's secrets, cluster nodes, migrations applied, the rows of every due index, and the
 * full-text rows of inbox messages (kept by a trigger, pg/inbox-text.ts).
 */
export const INTERNAL = { lmdb: ['_ttl', 'meta'], pg: ['meta', 'nodes', 'schema_migrations', 'due_index', 'inbox_text'] };

// ---- Derived once, read by both backends at construction -----------------------------------------

/** A repository's writes that make work due, listed once for the wrappers of units of work (noting.ts). */
export interface Waking {
  signal: Signal;
  writes: readonly (readonly [method: string, when: Firing])[];
}

/** Every repository that wakes a worker, by name. */
export const WAKING: ReadonlyMap<string, Waking> = new Map(
  [...Object.entries(COLLECTIONS), ...Object.entries(DUE_INDEXES), ...Object.entries(REPOSITORIES)].flatMap(([name, d]) => {
    const wakes = (d as { wakes?: Wakes }).wakes;
    return wakes ? [[name, { signal: wakes.signal, writes: Object.entries(wakes.by) }] as const] : [];
  }),
);

/** The collections whose writes are live changes (`changes`), by name. */
export const CHANGING: ReadonlyMap<string, ChangeTopic> = new Map(
  Object.entries(COLLECTIONS).flatMap(([name, d]) => {
    const topic = (d as { changes?: ChangeTopic }).changes;
    return topic ? [[name, topic] as const] : [];
  }),
);

/** The PostgreSQL tables of a repository that a collection's record owns (`owns`). */
export function pgTablesOf(name: keyof typeof CONTENTS | keyof typeof REPOSITORIES): string[] {
  return name in CONTENTS ? [CONTENTS[name as keyof typeof CONTENTS].table] : REPOSITORIES[name as keyof typeof REPOSITORIES].pg;
}
