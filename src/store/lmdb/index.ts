// The embedded backend of the store interface (../interface.ts): one LMDB environment in data_dir
// holding every collection, index and queue, written in batched, flushed transactions.
import { open } from 'lmdb';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { LmdbEnv, ENCODING, MAX_DBS } from './env';
import { SpillFiles } from './spill';
import { TtlIndex } from './ttl';
import { LmdbCollection, LmdbContents } from './collection';
import { LmdbMemberships } from './memberships';
import { LmdbQueue } from './queue';
import { LmdbQueueHolds } from './queue-holds';
import { LmdbSites } from './sites';
import { LmdbMtaSts } from './mta-sts';
import { LmdbTlsReports } from './tls-reports';
import { LmdbSendCounts } from './send-counts';
import { LmdbDueIndex } from './due-index';
import { LmdbBroadcastProgress } from './broadcast-progress';
import { LmdbIdempotency } from './idempotency';
import { LmdbOutbox } from './outbox';
import { LmdbMetrics } from './metrics';
import { LmdbTopicChoices } from './topic-choices';
import { LmdbImportFiles, IMPORT_FILES, IMPORT_FILE_PARTS } from './import-files';
import { LmdbInboundSpool } from './inbound-spool';
import { LmdbAutomationTriggers } from './automation-triggers';
import { loadSecrets } from './secrets';
import { CachedRecords } from '../cached';
import { guarded } from '../guarded';
import { log } from '../../log';
import type { Signal, SecretName, Store, StoreOptions, StoreStatus, Tx, WriteOptions, InboundSpoolTx, DueIndexTx, AutomationTriggersTx } from '../interface';
import type { TeamRec, UserRec, SessionRec, InviteRec, ApiKeyRec, DomainRec, SegmentRec, ContactRec, BroadcastRec, SuppressionRec, LogRec } from '../records';
import type { EmailRec, EmailContent, EventRec } from '../email-records';
import type { WebhookRec, WebhookEventRec, WebhookAttemptRec } from '../webhook-records';
import type { ReceivedEmailRec, ReceivedContent, SpooledMessage } from '../inbound-records';
import type { TemplateRec } from '../template-records';
import type { TopicRec, ContactPropertyRec, ContactImportRec, DomainClaimRec } from '../audience-records';
import type { CustomEventRec, AutomationRec, AutomationRunRec } from '../automation-records';

const DAY = 86_400_000;

