// The embedded backend of the store interface (../interface.ts): one LMDB environment in data_dir
// holding every collection, index and queue, written in batched, flushed transactions.
import { open } from 'lmdb';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { LmdbEnv } from './env';
import { SpillFiles } from './spill';
import { TtlIndex } from './ttl';
import { LmdbCollection, LmdbContents } from './collection';
import { LmdbMemberships } from './memberships';
import { LmdbQueue } from './queue';
import { LmdbDueIndex } from './due-index';
import { LmdbBroadcastProgress } from './broadcast-progress';
import { LmdbIdempotency } from './idempotency';
import { LmdbOutbox } from './outbox';
import { LmdbMetrics } from './metrics';
import { LmdbInboundSpool } from './inbound-spool';
import { loadSecrets } from './secrets';
import { log } from '../../log';
import type { Signal, SecretName, Store, StoreOptions, Tx, QueueTx, OutboxTx, InboundSpoolTx } from '../interface';
import type { TeamRec, UserRec, SessionRec, InviteRec, ApiKeyRec, DomainRec, SegmentRec, ContactRec, BroadcastRec, SuppressionRec, LogRec } from '../records';
import type { EmailRec, EmailContent, EventRec, QueueEntry } from '../email-records';
import type { WebhookRec, WebhookEventRec, WebhookAttemptRec } from '../webhook-records';
import type { ReceivedEmailRec, ReceivedContent, SpooledMessage } from '../inbound-records';

const DAY = 86_400_000;

function guarded(fn: () => void): void {
  try {
    fn();
  } catch (e) {
    log.error('store.after_commit_failed', { error: String((e as Error)?.stack ?? e) });
  }
}

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
  readonly inboundSpool: LmdbInboundSpool;
  readonly memberships: LmdbMemberships;
  readonly queue: LmdbQueue;
  readonly schedule: LmdbDueIndex;
  readonly broadcastSchedule: LmdbDueIndex;
  readonly broadcastProgress: LmdbBroadcastProgress;
  readonly idempotency: LmdbIdempotency;
  readonly outbox: LmdbOutbox;
  readonly metrics: LmdbMetrics;

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
    this.invites = new LmdbCollection<InviteRec, 'token'>(env, ttl, 'invites', [{ name: 'token', value: (x) => x.token_hash, unique: true, global: true }], (x) => x.expires_at);
    this.apiKeys = new LmdbCollection(env, ttl, 'api_keys', [{ name: 'hash', value: (k) => k.token_hash, unique: true, global: true }]);
    this.domains = new LmdbCollection(env, ttl, 'domains', [{ name: 'name', value: (d) => d.name, unique: true, global: true }]);
    this.segments = new LmdbCollection(env, ttl, 'segments');
    this.contacts = new LmdbCollection(env, ttl, 'contacts', [{ name: 'email', value: (c) => c.email.toLowerCase(), unique: true }]);
    this.memberships = new LmdbMemberships(env, this.contacts, this.segments);
    this.broadcasts = new LmdbCollection(env, ttl, 'broadcasts');
    this.broadcastSchedule = new LmdbDueIndex(env, 'broadcast_schedule');
    this.broadcastProgress = new LmdbBroadcastProgress(env);
    this.suppressions = new LmdbCollection(env, ttl, 'suppressions', [{ name: 'email', value: (s) => s.email.toLowerCase(), unique: true }]);
    this.logs = new LmdbCollection<LogRec>(env, ttl, 'logs', [], retained);
    this.emailContent = new LmdbContents(env, 'email_content', this.spill);
    this.emails = new LmdbCollection<EmailRec, 'broadcast'>(env, ttl, 'emails', [{ name: 'broadcast', value: (e) => e.broadcast_id }], retainedWork, (team, id) => this.emailContent.drop(team, id));
    this.events = new LmdbCollection<EventRec, 'subject'>(env, ttl, 'events', [{ name: 'subject', value: (e) => e.subject_id }], retained);
    this.queue = new LmdbQueue(env);
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
    this.webhookAttempts = new LmdbCollection<WebhookAttemptRec, 'event'>(env, ttl, 'webhook_attempts', [{ name: 'event', value: (a) => a.event_id }], retained);
    this.outbox = new LmdbOutbox(env);
    this.metrics = new LmdbMetrics(env, ttl, opts.retentionDays * DAY);
    this.receivedContent = new LmdbContents(env, 'received_content', this.spill);
    this.receivedEmails = new LmdbCollection<ReceivedEmailRec>(env, ttl, 'received_emails', [], retained, (team, id) => this.receivedContent.drop(team, id));
    this.inboundSpool = new LmdbInboundSpool(env, ttl, this.spill, opts.retentionDays * DAY);
  }
}

