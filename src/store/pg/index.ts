// The PostgreSQL backend of the store interface (../interface.ts), for cluster mode: several
// Posthorn nodes on one database (README.md, "Cluster mode"; docs/ARCHITECTURE.md §3). Chosen by
// `database.url`. Every thread of every node opens its own instance: its own pools, its own
// LISTEN. How units of work stay safe with several writers: env.ts.
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { PgEnv, unreachable, type Exec, type PgUnit } from './env';
import { migrate } from './schema';
import { PgCollection, PgContents, type CollectionDef } from './collection';
import { PgQueue } from './queue';
import { PgQueueHolds } from './queue-holds';
import { PgSites } from './sites';
import { PgMtaSts } from './mta-sts';
import { PgTlsReports } from './tls-reports';
import { PgSendCounts } from './send-counts';
import { PgOutbox } from './outbox';
import { PgDueIndex } from './due-index';
import { PgInboundSpool } from './inbound-spool';
import { PgAutomationTriggers } from './automation-triggers';
import { PgMemberships } from './memberships';
import { PgTopicChoices } from './topic-choices';
import { PgBroadcastProgress } from './broadcast-progress';
import { PgIdempotency } from './idempotency';
import { PgMetrics } from './metrics';
import { PgImportFiles } from './import-files';
import { Signals } from './signals';
import { Locks } from './locks';
import { CachedRecords } from '../cached';
import { guarded } from '../guarded';
import { VERSION } from '../../version';
import { log } from '../../log';
import {
  SECRET_NAMES,
  type Rec,
  type SecretName,
  type Signal,
  type Store,
  type StoreOptions,
  type StoreStatus,
  type Tx,
  type WriteOptions,
} from '../interface';
import type { TeamRec, UserRec, SessionRec, InviteRec, ApiKeyRec, DomainRec, SegmentRec, ContactRec, BroadcastRec, SuppressionRec, LogRec } from '../records';
import type { EmailRec, EmailContent, EventRec } from '../email-records';
import type { WebhookRec, WebhookEventRec, WebhookAttemptRec } from '../webhook-records';
import type { ReceivedEmailRec, ReceivedContent } from '../inbound-records';
import type { TemplateRec } from '../template-records';
import type { TopicRec, ContactPropertyRec, ContactImportRec, DomainClaimRec } from '../audience-records';
import type { CustomEventRec, AutomationRec, AutomationRunRec } from '../automation-records';

const DAY = 86_400_000;
/** Rows deleted per sweep transaction. */
const SWEEP_BATCH = 1000;
/** How often a node says it is alive, and how long it counts as alive after. */
const HEARTBEAT_MS = 5_000;
const ALIVE_S = 30;
/** How long GET /health waits for the database. */
const STATUS_TIMEOUT_MS = 2_000;

/** Delete up to SWEEP_BATCH rows of `table` whose `expires` has passed. Resolves to how many. */
async function sweepExpired(exec: Exec, table: string, now: number): Promise<number> {
  const [row] = await exec.query(
    `WITH d AS (DELETE FROM ${table} WHERE ctid IN (SELECT ctid FROM ${table} WHERE expires <= $1 LIMIT ${SWEEP_BATCH}) RETURNING 1) SELECT count(*)::int AS n FROM d`,
    [now],
  );
  return Number(row!.n);
}

/** A repository that can be bound to a unit of work (or to the pool). */
interface Bindable {
  bind(exec: Exec): object;
}