/** The repositories, shared by every unit of work (LMDB reads inside one see its writes). */
class Repos {
  readonly teams: LmdbCollection<TeamRec>;
  readonly users: LmdbCollection<UserRec, 'email'>;
  readonly sessions: LmdbCollection<SessionRec, 'token' | 'user'>;
  readonly invites: LmdbCollection<InviteRec, 'token'>;
  readonly apiKeys: LmdbCollection<ApiKeyRec, 'hash'>;
  readonly domains: LmdbCollection<DomainRec, 'name'>;
  readonly segments: LmdbCollection<SegmentRec>;
  readonly contacts: LmdbCollection<ContactRec, 'email'>;
  readonly broadcasts: LmdbCollection<BroadcastRec>;
  readonly suppressions: LmdbCollection<SuppressionRec, 'email'>;
  readonly logs: LmdbCollection<LogRec>;
  readonly emails: LmdbCollection<EmailRec, 'broadcast'>;
  readonly emailContent: LmdbContents<EmailContent>;
  readonly events: LmdbCollection<EventRec, 'subject'>;
  readonly webhooks: LmdbCollection<WebhookRec>;
  readonly webhookEvents: LmdbCollection<WebhookEventRec, 'webhook' | 'outstanding'>;
  readonly webhookAttempts: LmdbCollection<WebhookAttemptRec, 'event'>;
  readonly receivedEmails: LmdbCollection<ReceivedEmailRec>;
  readonly receivedContent: LmdbContents<ReceivedContent>;
  readonly templates: LmdbCollection<TemplateRec, 'alias'>;
  readonly inboundSpool: LmdbInboundSpool;
  readonly memberships: LmdbMemberships;
  readonly queue: LmdbQueue;
  readonly queueHolds: LmdbQueueHolds;
  readonly sites: LmdbSites;
  readonly mtaSts: LmdbMtaSts;
  readonly tlsReports: LmdbTlsReports;
  readonly sendCounts: LmdbSendCounts;
  readonly schedule: LmdbDueIndex;
  readonly broadcastSchedule: LmdbDueIndex;
  readonly broadcastProgress: LmdbBroadcastProgress;
  readonly idempotency: LmdbIdempotency;
  readonly outbox: LmdbOutbox;
  readonly metrics: LmdbMetrics;
  readonly topics: LmdbCollection<TopicRec>;
  readonly topicChoices: LmdbTopicChoices;
  readonly contactProperties: LmdbCollection<ContactPropertyRec, 'key'>;
  readonly contactImports: LmdbCollection<ContactImportRec>;
  readonly importFiles: LmdbImportFiles;
  readonly importQueue: LmdbDueIndex;
  readonly domainClaims: LmdbCollection<DomainClaimRec, 'domain' | 'name'>;
  readonly customEvents: LmdbCollection<CustomEventRec, 'name'>;
  readonly automations: LmdbCollection<AutomationRec, 'trigger'>;
  readonly automationRuns: LmdbCollection<AutomationRunRec, 'automation' | 'active' | 'paused' | 'waiting'>;
  readonly automationDue: LmdbDueIndex;
  readonly automationCleanup: LmdbDueIndex;
  readonly automationTriggers: LmdbAutomationTriggers;

  /** Large bodies' byte fields, in files beside the database. */
  readonly spill: SpillFiles;

