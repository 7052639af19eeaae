// The catalogue of event kinds and email statuses: each named once, with what follows from it —
// the record it concerns, whether webhooks may subscribe to it and whether Posthorn makes it, the
// `last_event` it leads to (docs/api.md §7.8), the recipient state it sets, the counters it moves
// (docs/api.md §7.9), and how the dashboard shows it. The rest derives from here: the store's
// types, the event function's decisions, the kinds POST /webhooks accepts (docs/api.md §14.1), the
// metric names, the GET /emails status filter, the operator metrics, and the dashboard's lists
// and badges. `web/` imports this file into the browser bundle, so it imports nothing.

/** Badge colours of the dashboard (web/src/styles.css `.badge.<tone>`). */
export type Tone = 'green' | 'blue' | 'violet' | 'amber' | 'red' | 'gray';

/**
 * What each envelope recipient of an email is (`EmailRec.recipients`): `pending` until an event
 * names it; `opted_out`, set by the sending core, skipped because the email's topic is not one the
 * recipient receives (docs/api.md §7.1); the others set by the events below that name recipients
 * (`canceled`: taken out of the delivery queue by a cancel, docs/api.md §7.6).
 */
export const RECIPIENT_STATES = ['pending', 'delivered', 'delayed', 'bounced', 'suppressed', 'complained', 'opted_out', 'canceled'] as const;
export type RecipientState = (typeof RECIPIENT_STATES)[number];

/** The counters GET /emails/metrics offers (docs/api.md §7.9), in the documented order. */
export const COUNTERS = [
  'sent',
  'delivered',
  'delivery_delayed',
  'bounced',
  'bounced_transient',
  'bounced_permanent',
  'bounced_undetermined',
  'complained',
  'suppressed',
  'failed',
  'opened',
  'clicked',
  'unique_opened',
  'unique_clicked',
  'unsubscribed',
  'received',
] as const;
export type Counter = (typeof COUNTERS)[number];
/** Counters kept beside them and offered by no API: hits that looked automated (docs/mail.md §6). */
export type AutomatedCounter = 'automated_opened' | 'automated_clicked';

/**
 * How the metric counters count an event (docs/api.md §7.9):
 * - `email`: once per email, whatever number of recipients it names — the email remembers it in
 *   `counted`; a bounce also once under the counter of its bounce type and, `byClass`, under
 *   `<counter>_<class>`, the bounce class of its reply (`bounced_reputation`…: an extension of
 *   Posthorn's, offered when asked for, docs/api.md §7.9);
 * - `hit`: every human hit, and `unique` once per email; hits that looked automated only under
 *   `automated`;
 * - `event`: every event, under the record's domain.
 */
export type Count =
  | { per: 'email'; counter: Counter; byBounceType?: Record<'Permanent' | 'Transient' | 'Undetermined', Counter>; byClass?: true }
  | { per: 'hit'; counter: Counter; unique: Counter; automated: AutomatedCounter }
  | { per: 'event'; counter: Counter };

export interface KindInfo {
  /** The record the event concerns (its `subject_id`). */
  record: 'email' | 'received_email' | 'contact' | 'domain' | 'suppression' | 'topic' | 'inbox' | 'incident';
  /** One of Resend's webhook kinds (the SDK's `WebhookEvent`): POST /webhooks accepts it (docs/api.md §14.1). */
  webhook: boolean;
  /**
   * A kind of Posthorn's own, not one of Resend's (docs/api.md §14.2): POST /webhooks accepts it
   * too, and only webhooks that name it are sent it.
   */
  extension?: true;
  /**
   * What Posthorn makes of it today: `webhook` — logged, and sent to the webhooks subscribed to it
   * (docs/api.md §14.2); `log` — written to its record's event log only; null — never made (a
   * kind accepted for subscription that never fires).
   */
  emits: 'webhook' | 'log' | null;
  /** The `last_event` the email moves to (docs/api.md §7.8): the status of `email.<status>` is `<status>`. */
  status?: string;
  /** The state it sets on the recipients it names. */
  recipients?: RecipientState;
  count?: Count;
  /**
   * What the operator metrics (GET /metrics, README "Monitoring") count it as besides its type:
   * `accepted` — posthorn_emails_accepted_total; the others — posthorn_deliveries_total's `result`.
   */
  operator?: 'accepted' | 'delivered' | 'bounced' | 'deferred';
  /** How the dashboard shows it (and the status it leads to): a badge's text and colour. */
  label?: string;
  tone?: Tone;
}

/** An inbox's, a thread's or a draft's change (docs/api.md §25.8), made by src/inboxes/events.ts. */
const INBOX = { record: 'inbox', webhook: true, emits: 'webhook' } as const;

/**
 * Every event kind, in this order: an email's statuses in the order of docs/api.md §7.8 (which
 * lists and error messages keep), then the rest.
 */