/** The collections of the store, as the LMDB backend declares them (lmdb/index.ts): same indexes, same retention. */
function collections(opts: StoreOptions) {
  const retained = (r: { created_at: string }) => Date.parse(r.created_at) + opts.retentionDays * DAY;
  // Kept for the retention period after the later of creation and scheduled send, plus the hold.
  const retainedWork = (r: { created_at: string; scheduled_at?: string | null }) =>
    Math.max(Date.parse(r.created_at), r.scheduled_at ? Date.parse(r.scheduled_at) : 0) + opts.retentionDays * DAY + opts.holdMs;
  const def = <T extends Rec, I extends string = never>(d: CollectionDef<T, I>) => d;
  return {
    teams: def<TeamRec>({ table: 'teams' }),
    users: def<UserRec, 'email'>({ table: 'users', indexes: [{ name: 'email', value: (u) => u.email.toLowerCase(), unique: true, global: true }] }),
    sessions: def<SessionRec, 'token' | 'user'>({
      table: 'sessions',
      indexes: [
        { name: 'token', value: (x) => x.token_hash, unique: true, global: true },
        { name: 'user', value: (x) => x.user_id },
      ],
      expiresAt: (x) => x.expires_at,
    }),
    invites: def<InviteRec, 'token'>({
      table: 'invites',
      indexes: [{ name: 'token', value: (x) => x.token_hash, unique: true, global: true }],
      expiresAt: (x) => x.expires_at,
    }),
    apiKeys: def<ApiKeyRec, 'hash'>({
      table: 'api_keys',
      indexes: [{ name: 'hash', value: (k) => k.token_hash, unique: true, global: true }],
      cache: 'apiKeys',
    }),
    domains: def<DomainRec, 'name'>({ table: 'domains', indexes: [{ name: 'name', value: (d) => d.name, unique: true, global: true }], cache: 'domains' }),
    segments: def<SegmentRec>({ table: 'segments' }),
    contacts: def<ContactRec, 'email'>({ table: 'contacts', indexes: [{ name: 'email', value: (c) => c.email.toLowerCase(), unique: true }] }),
    broadcasts: def<BroadcastRec>({ table: 'broadcasts' }),
    suppressions: def<SuppressionRec, 'email'>({ table: 'suppressions', indexes: [{ name: 'email', value: (s) => s.email.toLowerCase(), unique: true }] }),
    logs: def<LogRec>({ table: 'logs', expiresAt: retained }),
    emails: def<EmailRec, 'broadcast'>({
      table: 'emails',
      indexes: [{ name: 'broadcast', value: (e) => e.broadcast_id }],
      expiresAt: retainedWork,
      owns: ['email_content'],
    }),
    events: def<EventRec, 'subject'>({ table: 'events', indexes: [{ name: 'subject', value: (e) => e.subject_id }], expiresAt: retained }),
    webhooks: def<WebhookRec>({ table: 'webhooks' }),
    webhookEvents: def<WebhookEventRec, 'webhook' | 'outstanding'>({
      table: 'webhook_events',
      indexes: [
        { name: 'webhook', value: (e) => e.webhook_id },
        { name: 'outstanding', value: (e) => (e.due === null ? null : e.webhook_id) },
      ],
      expiresAt: retainedWork,
    }),
    webhookAttempts: def<WebhookAttemptRec, 'event'>({
      table: 'webhook_attempts',
      indexes: [{ name: 'event', value: (a) => a.event_id }],
      expiresAt: retained,
    }),
    receivedEmails: def<ReceivedEmailRec>({ table: 'received_emails', expiresAt: retained, owns: ['received_content'] }),
    templates: def<TemplateRec, 'alias'>({ table: 'templates', indexes: [{ name: 'alias', value: (t) => t.alias, unique: true }] }),
    topics: def<TopicRec>({ table: 'topics' }),
    contactProperties: def<ContactPropertyRec, 'key'>({ table: 'contact_properties', indexes: [{ name: 'key', value: (p) => p.key, unique: true }] }),
    contactImports: def<ContactImportRec>({ table: 'contact_imports', owns: ['import_files'] }),
    domainClaims: def<DomainClaimRec, 'domain' | 'name'>({
      table: 'domain_claims',
      indexes: [
        { name: 'domain', value: (c) => c.domain_id, unique: true },
        { name: 'name', value: (c) => c.name },
      ],
    }),
    customEvents: def<CustomEventRec, 'name'>({ table: 'custom_events', indexes: [{ name: 'name', value: (e) => e.name, unique: true }] }),
    automations: def<AutomationRec, 'trigger'>({
      table: 'automations',
      indexes: [{ name: 'trigger', value: (a) => (a.status === 'enabled' ? a.trigger : null) }],
    }),
    // A run is kept while it runs (a loop with waits may run for ever), then for the retention period.
    automationRuns: def<AutomationRunRec, 'automation' | 'active' | 'paused' | 'waiting'>({
      table: 'automation_runs',
      indexes: [
        { name: 'automation', value: (r) => r.automation_id },
        { name: 'active', value: (r) => (r.status === 'running' ? r.automation_id : null) },
        { name: 'paused', value: (r) => (r.state === 'paused' ? r.automation_id : null) },
        { name: 'waiting', value: (r) => (r.state === 'waiting' && r.waiting_for !== null ? `${r.contact_id}:${r.waiting_for}` : null) },
      ],
      expiresAt: (r) => (r.completed_at ? Date.parse(r.completed_at) + opts.retentionDays * DAY : null),
    }),
  };
}