interface LmdbTx extends Tx {
  after: (() => void)[];
  signals: Set<Signal>;
  _queue?: QueueTx;
  _outbox?: OutboxTx;
  _inboundSpool?: InboundSpoolTx;
}

/**
 * The prototype of every unit of work over `repos`: reads and writes go straight to the shared
 * repositories; queue, outbox and inbound spool writes also note the signal to fire after the
 * commit. A unit of work itself is one small object holding what to run after its commit.
 */
function txPrototype(repos: Repos): LmdbTx {
  const proto = Object.create(repos) as LmdbTx;
  Object.defineProperties(proto, {
    queue: {
      get(this: LmdbTx) {
        const signals = this.signals;
        return (this._queue ??= Object.assign(Object.create(repos.queue) as LmdbQueue, {
          put(entry: QueueEntry, due: number) {
            repos.queue.put(entry, due);
            signals.add('queue');
          },
        }));
      },
    },
    outbox: {
      get(this: LmdbTx) {
        const signals = this.signals;
        return (this._outbox ??= Object.assign(Object.create(repos.outbox) as LmdbOutbox, {
          put(team: string, webhook: string, due: number, eventId: string) {
            repos.outbox.put(team, webhook, due, eventId);
            signals.add('outbox');
          },
        }));
      },
    },
    inboundSpool: {
      get(this: LmdbTx) {
        const signals = this.signals;
        return (this._inboundSpool ??= Object.assign(Object.create(repos.inboundSpool) as LmdbInboundSpool, {
          add(msg: SpooledMessage, raw: Uint8Array, due: number) {
            repos.inboundSpool.add(msg, raw, due);
            signals.add('inbound');
          },
          update(msg: SpooledMessage, due: number | null) {
            repos.inboundSpool.update(msg, due);
            if (due !== null) signals.add('inbound');
          },
        }));
      },
    },
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
  return tx;
}

export class LmdbStore extends Repos implements Store {
  private readonly listeners = new Map<Signal, (() => void)[]>();
  private txProto?: LmdbTx;

  private constructor(
    private readonly env: LmdbEnv,
    private readonly ttl: TtlIndex,
    private readonly secrets: Map<SecretName, Buffer>,
    opts: StoreOptions,
  ) {
    super(env, ttl, opts);
  }

  static async open(opts: StoreOptions): Promise<LmdbStore> {
    const env = new LmdbEnv(opts.dataDir);
    const ttl = new TtlIndex(env);
    return new LmdbStore(env, ttl, await loadSecrets(env), opts);
  }

  async write<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    const tx = newTx((this.txProto ??= txPrototype(this)));
    const result = await this.env.transaction(() => fn(tx));
    // Committed: whatever follows must not make the caller believe it failed.
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

  private purgedAt = 0;

  sweep(now = Date.now()): Promise<number> {
    // Deleted bodies' files leave the trash a day later; looking hourly is enough.
    if (now - this.purgedAt >= 3_600_000) {
      this.purgedAt = now;
      this.spill.purge(now);
    }
    return this.ttl.sweep(now);
  }

  async sweepFiles(): Promise<{ orphans: number; purged: number }> {
    const contents = [this.emailContent, this.receivedContent, this.inboundSpool.content];
    return this.spill.sweep((ns, team, id) => contents.some((c) => c.collection === ns && c.has(team, id)));
  }

  async isEmpty(): Promise<boolean> {
    return this.teams.isEmpty();
  }

  settled(): Promise<void> {
    return this.env.committed();
  }

  async backup(dest: string, opts: { compact: boolean }): Promise<{ files: number }> {
    // The snapshot first; then every file a record of it names. Files are never changed and stay
    // in the trash for a day after their record goes, so each is still there to copy.
    await this.env.root.backup(dest, opts.compact);
    const snapshot = open({ path: dest, readOnly: true, maxDbs: 64, sharedStructuresKey: Symbol.for('structures') });
    let files = 0;
    try {
      for (const name of ['email_content', 'received_content', 'inbound_spool_content']) {
        const db = snapshot.openDB({ name, sharedStructuresKey: Symbol.for('structures') });
        for (const { key, value } of db.getRange({})) {
          const note = (value as { _spill?: { files: Record<string, number> } })._spill;
          if (!note) continue;
          const [team, id] = (key as string[]).map(String) as [string, string];
          files += await this.spill.copyTo(`${dest}.content`, name, team, id, ['raw', ...Object.keys(note.files).map((a) => `file-${a}`)]);
        }
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