  constructor(env: LmdbEnv, ttl: TtlIndex, opts: StoreOptions) {
    this.spill = new SpillFiles(join(opts.dataDir, 'content'));
    const retained = (r: { created_at: string }) => Date.parse(r.created_at) + opts.retentionDays * DAY;
    // Kept for the retention period after the later of creation and scheduled send, plus the hold.
    const retainedWork = (r: { created_at: string; scheduled_at?: string | null }) =>
      Math.max(Date.parse(r.created_at), r.scheduled_at ? Date.parse(r.scheduled_at) : 0) + opts.retentionDays * DAY + opts.holdMs;
    this.teams = new LmdbCollection(env, ttl, 'teams');
    this.users = new LmdbCollection(env, ttl, 'users', [{ name: 'email', value: (u) => u.email.toLowerCase(), unique: true, global: true }]);
    this.sessions = new LmdbCollection<SessionRec, 'token' | 'user'>(
      env,
      ttl,
      'sessions',
      [
        { name: 'token', value: (x) => x.token_hash, unique: true, global: true },
        { name: 'user', value: (x) => x.user_id },
      ],
      (x) => x.expires_at,
    );
    this.invites = new LmdbCollection<InviteRec, 'token'>(
      env,
      ttl,
      'invites',
      [{ name: 'token', value: (x) => x.token_hash, unique: true, global: true }],
      (x) => x.expires_at,
    );
    this.apiKeys = new LmdbCollection(env, ttl, 'api_keys', [{ name: 'hash', value: (k) => k.token_hash, unique: true, global: true }]);
    this.domains = new LmdbCollection(env, ttl, 'domains', [{ name: 'name', value: (d) => d.name, unique: true, global: true }]);
    this.segments = new LmdbCollection(env, ttl, 'segments');
    this.contacts = new LmdbCollection(env, ttl, 'contacts', [{ name: 'email', value: (c) => c.email.toLowerCase(), unique: true }]);
    this.memberships = new LmdbMemberships(env, this.contacts, this.segments);
    this.broadcasts = new LmdbCollection(env, ttl, 'broadcasts');
    this.broadcastSchedule = new LmdbDueIndex(env, 'broadcast_schedule');
    this.broadcastProgress = new LmdbBroadcastProgress(env);
    this.suppressions = new LmdbCollection(env, ttl, 'suppressions', [{ name: 'email', value: (s) => s.email.toLowerCase(), unique: true }]);
    // Ids are UUIDv7 made at creation: retention walks them (no TTL row per email, event, log or received email).
    const byId = { minAgeMs: opts.retentionDays * DAY, appendOnly: true };
    this.logs = new LmdbCollection<LogRec>(env, ttl, 'logs', [], retained, null, byId);
    this.emailContent = new LmdbContents(env, 'email_content', this.spill);
    this.emails = new LmdbCollection<EmailRec, 'broadcast'>(
      env,
      ttl,
      'emails',
      [{ name: 'broadcast', value: (e) => e.broadcast_id, fixed: true }],
      retainedWork,
      (team, id) => this.emailContent.drop(team, id),
      {
        minAgeMs: opts.retentionDays * DAY + opts.holdMs,
      },
    );
    this.events = new LmdbCollection<EventRec, 'subject'>(env, ttl, 'events', [{ name: 'subject', value: (e) => e.subject_id }], retained, null, byId);
    this.queueHolds = new LmdbQueueHolds(env);
    this.queue = new LmdbQueue(env, this.queueHolds);
    this.sites = new LmdbSites(env);
    this.mtaSts = new LmdbMtaSts(env, ttl);
    this.tlsReports = new LmdbTlsReports(env, ttl, opts.retentionDays * DAY);
    this.sendCounts = new LmdbSendCounts(env, ttl);
    this.schedule = new LmdbDueIndex(env, 'schedule');
    this.idempotency = new LmdbIdempotency(env, ttl);
    this.webhooks = new LmdbCollection(env, ttl, 'webhooks');
    this.webhookEvents = new LmdbCollection<WebhookEventRec, 'webhook' | 'outstanding'>(
      env,
      ttl,
      'webhook_events',
      [
        { name: 'webhook', value: (e) => e.webhook_id },
        { name: 'outstanding', value: (e) => (e.due === null ? null : e.webhook_id) },
      ],
      retainedWork,
    );
    this.webhookAttempts = new LmdbCollection<WebhookAttemptRec, 'event'>(
      env,
      ttl,
      'webhook_attempts',
      [{ name: 'event', value: (a) => a.event_id }],
      retained,
    );
    this.outbox = new LmdbOutbox(env);
    this.metrics = new LmdbMetrics(env, ttl, opts.retentionDays * DAY);
    this.receivedContent = new LmdbContents(env, 'received_content', this.spill);
    this.receivedEmails = new LmdbCollection<ReceivedEmailRec>(
      env,
      ttl,
      'received_emails',
      [],
      retained,
      (team, id) => this.receivedContent.drop(team, id),
      byId,
    );
    this.templates = new LmdbCollection<TemplateRec, 'alias'>(env, ttl, 'templates', [{ name: 'alias', value: (t) => t.alias, unique: true }]);
    this.topics = new LmdbCollection(env, ttl, 'topics');
    this.topicChoices = new LmdbTopicChoices(env);
    this.contactProperties = new LmdbCollection(env, ttl, 'contact_properties', [{ name: 'key', value: (p) => p.key, unique: true }]);
    this.contactImports = new LmdbCollection<ContactImportRec>(env, ttl, IMPORT_FILES, [], null, (team, id) => this.importFiles.drop(team, id));
    this.importFiles = new LmdbImportFiles(env, this.spill, (team, id) => {
      const imp = this.contactImports.read(team, id);
      return !imp || imp.status === 'completed' || imp.status === 'failed';
    });
    this.importQueue = new LmdbDueIndex(env, 'import_queue');
    this.domainClaims = new LmdbCollection<DomainClaimRec, 'domain' | 'name'>(env, ttl, 'domain_claims', [
      { name: 'domain', value: (c) => c.domain_id, unique: true },
      { name: 'name', value: (c) => c.name },
    ]);
    this.inboundSpool = new LmdbInboundSpool(env, ttl, this.spill, opts.retentionDays * DAY);
    this.customEvents = new LmdbCollection(env, ttl, 'custom_events', [{ name: 'name', value: (e) => e.name, unique: true }]);
    this.automations = new LmdbCollection(env, ttl, 'automations', [{ name: 'trigger', value: (a) => (a.status === 'enabled' ? a.trigger : null) }]);
    // A run is kept while it runs (a loop with waits may run for ever), then for the retention period.
    this.automationRuns = new LmdbCollection<AutomationRunRec, 'automation' | 'active' | 'paused' | 'waiting'>(
      env,
      ttl,
      'automation_runs',
      [
        { name: 'automation', value: (r) => r.automation_id },
        { name: 'active', value: (r) => (r.status === 'running' ? r.automation_id : null) },
        { name: 'paused', value: (r) => (r.state === 'paused' ? r.automation_id : null) },
        { name: 'waiting', value: (r) => (r.state === 'waiting' && r.waiting_for !== null ? `${r.contact_id}:${r.waiting_for}` : null) },
      ],
      (r) => (r.completed_at ? Date.parse(r.completed_at) + opts.retentionDays * DAY : null),
    );
    this.automationDue = new LmdbDueIndex(env, 'automation_due');
    this.automationCleanup = new LmdbDueIndex(env, 'automation_cleanup');
    this.automationTriggers = new LmdbAutomationTriggers(env);
  }
}