export const EVENT_KINDS = {
  'email.scheduled': { record: 'email', webhook: true, emits: 'webhook', status: 'scheduled', operator: 'accepted', label: 'scheduled', tone: 'violet' },
  // Derived from the email's `queued_at`, not stored (events/index.ts derivedEvents).
  'email.queued': { record: 'email', webhook: false, emits: 'log', status: 'queued', operator: 'accepted', label: 'queued', tone: 'gray' },
  'email.canceled': { record: 'email', webhook: false, emits: 'log', status: 'canceled', recipients: 'canceled', label: 'canceled', tone: 'gray' },
  'email.sent': {
    record: 'email',
    webhook: true,
    emits: 'webhook',
    status: 'sent',
    count: { per: 'email', counter: 'sent' },
    label: 'sent',
    tone: 'blue',
  },
  'email.delivered': {
    record: 'email',
    webhook: true,
    emits: 'webhook',
    status: 'delivered',
    recipients: 'delivered',
    count: { per: 'email', counter: 'delivered' },
    operator: 'delivered',
    label: 'delivered',
    tone: 'green',
  },
  'email.delivery_delayed': {
    record: 'email',
    webhook: true,
    emits: 'webhook',
    status: 'delivery_delayed',
    recipients: 'delayed',
    count: { per: 'email', counter: 'delivery_delayed' },
    operator: 'deferred',
    label: 'delivery delayed',
    tone: 'amber',
  },
  'email.bounced': {
    record: 'email',
    webhook: true,
    emits: 'webhook',
    status: 'bounced',
    recipients: 'bounced',
    count: {
      per: 'email',
      counter: 'bounced',
      byBounceType: { Permanent: 'bounced_permanent', Transient: 'bounced_transient', Undetermined: 'bounced_undetermined' },
      byClass: true,
    },
    operator: 'bounced',
    label: 'bounced',
    tone: 'red',
  },
  'email.complained': {
    record: 'email',
    webhook: true,
    emits: 'webhook',
    status: 'complained',
    recipients: 'complained',
    count: { per: 'email', counter: 'complained' },
    label: 'complained',
    tone: 'red',
  },
  'email.opened': {
    record: 'email',
    webhook: true,
    emits: 'webhook',
    status: 'opened',
    count: { per: 'hit', counter: 'opened', unique: 'unique_opened', automated: 'automated_opened' },
    label: 'opened',
    tone: 'blue',
  },
  'email.clicked': {
    record: 'email',
    webhook: true,
    emits: 'webhook',
    status: 'clicked',
    count: { per: 'hit', counter: 'clicked', unique: 'unique_clicked', automated: 'automated_clicked' },
    label: 'clicked',
    tone: 'violet',
  },
  'email.failed': {
    record: 'email',
    webhook: true,
    emits: 'webhook',
    status: 'failed',
    count: { per: 'email', counter: 'failed' },
    label: 'failed',
    tone: 'red',
  },
  'email.suppressed': {
    record: 'email',
    webhook: true,
    emits: 'webhook',
    status: 'suppressed',
    recipients: 'suppressed',
    count: { per: 'email', counter: 'suppressed' },
    label: 'suppressed',
    tone: 'red',
  },
  // A broadcast email's unsubscribe link was used: logged and counted on the email, no status.
  'email.unsubscribed': { record: 'email', webhook: false, emits: 'log', count: { per: 'email', counter: 'unsubscribed' }, label: 'unsubscribed', tone: 'red' },
  'email.received': { record: 'received_email', webhook: true, emits: 'webhook', count: { per: 'event', counter: 'received' } },
  'contact.created': { record: 'contact', webhook: true, emits: 'webhook' },
  'contact.updated': { record: 'contact', webhook: true, emits: 'webhook' },
  'contact.deleted': { record: 'contact', webhook: true, emits: 'webhook' },
  'contact.topics.updated': { record: 'contact', webhook: true, emits: 'webhook' },
  'domain.created': { record: 'domain', webhook: true, emits: 'webhook' },
  'domain.updated': { record: 'domain', webhook: true, emits: 'webhook' },
  'domain.deleted': { record: 'domain', webhook: true, emits: 'webhook' },
  'suppression.added': { record: 'suppression', webhook: true, emits: 'webhook' },
  'suppression.removed': { record: 'suppression', webhook: true, emits: 'webhook' },
  'topic.created': { record: 'topic', webhook: true, emits: 'webhook' },
  'topic.updated': { record: 'topic', webhook: true, emits: 'webhook' },
  'topic.deleted': { record: 'topic', webhook: true, emits: 'webhook' },
  'inbox.created': INBOX,
  'inbox.updated': INBOX,
  'inbox.deleted': INBOX,
  'inbox.thread.created': INBOX,
  'inbox.thread.folder.updated': INBOX,
  'inbox.thread.assigned': INBOX,
  'inbox.thread.unassigned': INBOX,
  'inbox.thread.labels.updated': INBOX,
  'inbox.email.received': INBOX,
  'inbox.email.sent': INBOX,
  'inbox.draft.created': INBOX,
  'inbox.draft.updated': INBOX,
  'inbox.draft.sent': INBOX,
  'inbox.draft.deleted': INBOX,
  // Posthorn's own: a deliverability incident opened (docs/api.md §19.9).
  'deliverability.incident': { record: 'incident', webhook: false, extension: true, emits: 'webhook' },
} as const satisfies Record<string, KindInfo>;

