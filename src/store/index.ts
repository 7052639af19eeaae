// The store: one LMDB environment, the typed collections of every part, the TTL index.
// Kept behind this one object so a PostgreSQL-backed cluster store stays possible (SPEC.md §5).
import { StoreEnv } from './env';
import { TtlIndex } from './ttl';
import { Collection } from './collection';
import { Memberships } from './memberships';
import { DeliveryQueue } from './queue';
import { Schedule } from './schedule';
import { BroadcastProgress } from './broadcast-progress';
import { IdempotencyStore } from './idempotency';
import { Secrets } from './secrets';
import { WebhookOutbox } from './outbox';
import type { Database } from 'lmdb';
import type {
  TeamRec, UserRec, ApiKeyRec, DomainRec, SegmentRec, ContactRec, BroadcastRec, SuppressionRec, LogRec,
} from './records';
import type { EmailRec, EventRec } from './email-records';
import type { WebhookRec, WebhookEventRec, WebhookAttemptRec } from './webhook-records';
import { InboundStore } from './inbound-records';

export * from './records';
export * from './email-records';
export * from './webhook-records';
export * from './inbound-records';
export type { Page, PageQuery } from './paginate';
export { Collection } from './collection';

const DAY = 86_400_000;

export class Store {
  readonly env: StoreEnv;
  readonly ttl: TtlIndex;
  readonly teams: Collection<TeamRec>;
  readonly users: Collection<UserRec>;
  readonly apiKeys: Collection<ApiKeyRec>;
  readonly domains: Collection<DomainRec>;
  readonly segments: Collection<SegmentRec>;
  readonly contacts: Collection<ContactRec>;
  readonly memberships: Memberships;
  readonly broadcasts: Collection<BroadcastRec>;
  /** Broadcasts with work to do: scheduled ones at their time, queued ones at 0 (due now). */
  readonly broadcastSchedule: Schedule;
  readonly broadcastProgress: BroadcastProgress;
  readonly suppressions: Collection<SuppressionRec>;
  readonly logs: Collection<LogRec>;
  readonly emails: Collection<EmailRec>;
  readonly events: Collection<EventRec>;
  /** Bodies and attachments of sent emails, [team, emailId] → EmailContent. */
  readonly emailContent: Database;
  readonly queue: DeliveryQueue;
  readonly schedule: Schedule;
  readonly idempotency: IdempotencyStore;
  readonly secrets: Secrets;
  readonly webhooks: Collection<WebhookRec>;
  /** Keyed [team, msg_id]; listed per webhook, and its outstanding ones found, through indexes. */
  readonly webhookEvents: Collection<WebhookEventRec>;
  readonly webhookAttempts: Collection<WebhookAttemptRec>;
  readonly webhookOutbox: WebhookOutbox;
  /** Received mail (api-reference §8): records, and the messages apart from them. */
  readonly received: InboundStore;

  /**
   * `holdMs`: how long past its send time a record may still be work in progress (a delivery retry
   * window, a webhook's retries); retention never deletes an email or webhook event before that.
   */
  constructor(dataDir: string, readonly retentionDays = 30, holdMs = 72 * 3_600_000) {
    this.env = new StoreEnv(dataDir);
    this.ttl = new TtlIndex(this.env);
    const retained = (r: { created_at: string }) => Date.parse(r.created_at) + this.retentionDays * DAY;
    // Kept for the retention period after the later of creation and scheduled send, plus the hold.
    const retainedWork = (r: { created_at: string; scheduled_at?: string | null }) =>
      Math.max(Date.parse(r.created_at), r.scheduled_at ? Date.parse(r.scheduled_at) : 0) + this.retentionDays * DAY + holdMs;
    this.teams = new Collection(this.env, this.ttl, 'teams');
    this.users = new Collection(this.env, this.ttl, 'users', [
      { name: 'email', value: (u) => u.email.toLowerCase(), unique: true, global: true },
    ]);
    this.apiKeys = new Collection(this.env, this.ttl, 'api_keys', [
      { name: 'hash', value: (k) => k.token_hash, unique: true, global: true },
    ]);
    this.domains = new Collection(this.env, this.ttl, 'domains', [
      { name: 'name', value: (d) => d.name, unique: true, global: true },
    ]);
    this.segments = new Collection(this.env, this.ttl, 'segments');
    this.contacts = new Collection(this.env, this.ttl, 'contacts', [
      { name: 'email', value: (c) => c.email.toLowerCase(), unique: true },
    ]);
    this.memberships = new Memberships(this.env);
    this.broadcasts = new Collection(this.env, this.ttl, 'broadcasts');
    this.broadcastSchedule = new Schedule(this.env, 'broadcast_schedule');
    this.broadcastProgress = new BroadcastProgress(this.env);
    this.suppressions = new Collection(this.env, this.ttl, 'suppressions', [
      { name: 'email', value: (s) => s.email.toLowerCase(), unique: true },
    ]);
    this.logs = new Collection<LogRec>(this.env, this.ttl, 'logs', [], retained);
    this.emailContent = this.env.db('email_content');
    this.emails = new Collection<EmailRec>(this.env, this.ttl, 'emails', [], retainedWork, (team, id) => this.emailContent.remove([team, id]));
    // Events are listed per email/contact through the `subject` index (oldest first).
    this.events = new Collection<EventRec>(this.env, this.ttl, 'events', [{ name: 'subject', value: (e) => e.subject_id }], retained);
    this.queue = new DeliveryQueue(this.env);
    this.schedule = new Schedule(this.env);
    this.idempotency = new IdempotencyStore(this.env, this.ttl);
    this.secrets = new Secrets(this.env);
    this.webhooks = new Collection(this.env, this.ttl, 'webhooks');
    this.webhookEvents = new Collection<WebhookEventRec>(
      this.env,
      this.ttl,
      'webhook_events',
      [
        { name: 'webhook', value: (e) => e.webhook_id },
        { name: 'outstanding', value: (e) => (e.due === null ? null : e.webhook_id) },
      ],
      retainedWork,
    );
    this.webhookAttempts = new Collection<WebhookAttemptRec>(this.env, this.ttl, 'webhook_attempts', [{ name: 'event', value: (a) => a.event_id }], retained);
    this.webhookOutbox = new WebhookOutbox(this.env);
    this.received = new InboundStore(this.env, this.ttl, retained);
  }

  transaction<T>(fn: () => T): Promise<T> {
    return this.env.transaction(fn);
  }

  /** True when the environment holds no team yet (first start). */
  isEmpty(): boolean {
    for (const _ of this.teams.everything()) return false;
    return true;
  }

  close(): Promise<void> {
    return this.env.close();
  }
}