interface LmdbTx extends Tx {
  after: (() => void)[];
  signals: Set<Signal>;
  /** Caches of collections this unit of work wrote: cleared once it commits. */
  stale: Set<CachedRecords<never, never>>;
  wrappers: Map<string, object>;
}

/** Collections read through a cache outside units of work (cached.ts), and their backend. */
interface Cached {
  domains: { raw: LmdbCollection<DomainRec, 'name'>; cache: CachedRecords<DomainRec, 'name'> };
  apiKeys: { raw: LmdbCollection<ApiKeyRec, 'hash'>; cache: CachedRecords<ApiKeyRec, 'hash'> };
}

/** `repo` whose write methods `methods` also call `note` (a signal to fire, a cache to clear, after the commit). */
function noting<R extends object>(repo: R, methods: string[], note: () => void): R {
  const wrapped = Object.create(repo) as Record<string, unknown>;
  for (const m of methods) {
    const write = (repo as Record<string, (...a: unknown[]) => void>)[m]!;
    wrapped[m] = (...args: unknown[]) => {
      write.apply(repo, args);
      note();
    };
  }
  return wrapped as R;
}

/**
 * The prototype of every unit of work over `repos`: reads and writes go straight to the shared
 * repositories (cached ones to their backend); queue and outbox writes also note the signal to
 * fire after the commit (inbound spool writes that make work due, and automation work, too), domain and key writes the
 * cache to clear. A unit of work itself is one
 * small object holding what to run after its commit.
 */
