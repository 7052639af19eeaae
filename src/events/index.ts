// The one event function (docs/ARCHITECTURE.md): every state change of an email — and every other
// event a webhook may carry — goes through `Events`. Inside the caller's unit of work it updates
// the email's `last_event` and recipient states, appends to the event log, and hands
// webhook-visible events to the registered sinks (the webhook outbox), so the change and its
// notifications commit together.
import type { EmailRec, EmailStatus, EventRec, EventType, RecipientState, StoreReader, Tx } from '../store';
import type { Bounce } from '../mail/smtp-reply';
import { newId, nowIso } from '../ids';

export type { Bounce };

/** Statuses that Resend reports by webhook (docs/api.md §14.2); the rest are internal. */
const WEBHOOK_KINDS: Partial<Record<EmailStatus, EventType>> = {
  sent: 'email.sent',
  delivered: 'email.delivered',
  delivery_delayed: 'email.delivery_delayed',
  bounced: 'email.bounced',
  complained: 'email.complained',
  opened: 'email.opened',
  clicked: 'email.clicked',
};

/** Recipient state implied by an event about specific recipients. */
const RECIPIENT_STATE: Partial<Record<EmailStatus, RecipientState>> = {
  delivered: 'delivered',
  delivery_delayed: 'delayed',
  bounced: 'bounced',
  complained: 'complained',
  suppressed: 'suppressed',
};

export interface EmailEventDetails {
  /** The recipients the event concerns (bare addresses); default: the email's `to`. */
  recipients?: string[];
  bounce?: Bounce;
  click?: { ipAddress: string; link: string; timestamp: string; userAgent: string };
  at?: string;
}

/** A consumer of webhook-visible events, run inside the event's unit of work. */
export type EventSink = (tx: Tx, event: EventRec) => Promise<unknown> | void;

/** The key under which `address` is one of these recipients, compared case-insensitively. */
export function recipientKey(recipients: Record<string, unknown>, address: string): string | null {
  if (Object.hasOwn(recipients, address)) return address;
  const lower = address.toLowerCase();
  return Object.keys(recipients).find((k) => k.toLowerCase() === lower) ?? null;
}

export class Events {
  private readonly sinks: EventSink[] = [];

  /** Register a consumer of webhook-visible events (the composition root does, at start). */
  onEvent(sink: EventSink): void {
    this.sinks.push(sink);
  }

  /**
   * In a unit of work: move `email` to `status`. Returns the updated record (also stored).
   * Reads the current record first, so several updates inside one unit of work compose.
   */
  async email(tx: Tx, email: EmailRec, status: EmailStatus, details: EmailEventDetails = {}): Promise<EmailRec> {
    const cur = (await tx.emails.get(email.team_id, email.id)) ?? email;
    const at = details.at ?? nowIso();
    const next: EmailRec = { ...cur, last_event: status, recipients: { ...cur.recipients } };
    const state = RECIPIENT_STATE[status];
    if (state && details.recipients) for (const r of details.recipients) next.recipients[recipientKey(next.recipients, r) ?? r] = state;
    if (status === 'sent' && !next.sent_at) next.sent_at = at;
    tx.emails.put(next);

    const kind = WEBHOOK_KINDS[status];
    const data: Record<string, unknown> = kind ? emailPayload(next, details) : { email_id: next.id, recipients: details.recipients ?? null };
    await this.append(tx, next.team_id, kind ?? (`email.${status}` as const), next.id, data, at, !!kind);
    return next;
  }

  /** In a unit of work: an event that is not an email state change (email.received, contact.updated). */
  other(tx: Tx, team: string, type: EventType, subjectId: string, data: Record<string, unknown>): Promise<EventRec> {
    return this.append(tx, team, type, subjectId, data, nowIso(), true);
  }

  /** An email's or contact's event log, oldest first. */
  log(store: StoreReader, team: string, subjectId: string): Promise<EventRec[]> {
    return store.events.findAll('subject', subjectId, team);
  }

  private async append(tx: Tx, team: string, type: EventRec['type'], subjectId: string, data: Record<string, unknown>, at: string, webhook: boolean): Promise<EventRec> {
    const ev: EventRec = { id: newId(), team_id: team, created_at: at, type, webhook, subject_id: subjectId, data };
    tx.events.put(ev);
    if (webhook) for (const sink of this.sinks) await sink(tx, ev);
    return ev;
  }
}

/** `data` of an outbound email event (docs/api.md §14.3). */
function emailPayload(e: EmailRec, d: EmailEventDetails): Record<string, unknown> {
  const data: Record<string, unknown> = {
    email_id: e.id,
    created_at: e.created_at,
    message_id: e.message_id,
    from: e.from,
    to: d.recipients && !['sent', 'opened', 'clicked'].includes(e.last_event) ? d.recipients : e.to,
    subject: e.subject,
    tags: Object.fromEntries(e.tags.map((t) => [t.name, t.value])),
  };
  const headers = Object.entries(e.headers);
  if (headers.length) data.headers = headers.map(([name, value]) => ({ name, value }));
  if (e.broadcast_id) data.broadcast_id = e.broadcast_id;
  if (d.bounce) data.bounce = d.bounce;
  if (d.click) data.click = d.click;
  return data;
}