type Kinds = typeof EVENT_KINDS;
/** Every catalogued event kind. */
export type EventKind = keyof Kinds;
/** The kinds whose entry has `field` set to a value in `V`. */
type KindsWith<Field extends string, V> = { [K in EventKind]: Kinds[K] extends { [F in Field]: V } ? K : never }[EventKind];

/** `last_event` values (docs/api.md §7.8). */
export type EmailStatus = { [K in EventKind]: Kinds[K] extends { status: infer S extends string } ? S : never }[EventKind];
/** The kind of the event that moves an email to a status: `email.<status>`. */
export type StatusKind = `email.${EmailStatus}`;
/** Resend's kinds: POST /webhooks accepts them (docs/api.md §14.1). */
export type WebhookKind = KindsWith<'webhook', true>;
/** Kinds POST /webhooks accepts: Resend's and Posthorn's own (docs/api.md §14.1, §14.2). */
export type SubscribableKind = WebhookKind | KindsWith<'extension', true>;
/** Kinds Posthorn makes: an event log row's `type`. */
export type LoggedKind = KindsWith<'emits', 'webhook' | 'log'>;
/** Kinds Posthorn sends to webhooks (docs/api.md §14.2). */
export type EmittedWebhookKind = KindsWith<'emits', 'webhook'>;

const kinds = Object.keys(EVENT_KINDS) as EventKind[];

/** The entry of `kind`, as the general shape. */
export function infoOf(kind: EventKind): KindInfo {
  return EVENT_KINDS[kind];
}

/** The `last_event` values, in the order of docs/api.md §7.8. */
export const EMAIL_STATUSES: readonly EmailStatus[] = kinds.flatMap((k) => infoOf(k).status ?? []) as EmailStatus[];
/** Kinds POST /webhooks accepts: every one of Resend's, those Posthorn never sends included. */
export const WEBHOOK_KINDS: readonly WebhookKind[] = kinds.filter((k) => infoOf(k).webhook) as WebhookKind[];
/** Kinds Posthorn sends to webhooks: what a webhook can usefully subscribe to. */
export const EMITTED_WEBHOOK_KINDS: readonly EmittedWebhookKind[] = kinds.filter((k) => infoOf(k).emits === 'webhook') as EmittedWebhookKind[];
/** Kinds POST /webhooks accepts: Resend's, and Posthorn's own after them. */
export const SUBSCRIBABLE_KINDS: readonly SubscribableKind[] = kinds.filter((k) => infoOf(k).webhook || infoOf(k).extension) as SubscribableKind[];

const webhookKinds = new Set<string>(WEBHOOK_KINDS);
const subscribableKinds = new Set<string>(SUBSCRIBABLE_KINDS);

/** Is `kind` one of Resend's webhook kinds (docs/api.md §14.1)? */
export function isWebhookKind(kind: string): kind is WebhookKind {
  return webhookKinds.has(kind);
}

/** Does POST /webhooks accept `kind`: one of Resend's, or one of Posthorn's own (docs/api.md §14.1)? */
export function isSubscribableKind(kind: string): kind is SubscribableKind {
  return subscribableKinds.has(kind);
}

/** The entry of `kind`, or undefined for a name the catalogue does not know (data read back, a query). */
export function kindInfo(kind: string): KindInfo | undefined {
  return Object.hasOwn(EVENT_KINDS, kind) ? infoOf(kind as EventKind) : undefined;
}

/** The entry of the event that moves an email to `status`. */
export function statusInfo(status: EmailStatus): KindInfo {
  return infoOf(`email.${status}`);
}

/**
 * How the dashboard shows an email's statuses and the events of its log: a badge's text and colour,
 * by the kind's name without `email.` — which is the status it leads to (`delivery_delayed`,
 * `unsubscribed`).
 */
export const EMAIL_BADGES: Readonly<Record<string, { label: string; tone: Tone }>> = Object.fromEntries(
  kinds.flatMap((k) => {
    const { record, label, tone } = infoOf(k);
    return record === 'email' && label && tone ? [[k.slice('email.'.length), { label, tone }]] : [];
  }),
);