function txPrototype(repos: Repos, cached: Cached): LmdbTx {
  const proto = Object.create(repos) as LmdbTx;
  const wrapper = (name: string, make: (tx: LmdbTx) => object) => ({
    get(this: LmdbTx) {
      let w = this.wrappers.get(name);
      if (!w) {
        w = make(this);
        this.wrappers.set(name, w);
      }
      return w;
    },
  });
  Object.defineProperties(proto, {
    queue: wrapper('queue', (tx) => noting(repos.queue, ['put', 'add'], () => tx.signals.add('queue'))),
    // Work for the automation runner: triggers to take, runs due, automations to clean up after.
    automationTriggers: wrapper('automationTriggers', (tx) =>
      noting<AutomationTriggersTx>(repos.automationTriggers, ['add'], () => tx.signals.add('automations')),
    ),
    automationDue: wrapper('automationDue', (tx) => noting<DueIndexTx>(repos.automationDue, ['add'], () => tx.signals.add('automations'))),
    automationCleanup: wrapper('automationCleanup', (tx) => noting<DueIndexTx>(repos.automationCleanup, ['add'], () => tx.signals.add('automations'))),
    outbox: wrapper('outbox', (tx) => noting(repos.outbox, ['put'], () => tx.signals.add('outbox'))),
    domains: wrapper('domains', (tx) => noting(cached.domains.raw, ['put', 'remove'], () => tx.stale.add(cached.domains.cache as CachedRecords<never, never>))),
    apiKeys: wrapper('apiKeys', (tx) => noting(cached.apiKeys.raw, ['put', 'remove'], () => tx.stale.add(cached.apiKeys.cache as CachedRecords<never, never>))),
    inboundSpool: wrapper(
      'inboundSpool',
      (tx) =>
        Object.assign(Object.create(repos.inboundSpool) as LmdbInboundSpool, {
          add(msg: SpooledMessage, raw: Uint8Array, due: number) {
            repos.inboundSpool.add(msg, raw, due);
            tx.signals.add('inbound');
          },
          update(msg: SpooledMessage, due: number | null) {
            repos.inboundSpool.update(msg, due);
            if (due !== null) tx.signals.add('inbound');
          },
        }) as InboundSpoolTx,
    ),
  });
  proto.afterCommit = function (this: LmdbTx, fn: () => void) {
    this.after.push(fn);
  };
  return proto;
}

function newTx(proto: LmdbTx): LmdbTx {
  const tx = Object.create(proto) as LmdbTx;
  tx.after = [];
  tx.signals = new Set<Signal>();
  tx.stale = new Set();
  tx.wrappers = new Map();
  return tx;
}

export class LmdbStore extends Repos implements Store {
  private readonly listeners = new Map<Signal, (() => void)[]>();
  private txProto?: LmdbTx;
  private readonly cached: Cached;

  private constructor(
    readonly env: LmdbEnv,
    private readonly ttl: TtlIndex,
    private readonly secrets: Map<SecretName, Buffer>,
    opts: StoreOptions,
  ) {
    super(env, ttl, opts);
    this.cached = {
      domains: { raw: this.domains, cache: new CachedRecords(this.domains) },
      apiKeys: { raw: this.apiKeys, cache: new CachedRecords(this.apiKeys) },
    };
    // Outside a unit of work these two are read through their cache (the Store interface reads).
    Object.defineProperty(this, 'domains', { value: this.cached.domains.cache });
    Object.defineProperty(this, 'apiKeys', { value: this.cached.apiKeys.cache });
  }

  static async open(opts: StoreOptions): Promise<LmdbStore> {
    const env = new LmdbEnv(opts.dataDir);
    const ttl = new TtlIndex(env);
    const store = new LmdbStore(env, ttl, await loadSecrets(env), opts);
    const upgraded = await store.queue.upgrade();
    if (upgraded) log.info('store.queue_upgraded', { entries: upgraded });
    return store;
  }

  /** Units of work not yet through their commit and its aftermath, and who waits for none to be. */
  private pending = 0;
  private waiting: (() => void)[] = [];

  async write<T>(fn: (tx: Tx) => Promise<T>, opts: WriteOptions = {}): Promise<T> {
    this.pending++;
    try {
      return await this.commit(fn, opts.patient ?? false);
    } finally {
      if (--this.pending === 0 && this.waiting.length) for (const w of this.waiting.splice(0)) w();
    }
  }

  private async commit<T>(fn: (tx: Tx) => Promise<T>, patient: boolean): Promise<T> {
    this.txProto ??= txPrototype(this, this.cached);
    const tx = newTx(this.txProto);
    const result = await this.env.transaction(() => fn(tx), patient);
    // Committed: whatever follows must not make the caller believe it failed.
    for (const c of tx.stale) c.clear();
    for (const s of tx.signals) for (const l of this.listeners.get(s) ?? []) guarded(l);
    for (const f of tx.after) guarded(f);
    return result;
  }