/** Every repository, on the pool: what units of work bind to their connection. */
function repositories(env: PgEnv, opts: StoreOptions) {
  const colls = Object.fromEntries(
    Object.entries(collections(opts)).map(([k, d]) => [k, new PgCollection(d as CollectionDef<Rec, string>, env)]),
  ) as unknown as {
    [K in keyof ReturnType<typeof collections>]: ReturnType<typeof collections>[K] extends CollectionDef<infer T, infer I> ? PgCollection<T, I> : never;
  };
  return {
    ...colls,
    emailContent: new PgContents<EmailContent>('email_content', env),
    receivedContent: new PgContents<ReceivedContent>('received_content', env),
    inboundSpool: new PgInboundSpool(env, opts.retentionDays * DAY),
    memberships: new PgMemberships(env),
    queue: new PgQueue(env),
    queueHolds: new PgQueueHolds(env),
    sites: new PgSites(env),
    mtaSts: new PgMtaSts(env),
    tlsReports: new PgTlsReports(env, opts.retentionDays * DAY),
    sendCounts: new PgSendCounts(env),
    schedule: new PgDueIndex('schedule', env),
    broadcastSchedule: new PgDueIndex('broadcast_schedule', env),
    broadcastProgress: new PgBroadcastProgress(env),
    idempotency: new PgIdempotency(env),
    outbox: new PgOutbox(env),
    metrics: new PgMetrics(env, opts.retentionDays * DAY),
    topicChoices: new PgTopicChoices(env),
    importFiles: new PgImportFiles(env, env),
    importQueue: new PgDueIndex('import_queue', env),
    automationDue: new PgDueIndex('automation_due', env, 'automations'),
    automationCleanup: new PgDueIndex('automation_cleanup', env, 'automations'),
    automationTriggers: new PgAutomationTriggers(env),
  };
}

type Repositories = ReturnType<typeof repositories>;

/** A unit of work: its repositories bound to its connection on first use. */
interface PgTx extends Tx {
  _unit: PgUnit;
  _bound: Map<string, object>;
}

function txPrototype(repos: Repositories): PgTx {
  const proto = {} as PgTx;
  for (const [name, repo] of Object.entries(repos) as [string, Bindable][])
    Object.defineProperty(proto, name, {
      get(this: PgTx) {
        let r = this._bound.get(name);
        if (!r) {
          r = repo.bind(this._unit);
          this._bound.set(name, r);
        }
        return r;
      },
    });
  proto.afterCommit = function (this: PgTx, fn: () => void) {
    this._unit.after.push(fn);
  };
  return proto;
}

/** The URL without its password, for messages. */
export function redacted(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'the configured database.url';
  }
}

// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the interface below declares the read side that the constructor's Object.assign adds.
export class PgStore implements Store {
  readonly exclusive = false;
  private readonly repos: Repositories;
  private readonly txProto: PgTx;
  private readonly caches: { domains: CachedRecords<DomainRec, 'name'>; apiKeys: CachedRecords<ApiKeyRec, 'hash'> };
  private readonly signals: Signals;
  private readonly locks: Locks;
  private readonly node = `${hostname()}:${process.pid}`;
  private heartbeat: ReturnType<typeof setInterval> | null = null;
  private secrets = new Map<SecretName, Buffer>();
  private lastNodes = 1;

  private constructor(
    private readonly env: PgEnv,
    private readonly opts: StoreOptions,
  ) {
    this.repos = repositories(env, opts);
    this.txProto = txPrototype(this.repos);
    this.caches = { domains: new CachedRecords(this.repos.domains), apiKeys: new CachedRecords(this.repos.apiKeys) };
    this.signals = new Signals(randomBytes(8).toString('hex'), (name) => this.caches[name as keyof typeof this.caches]?.clear());
    this.locks = new Locks(env.opts.url);
    // The read side of the interface: the repositories on the pool (domains and keys through their cache).
    Object.assign(this, this.repos, this.caches);
  }

  static async open(opts: StoreOptions): Promise<PgStore> {
    const env = new PgEnv({ url: opts.databaseUrl! });
    try {
      const { from, to } = await migrate(env.sql);
      if (from !== to) log.info('store.migrated', { from, to });
      const store = new PgStore(env, opts);
      await store.loadSecrets();
      await store.signals.start(env.sql);
      await store.beat();
      store.heartbeat = setInterval(() => void store.beat().catch(() => {}), HEARTBEAT_MS);
      store.heartbeat.unref?.();
      return store;
    } catch (e) {
      await env.close().catch(() => {});
      if (unreachable(e)) throw new Error(`cannot reach the database at ${redacted(opts.databaseUrl!)}: ${(e as Error).message}`);
      throw e;
    }
  }

  /** What `posthorn db copy` (copy.ts) writes with: the pool and the repositories. */
  internals() {
    return { env: this.env, repos: this.repos, emailTtlMs: this.opts.retentionDays * DAY };
  }

