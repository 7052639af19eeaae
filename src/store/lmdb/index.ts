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
import { LmdbIncoming } from './incoming';
import { LmdbAutomationTriggers } from './automation-triggers';
import { loadSecrets } from './secrets';
import { CachedRecords } from '../cached';
import { guarded } from '../guarded';
import { log } from '../../log';
import {
  COLLECTIONS,
  CONTENTS,
  DUE_INDEXES,
  WAKING,
  CHANGING,
  type Change,
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
import { noting } from '../noting';
import { announcing, UnitChanges } from '../changes';
import type { Rec, Signal, SecretName, Store, StoreOptions, StoreStatus, Tx, WriteOptions } from '../interface';
import type { LogRec } from '../records';
import type { ContactImportRec } from '../audience-records';

/** The declared repositories (../collections.ts), as this backend keeps them. */
type Declared = { readonly [K in keyof Collections]: LmdbCollection<RecordOf<Collections[K]>, IndexOf<Collections[K]>> } & {
  readonly [K in keyof Contentses]: LmdbContents<ContentOf<Contentses[K]>>;
} & { readonly [K in keyof DueIndexes]: LmdbDueIndex };

/** What a record takes with it when it goes (its body, an import's file): `owns`. */
interface Owned {
  drop(team: string, id: string): void;
}

/** A declared collection on LMDB: its indexes, its retention, what its records own. */
function collectionOf(env: LmdbEnv, ttl: TtlIndex, d: CollectionDecl<Rec, string>, p: RetentionPolicy, repos: Record<string, unknown>) {
  const owned = d.owns;
  const minAgeMs = d.retention?.minAgeMs;
  if (d.byId && !minAgeMs) throw new Error(`${d.table}: retention by id needs a least age`);
  return new LmdbCollection<Rec, string>(
    env,
    ttl,
    d.table,
    d.indexes,
    d.retention?.expiresAt(p) ?? null,
    owned ? (team, id) => (repos[owned] as Owned).drop(team, id) : null,
    d.byId && minAgeMs ? { minAgeMs: minAgeMs(p), appendOnly: d.byId === 'append' } : null,
  );
}

// biome-ignore lint/correctness/noUnusedVariables: merged with the class below, whose constructor assigns the declared repositories.
interface Repos extends Declared {}

/** The repositories, shared by every unit of work (LMDB reads inside one see its writes). */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the declared repositories (the interface above) are assigned in the constructor.
class Repos {
  readonly inboundSpool: LmdbInboundSpool;
  readonly incoming: LmdbIncoming;
  readonly memberships: LmdbMemberships;
  readonly queue: LmdbQueue;
  readonly queueHolds: LmdbQueueHolds;
  readonly sites: LmdbSites;
  readonly mtaSts: LmdbMtaSts;
  readonly tlsReports: LmdbTlsReports;
  readonly sendCounts: LmdbSendCounts;
  readonly broadcastProgress: LmdbBroadcastProgress;
  readonly idempotency: LmdbIdempotency;
  readonly outbox: LmdbOutbox;
  readonly metrics: LmdbMetrics;
  readonly topicChoices: LmdbTopicChoices;
  readonly importFiles: LmdbImportFiles;
  readonly automationTriggers: LmdbAutomationTriggers;

  /** Large bodies' byte fields, in files beside the database. */
  readonly spill: SpillFiles;
  /** The collections whose retention walks ids (`byId`): the sweep's. */
  protected readonly rangedCollections: LmdbCollection<Rec, string>[] = [];

  constructor(env: LmdbEnv, ttl: TtlIndex, opts: StoreOptions) {
    this.spill = new SpillFiles(join(opts.dataDir, 'content'));
    const policy = retentionPolicy(opts);
    const declared = this as unknown as Record<string, unknown>;
    for (const [name, d] of Object.entries(CONTENTS)) declared[name] = new LmdbContents(env, d.table, this.spill);
    for (const [name, d] of Object.entries(COLLECTIONS) as [string, CollectionDecl<Rec, string>][]) {
      const c = collectionOf(env, ttl, d, policy, declared);
      declared[name] = c;
      if (d.byId) this.rangedCollections.push(c);
    }
    for (const [name, d] of Object.entries(DUE_INDEXES)) declared[name] = new LmdbDueIndex(env, d.name);
    this.memberships = new LmdbMemberships(env, this.contacts, this.segments);
    this.broadcastProgress = new LmdbBroadcastProgress(env);
    this.queueHolds = new LmdbQueueHolds(env);
    this.queue = new LmdbQueue(env, this.queueHolds, (team, id) => this.emails.read(team, id));
    this.sites = new LmdbSites(env);
    this.mtaSts = new LmdbMtaSts(env, ttl);
    this.tlsReports = new LmdbTlsReports(env, ttl, policy.retentionMs);
    this.sendCounts = new LmdbSendCounts(env, ttl);
    this.idempotency = new LmdbIdempotency(env, ttl);
    this.outbox = new LmdbOutbox(env);
    this.metrics = new LmdbMetrics(env, ttl, policy.retentionMs);
    this.topicChoices = new LmdbTopicChoices(env);
    this.importFiles = new LmdbImportFiles(env, this.spill, (team, id) => {
      const imp = this.contactImports.read(team, id);
      return !imp || imp.status === 'completed' || imp.status === 'failed';
    });
    this.inboundSpool = new LmdbInboundSpool(env, ttl, this.spill, policy.retentionMs);
    this.automationTriggers = new LmdbAutomationTriggers(env);
    this.incoming = new LmdbIncoming(env);
  }

  /** Every store of bodies, the inbound spool's too (files beside the database, backups). */
  protected contents(): LmdbContents<{ files: Record<string, Uint8Array> }>[] {
    return [...Object.keys(CONTENTS).map((k) => this[k as keyof Contentses]), this.inboundSpool.content];
  }
}

interface LmdbTx extends Tx {
  after: (() => void)[];
  signals: Set<Signal>;
  changes: UnitChanges;
  /** Caches of collections this unit of work wrote: cleared once it commits. */
  stale: Set<CachedRecords<never, never>>;
  wrappers: Map<string, object>;
}

/** Collections read through a cache outside units of work (`cached` in ../collections.ts), and their backend. */
type Cached = Map<string, { raw: LmdbCollection<Rec, string>; cache: CachedRecords<Rec, string> }>;

/** The writes of a collection that make its cache stale. */
const CACHE_WRITES = [
  ['put', true],
  ['remove', true],
] as const;

/**
 * The prototype of every unit of work over `repos`: reads and writes go straight to the shared
 * repositories (cached ones to their backend); the writes that make work due (../collections.ts
 * `WAKING`) also note the signal to fire after the commit, writes of a cached collection the cache
 * to clear. A unit of work itself is one small object holding what to run after its commit.
 */
function txPrototype(repos: Repos, cached: Cached): LmdbTx {
  const proto = Object.create(repos) as LmdbTx;
  const all = repos as unknown as Record<string, object>;
  for (const name of new Set([...WAKING.keys(), ...cached.keys(), ...CHANGING.keys()])) {
    const waking = WAKING.get(name);
    const c = cached.get(name);
    const topic = CHANGING.get(name);
    const make = (tx: LmdbTx) => {
      let repo = c ? noting(c.raw, CACHE_WRITES, () => tx.stale.add(c.cache as CachedRecords<never, never>)) : all[name];
      if (!repo) throw new Error(`no repository ${name}`);
      if (waking) repo = noting(repo, waking.writes, () => tx.signals.add(waking.signal));
      if (topic) repo = announcing(repo, topic, (ch) => tx.changes.add(ch));
      return repo;
    };
    Object.defineProperty(proto, name, {
      get(this: LmdbTx) {
        let w = this.wrappers.get(name);
        if (!w) {
          w = make(this);
          this.wrappers.set(name, w);
        }
        return w;
      },
    });
  }
  proto.afterCommit = function (this: LmdbTx, fn: () => void) {
    this.after.push(fn);
  };
  proto.changed = function (this: LmdbTx, change: Change) {
    this.changes.add(change);
  };
  return proto;
}

function newTx(proto: LmdbTx): LmdbTx {
  const tx = Object.create(proto) as LmdbTx;
  tx.after = [];
  tx.signals = new Set<Signal>();
  tx.changes = new UnitChanges();
  tx.stale = new Set();
  tx.wrappers = new Map();
  return tx;
}

export class LmdbStore extends Repos implements Store {
  private readonly listeners = new Map<Signal, (() => void)[]>();
  private readonly changeListeners: ((changes: readonly Change[]) => void)[] = [];
  /** One process, and its other thread's store instance is not heard (backoffice/ forwards its changes). */
  readonly hearsOthers = false;
  readonly inboxText = null;
  private txProto?: LmdbTx;
  private readonly cached: Cached = new Map();

  private constructor(
    readonly env: LmdbEnv,
    private readonly ttl: TtlIndex,
    private readonly secrets: Map<SecretName, Buffer>,
    opts: StoreOptions,
  ) {
    super(env, ttl, opts);
    // Outside a unit of work these are read through their cache (the Store interface reads).
    for (const [name, d] of Object.entries(COLLECTIONS) as [keyof Collections, CollectionDecl<Rec, string>][]) {
      if (!d.cached) continue;
      const raw = this[name] as unknown as LmdbCollection<Rec, string>;
      const cache = new CachedRecords(raw);
      this.cached.set(name, { raw, cache });
      Object.defineProperty(this, name, { value: cache });
    }
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
    if (tx.changes.size) {
      const changes = tx.changes.list();
      for (const l of this.changeListeners) guarded(() => l(changes));
    }
    for (const f of tx.after) guarded(f);
    return result;
  }

  on(signal: Signal, listener: () => void): void {
    this.listeners.set(signal, [...(this.listeners.get(signal) ?? []), listener]);
  }

  onChange(listener: (changes: readonly Change[]) => void): void {
    this.changeListeners.push(listener);
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
    for (const c of this.rangedCollections) removed += await c.sweepRange(now);
    removed += await this.metrics.sweepEmails(now);
    return removed;
  }

  async sweepFiles(): Promise<{ orphans: number; purged: number }> {
    const contents = this.contents();
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
      for (const name of this.contents().map((c) => c.collection)) {
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