  on(signal: Signal, listener: () => void): void {
    this.listeners.set(signal, [...(this.listeners.get(signal) ?? []), listener]);
  }

  secret(name: SecretName): Buffer {
    return this.secrets.get(name)!;
  }

  /** One process owns an LMDB environment. */
  readonly exclusive = true;
  private readonly jobs = new Set<string>();

  async singleton(name: string, fn: () => Promise<void>): Promise<boolean> {
    // One process: only a run of the same job still going here can be in the way.
    if (this.jobs.has(name)) return false;
    this.jobs.add(name);
    try {
      await fn();
      return true;
    } finally {
      this.jobs.delete(name);
    }
  }

  async status(): Promise<StoreStatus> {
    return { backend: 'lmdb', reachable: true, nodes: 1 };
  }

  private purgedAt = 0;

  async sweep(now = Date.now()): Promise<number> {
    // Deleted bodies' files leave the trash a day later; looking hourly is enough.
    if (now - this.purgedAt >= 3_600_000) {
      this.purgedAt = now;
      this.spill.purge(now);
    }
    let removed = await this.ttl.sweep(now);
    for (const c of [this.emails, this.events, this.logs, this.receivedEmails]) removed += await c.sweepRange(now);
    removed += await this.metrics.sweepEmails(now);
    return removed;
  }

  async sweepFiles(): Promise<{ orphans: number; purged: number }> {
    const contents = [this.emailContent, this.receivedContent, this.inboundSpool.content];
    // An import's file is live while its import still has rows to read.
    const importLive = (team: string, id: string) => ['queued', 'in_progress'].includes(this.contactImports.read(team, id)?.status ?? '');
    return this.spill.sweep((ns, team, id) => (ns === IMPORT_FILES ? importLive(team, id) : contents.some((c) => c.collection === ns && c.has(team, id))));
  }

  async isEmpty(): Promise<boolean> {
    return this.teams.isEmpty();
  }

  async settled(): Promise<void> {
    if (this.pending) await new Promise<void>((resolve) => this.waiting.push(resolve));
    await this.env.committed();
  }

  async appendLogs(recs: LogRec[]): Promise<void> {
    await Promise.all(recs.map((r) => this.logs.append(r)));
  }

  async backup(dest: string, opts: { compact: boolean }): Promise<{ files: number }> {
    // The snapshot first; then every file a record of it names. Files are never changed and stay
    // in the trash for a day after their record goes, so each is still there to copy.
    await this.env.root.backup(dest, opts.compact);
    const snapshot = open({ path: dest, readOnly: true, maxDbs: MAX_DBS, ...ENCODING });
    let files = 0;
    try {
      for (const name of ['email_content', 'received_content', 'inbound_spool_content']) {
        const db = snapshot.openDB({ name, ...ENCODING });
        for (const { key, value } of db.getRange({})) {
          const note = (value as { _spill?: { raw: number; files: Record<string, number> } })._spill;
          if (!note) continue;
          const [team, id] = (key as string[]).map(String) as [string, string];
          files += await this.spill.copyTo(`${dest}.content`, name, team, id, [
            ...(note.raw >= 0 ? ['raw'] : []),
            ...Object.keys(note.files).map((a) => `file-${a}`),
          ]);
        }
      }
      // The files of imports still being processed, so a restored store resumes them.
      const imports = snapshot.openDB({ name: IMPORT_FILES, sharedStructuresKey: Symbol.for('structures') });
      for (const { key, value } of imports.getRange({})) {
        if (!['queued', 'in_progress'].includes((value as ContactImportRec).status)) continue;
        const [team, id] = (key as string[]).map(String) as [string, string];
        files += await this.spill.copyTo(`${dest}.content`, IMPORT_FILES, team, id, IMPORT_FILE_PARTS);
      }
    } finally {
      await snapshot.close();
      rmSync(`${dest}-lock`, { force: true });
    }
    return { files };
  }

  close(): Promise<void> {
    return this.env.close();
  }
}