  /** Per-install secrets, made by the first node that opens the database. */
  private async loadSecrets(): Promise<void> {
    await this.env.transaction(
      async (u) => {
        for (const name of SECRET_NAMES)
          u.write('INSERT INTO meta (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [`secret:${name}`, randomBytes(32)]);
      },
      () => null,
    );
    const rows: { name: string; value: Uint8Array }[] = await this.env.query('SELECT name, value FROM meta WHERE name LIKE $1', ['secret:%']);
    for (const r of rows) this.secrets.set(r.name.slice('secret:'.length) as SecretName, Buffer.from(r.value));
  }

  private async beat(): Promise<void> {
    await this.env.query(
      `INSERT INTO nodes (node, started_at, seen_at, version) VALUES ($1, now(), now(), $2)
       ON CONFLICT (node) DO UPDATE SET seen_at = now(), version = excluded.version`,
      [this.node, VERSION],
    );
  }

  /** Units of work not yet through their commit and its aftermath, and who waits for none to be. */
  private pending = 0;
  private waiting: (() => void)[] = [];

  /** Each unit commits as it comes (`WriteOptions.patient` is the embedded store's). */
  async write<T>(fn: (tx: Tx) => Promise<T>, _opts?: WriteOptions): Promise<T> {
    this.pending++;
    try {
      const { result, unit } = await this.env.transaction(
        (u) => {
          const tx = Object.create(this.txProto) as PgTx;
          tx._unit = u;
          tx._bound = new Map();
          return fn(tx);
        },
        (u) => this.signals.payload(u),
      );
      // Committed: whatever follows must not make the caller believe it failed.
      for (const c of unit.stale) this.caches[c as keyof typeof this.caches]?.clear();
      for (const s of unit.signals) this.signals.fire(s);
      for (const f of unit.after) guarded(f);
      return result;
    } finally {
      if (--this.pending === 0 && this.waiting.length) for (const w of this.waiting.splice(0)) w();
    }
  }

  on(signal: Signal, listener: () => void): void {
    this.signals.on(signal, listener);
  }

  secret(name: SecretName): Buffer {
    return this.secrets.get(name)!;
  }

  singleton(name: string, fn: () => Promise<void>): Promise<boolean> {
    return this.locks.run(name, fn);
  }

  async status(): Promise<StoreStatus> {
    const ask = this.env.query(`SELECT count(*)::int AS n FROM nodes WHERE seen_at > now() - interval '${ALIVE_S} seconds'`);
    let timer: ReturnType<typeof setTimeout> | undefined;
    // A health check must answer soon: a database that does not answer in time is unreachable.
    const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('no answer')), STATUS_TIMEOUT_MS)));
    try {
      const [row] = await Promise.race([ask, late]);
      this.lastNodes = Math.max(1, Number(row!.n));
      return { backend: 'postgres', reachable: true, nodes: this.lastNodes };
    } catch {
      ask.catch(() => {});
      return { backend: 'postgres', reachable: false, nodes: this.lastNodes };
    } finally {
      clearTimeout(timer);
    }
  }

  async sweep(now = Date.now()): Promise<number> {
    let removed = 0;
    // Each table in bounded transactions, until nothing expired is left.
    const each = async (sweep: (exec: Exec) => Promise<number>) => {
      for (;;) {
        const { result: n } = await this.env.transaction(
          (u) => sweep(u),
          () => null,
        );
        removed += n;
        if (n < SWEEP_BATCH) return;
      }
    };
    for (const repo of Object.values(this.repos)) if (repo instanceof PgCollection) await each((u) => repo.sweep(u, now, SWEEP_BATCH));
    await each((u) => this.repos.inboundSpool.sweep(u, now, SWEEP_BATCH));
    for (const table of ['metrics', 'metrics_email', 'metrics_links', 'mta_sts', 'tls_reports', 'send_counts']) await each((u) => sweepExpired(u, table, now));
    await each((u) => sweepExpired(u, 'idempotency', now));
    // Nodes not seen for a day are gone for good.
    await this.env.query(`DELETE FROM nodes WHERE seen_at < now() - interval '1 day'`);
    return removed;
  }

  /** Nothing is kept in files: every body is in the database. */
  async sweepFiles(): Promise<{ orphans: number; purged: number }> {
    return { orphans: 0, purged: 0 };
  }

  async isEmpty(): Promise<boolean> {
    return this.repos.teams.isEmpty();
  }

  async settled(): Promise<void> {
    if (this.pending) await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  async appendLogs(recs: LogRec[]): Promise<void> {
    await this.write(async (tx) => {
      for (const r of recs) tx.logs.put(r);
    });
  }

  async backup(): Promise<{ files: number }> {
    throw new Error(
      '`posthorn backup` copies the embedded LMDB store; back a PostgreSQL database up with its own tools (pg_dump, or continuous archiving): README.md, "Cluster mode"',
    );
  }

  async close(): Promise<void> {
    if (this.heartbeat) clearInterval(this.heartbeat);
    await this.settled();
    await this.signals.stop();
    await Promise.all([this.env.close(), this.locks.close()]);
  }
}

// The read side of the interface comes from the repositories (Object.assign in the constructor).
export interface PgStore extends Omit<Repositories, 'domains' | 'apiKeys'> {
  domains: CachedRecords<DomainRec, 'name'>;
  apiKeys: CachedRecords<ApiKeyRec, 'hash'>;
}
