// The PostgreSQL backend of the store interface (../interface.ts), for cluster mode: several
// Posthorn nodes on one database (README.md, "Cluster mode"; docs/ARCHITECTURE.md §3). Chosen by
// `database.url`. Every thread of every node opens its own instance: its own pools, its own
// LISTEN. How units of work stay safe with several writers: env.ts.
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { PgEnv, unreachable, type Exec, type PgUnit } from './env';
import { migrate } from './schema';
import { PgCollection, PgContents } from './collection';
import { PgQueue } from './queue';
import { PgQueueHolds } from './queue-holds';
import { PgSites } from './sites';
import { PgMtaSts } from './mta-sts';
import { PgTlsReports } from './tls-reports';
import { PgSendCounts } from './send-counts';
import { PgOutbox } from './outbox';
import { PgDueIndex } from './due-index';
import { PgInboundSpool } from './inbound-spool';
import { PgIncoming } from './incoming';
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
import { noting } from '../noting';
import { announcing } from '../changes';
import {
  COLLECTIONS,
  CONTENTS,
  DUE_INDEXES,
  SIGNALS,
  WAKING,
  CHANGING,
  type Change,
  pgTablesOf,
  retentionPolicy,
  type CollectionDecl,
  type Collections,
  type ContentOf,
  type Contentses,
  type DueIndexes,
  type IndexOf,
  type RecordOf,
  type RetentionPolicy,
} from '../collections';
import { VERSION } from '../../version';
import { log } from '../../log';
import {
  HELD_DUE,
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
import type { LogRec } from '../records';
import { PgInboxText } from './inbox-text';

/** Rows deleted per sweep transaction. */
const SWEEP_BATCH = 1000;
/** How often a node says it is alive, and how long it counts as alive after. */
const HEARTBEAT_MS = 5_000;
const ALIVE_S = 30;
/**
 * A node not seen for this long is dead: the work it had leased (deliveries, webhook deliveries,
 * inbound messages, automation runs in hand) is handed to the others at once rather than waited
 * out (README.md, "How the nodes share the work"). Four missed heartbeats: a node paused that
 * long and back again may repeat the attempts it had in flight (at-least-once).
 */
export const TAKEOVER_S = 20;
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

/** A declared collection on PostgreSQL: its table (pg/schema.ts), indexes, retention, what its records own. */
function collectionOf(name: string, d: CollectionDecl<Rec, string>, p: RetentionPolicy, env: PgEnv): PgCollection<Rec, string> {
  return new PgCollection(
    { table: d.table, indexes: d.indexes, expiresAt: d.retention?.expiresAt(p) ?? null, owns: d.owns && pgTablesOf(d.owns), cache: d.cached && name },
    env,
  );
}

/** The declared repositories (../collections.ts), as this backend keeps them. */
type Declared = { [K in keyof Collections]: PgCollection<RecordOf<Collections[K]>, IndexOf<Collections[K]>> } & {
  [K in keyof Contentses]: PgContents<ContentOf<Contentses[K]>>;
} & { [K in keyof DueIndexes]: PgDueIndex };

/** Every repository, on the pool: what units of work bind to their connection. */
function repositories(env: PgEnv, opts: StoreOptions) {
  const policy = retentionPolicy(opts);
  const declared: Record<string, Bindable> = {};
  for (const [name, d] of Object.entries(COLLECTIONS) as [string, CollectionDecl<Rec, string>][]) declared[name] = collectionOf(name, d, policy, env);
  for (const [name, d] of Object.entries(CONTENTS)) declared[name] = new PgContents(d.table, env);
  for (const [name, d] of Object.entries(DUE_INDEXES)) declared[name] = new PgDueIndex(d.name, env);
  return {
    ...(declared as unknown as Declared),
    inboundSpool: new PgInboundSpool(env, policy.retentionMs),
    incoming: new PgIncoming(env),
    memberships: new PgMemberships(env),
    queue: new PgQueue(env, opts.region ?? null),
    queueHolds: new PgQueueHolds(env),
    sites: new PgSites(env),
    mtaSts: new PgMtaSts(env),
    tlsReports: new PgTlsReports(env, policy.retentionMs),
    sendCounts: new PgSendCounts(env),
    broadcastProgress: new PgBroadcastProgress(env),
    idempotency: new PgIdempotency(env),
    outbox: new PgOutbox(env),
    metrics: new PgMetrics(env, policy.retentionMs),
    topicChoices: new PgTopicChoices(env),
    importFiles: new PgImportFiles(env, env),
    automationTriggers: new PgAutomationTriggers(env),
  };
}

type Repositories = ReturnType<typeof repositories>;

/** A unit of work: its repositories bound to its connection on first use. */
interface PgTx extends Tx {
  _unit: PgUnit;
  _bound: Map<string, object>;
}

/**
 * The prototype of every unit of work: a repository is bound to the unit's connection on first
 * use; the writes that make work due (../collections.ts `WAKING`) also note the signal the commit
 * sends.
 */
function txPrototype(repos: Repositories): PgTx {
  const proto = {} as PgTx;
  for (const [name, repo] of Object.entries(repos) as [string, Bindable][]) {
    const waking = WAKING.get(name);
    const topic = CHANGING.get(name);
    Object.defineProperty(proto, name, {
      get(this: PgTx) {
        let r = this._bound.get(name);
        if (!r) {
          const unit = this._unit;
          r = repo.bind(unit);
          if (waking) r = noting(r, waking.writes, () => unit.signals.add(waking.signal));
          if (topic) r = announcing(r, topic, (c) => unit.changes.add(c));
          this._bound.set(name, r);
        }
        return r;
      },
    });
  }
  proto.afterCommit = function (this: PgTx, fn: () => void) {
    this._unit.after.push(fn);
  };
  proto.changed = function (this: PgTx, change: Change) {
    this._unit.changes.add(change);
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

// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the repositories (the interface below) are assigned in the constructor.
export class PgStore implements Store {
  readonly exclusive = false;
  readonly hearsOthers = true;
  readonly inboxText: PgInboxText;
  private readonly repos: Repositories;
  private readonly txProto: PgTx;
  /** Collections read through a cache outside units of work (`cached` in ../collections.ts), by name. */
  private readonly caches = new Map<string, CachedRecords<Rec, string>>();
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
    for (const [name, d] of Object.entries(COLLECTIONS) as [keyof Collections, CollectionDecl<Rec, string>][])
      if (d.cached) this.caches.set(name, new CachedRecords(this.repos[name] as unknown as PgCollection<Rec, string>));
    this.signals = new Signals(randomBytes(8).toString('hex'), (name) => this.caches.get(name)?.clear());
    this.locks = new Locks(env.opts.url);
    this.inboxText = new PgInboxText(env);
    // The read side of the interface: the repositories on the pool (cached ones through their cache).
    Object.assign(this, this.repos, Object.fromEntries(this.caches));
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
      store.heartbeat = setInterval(
        () =>
          void store
            .beat()
            .then(() => store.takeOver())
            .catch(() => {}),
        HEARTBEAT_MS,
      );
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
    return { env: this.env, repos: this.repos, emailTtlMs: retentionPolicy(this.opts).retentionMs };
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
      `INSERT INTO nodes (node, started_at, seen_at, version, region) VALUES ($1, now(), now(), $2, $3)
       ON CONFLICT (node) DO UPDATE SET seen_at = now(), version = excluded.version, region = excluded.region, released_at = NULL`,
      [this.node, VERSION, this.opts.region ?? null],
    );
  }

  /**
   * Hand the leases of dead nodes (not seen for TAKEOVER_S) back to the others: the rows they
   * stamped (schema.ts, version 9) become due now, with the records that carry the same due time
   * (a webhook event, an automation run) moved along. One transaction; `released_at` makes it
   * happen once per death, by whichever node gets there first. Resolves to the nodes released.
   */
  async takeOver(now = Date.now()): Promise<string[]> {
    const { result: dead } = await this.env.transaction(
      async (u) => {
        const rows: { node: string }[] = await u.query(
          `UPDATE nodes SET released_at = now() WHERE seen_at < now() - interval '${TAKEOVER_S} seconds' AND released_at IS NULL RETURNING node`,
        );
        const nodes = rows.map((r) => r.node);
        if (!nodes.length) return nodes;
        const at = [nodes, now];
        u.write(`UPDATE queue SET due = $2 WHERE node = ANY($1) AND due > $2 AND due < ${HELD_DUE}`, at);
        u.write('UPDATE inbound_spool SET due = $2 WHERE node = ANY($1) AND due > $2', at);
        u.write(
          `UPDATE webhook_events e SET value = jsonb_set(e.value::jsonb, '{due}', to_jsonb($2::bigint))::json
           FROM webhook_outbox o WHERE o.node = ANY($1) AND o.due > $2 AND e.team = o.team AND e.id = o.event_id`,
          at,
        );
        u.write('UPDATE webhook_outbox SET due = $2 WHERE node = ANY($1) AND due > $2', at);
        u.write(
          `UPDATE automation_runs r SET value = jsonb_set(r.value::jsonb, '{due}', to_jsonb($2::bigint))::json
           FROM due_index d WHERE d.node = ANY($1) AND d.name = $3 AND d.due > $2 AND r.team = d.team AND r.id = d.id`,
          [...at, DUE_INDEXES.automationDue.name],
        );
        u.write('UPDATE due_index SET due = $2 WHERE node = ANY($1) AND due > $2', at);
        // Every node's workers wake for the work (the commit notifies them).
        for (const s of Object.keys(SIGNALS) as Signal[]) u.signals.add(s);
        return nodes;
      },
      (u) => this.signals.payload(u),
    );
    if (dead.length) {
      log.warn('cluster.leases_taken_over', { nodes: dead });
      for (const s of Object.keys(SIGNALS) as Signal[]) this.signals.fire(s);
    }
    return dead;
  }

  /** Units of work not yet through their commit and its aftermath, and who waits for none to be. */
  private pending = 0;
  private waiting: (() => void)[] = [];

  /** A unit commits as it comes, or, `patient`, with the others of its group (env.ts). */
  async write<T>(fn: (tx: Tx) => Promise<T>, opts?: WriteOptions): Promise<T> {
    this.pending++;
    try {
      const { result, unit } = await this.env.transaction(
        (u) => {
          // Rows this unit writes to the work tables are this node's leases (takeOver).
          if (opts?.lease) u.write("SELECT set_config('posthorn.lease_node', $1, true)", [this.node]);
          const tx = Object.create(this.txProto) as PgTx;
          tx._unit = u;
          tx._bound = new Map();
          // In a group (env.ts) the setting would outlive the unit: the units after it claim nothing.
          if (opts?.lease && opts.patient)
            return fn(tx).then((result) => {
              u.write("SELECT set_config('posthorn.lease_node', '', true)");
              return result;
            });
          return fn(tx);
        },
        // Inside the transaction only when it makes caches stale; else after the commit (signals.ts).
        (u) => (Signals.inside(u) ? this.signals.payload(u) : null),
        opts?.patient,
      );
      // Committed: whatever follows must not make the caller believe it failed.
      if (!Signals.inside(unit)) {
        const payload = this.signals.payload(unit);
        if (payload !== null) this.signals.post(payload);
      }
      for (const c of unit.stale) this.caches.get(c)?.clear();
      for (const s of unit.signals) this.signals.fire(s);
      if (unit.changes.size) this.signals.changed(unit.changes.list());
      for (const f of unit.after) guarded(f);
      return result;
    } finally {
      if (--this.pending === 0 && this.waiting.length) for (const w of this.waiting.splice(0)) w();
    }
  }

  on(signal: Signal, listener: () => void): void {
    this.signals.on(signal, listener);
  }

  onChange(listener: (changes: readonly Change[]) => void): void {
    this.signals.onChange(listener);
  }

  secret(name: SecretName): Buffer {
    return this.secrets.get(name)!;
  }

  singleton(name: string, fn: () => Promise<void>): Promise<boolean> {
    return this.locks.run(name, fn);
  }

  /** Regions of queued mail with no node of that region alive: their mail waits. */
  private async regionsWaiting(): Promise<string[]> {
    const rows: { region: string }[] = await this.env.query(
      `SELECT DISTINCT q.region FROM queue q WHERE q.region IS NOT NULL AND NOT EXISTS
         (SELECT 1 FROM nodes n WHERE n.region = q.region AND n.seen_at > now() - interval '${ALIVE_S} seconds') ORDER BY 1`,
    );
    return rows.map((r) => r.region);
  }

  async status(): Promise<StoreStatus> {
    const ask = this.env.query(`SELECT count(*)::int AS n FROM nodes WHERE seen_at > now() - interval '${ALIVE_S} seconds'`);
    let timer: ReturnType<typeof setTimeout> | undefined;
    // A health check must answer soon: a database that does not answer in time is unreachable.
    const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('no answer')), STATUS_TIMEOUT_MS)));
    try {
      const [row] = await Promise.race([ask, late]);
      this.lastNodes = Math.max(1, Number(row!.n));
      // Regions (README.md, "Regions"): those whose mail waits with no node of theirs alive.
      const waiting = this.opts.region ? await Promise.race([this.regionsWaiting(), late]) : [];
      return { backend: 'postgres', reachable: true, nodes: this.lastNodes, ...(waiting.length ? { regions_waiting: waiting } : {}) };
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
      // The request log is no part of what a 2xx promises (docs/ARCHITECTURE.md §1 "Rules of the house": accepted means
      // durable): its commit does not wait for the WAL's flush, which the database makes within
      // moments (wal_writer_delay) — visible at once, lost only if the database server itself
      // crashes in that moment. A flush less beside each accepted email's own.
      const unit = (tx as PgTx)._unit;
      unit.write('SET LOCAL synchronous_commit TO OFF');
      // One statement for the batch (its rows one JSON parameter), not one per entry.
      this.repos.logs.bind(unit).putAll(recs);
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

// The read side of the interface comes from the repositories (Object.assign in the constructor;
// cached collections are read through their CachedRecords).
export interface PgStore extends Repositories {}
