// The one event function (docs/ARCHITECTURE.md): every state change of an email — and every other
// event a webhook may carry — goes through `Events`. Inside the caller's unit of work it updates
// the email's `last_event` and recipient states, appends to the event log, and hands
// webhook-visible events to the registered sinks (the webhook outbox), so the change and its
// notifications commit together. One event is derived rather than written: `email.queued`, which
// every immediate send makes at once, is the email's `queued_at` (derivedEvents) — a row and its
// index less per email accepted. And the row of an email's webhook event keeps only its own part of
// the payload: the rest (addresses, subject, tags…) is the email's and is read from it (eventData).
import type { EmailRec, EmailStatus, EventRec, EventType, StoreReader, TriggerRec, Tx } from '../store';
import type { Bounce } from '../mail/smtp-reply';
import type { BounceClass } from '../mail/bounce-class';
import { newId, nowIso, uuidAtIso } from '../ids';
import { infoOf, statusInfo, type Count, type StatusKind } from '../event-catalogue';
import { countersFor, engagementAfter } from './counting';

export type { Bounce };

/** The webhook-visible kinds that are not an email's state change: made by `Events.other`. */
export type OtherKind = Exclude<EventType, StatusKind>;

export interface EmailEventDetails {
  /** The recipients the event concerns (bare addresses); default: the email's `to`. */
  recipients?: string[];
  bounce?: Bounce;
  /** The bounce class of the reply that bounced it (counted as `bounced_<class>`; none: `unknown`). */
  class?: BounceClass;
  /**
   * The mailbox provider the event happened at (a delivery attempt's); kept as the email's `site`
   * when it has none. Events without one count under the email's.
   */
  site?: string;
  /** The sending IP the event's attempt left from (`delivery.ips`); kept as the email's `sending_ip` when it has none. */
  ip?: string;
  click?: { ipAddress: string; link: string; timestamp: string; userAgent: string };
  at?: string;
  /**
   * Why an open or click looks automated (a privacy proxy, a link scanner, a prefetch), or null:
   * the event is still sent, and metrics count it apart. Kept in the event log, not in webhooks.
   */
  automated?: string | null;
  /** `email.failed`: why the email could not be sent (docs/api.md §14.3). */
  failed?: { reason: string };
  /** `email.suppressed`: why its recipients were skipped (docs/api.md §14.3). */
  suppressed?: { message: string; type: string };
  /** `email` is the record as it now is (built in this unit of work): not read back from the store. */
  current?: boolean;
}

/**
 * What the sinks are told of a webhook-visible event beside its row, and nothing stores: the
 * domain it belongs to — an email's sending domain, a received email's receiving domain, a domain
 * event's own — which webhooks limited to other domains skip (`domain_ids`, docs/api.md §14.1);
 * and, for `email.received`, the message to add for webhooks that ask for it (`include_content`).
 */
export interface EventScope {
  domain_id?: string;
  /** The payload with the message's content: made once, when a subscribed webhook wants it. */
  withContent?: () => Promise<Record<string, unknown>>;
}

/** A consumer of webhook-visible events, run inside the event's unit of work. */
export type EventSink = (tx: Tx, event: EventRec, scope: EventScope) => Promise<unknown> | undefined;

/**
 * The events of an email's log that are derived from the email rather than stored: `email.queued`
 * at its `queued_at`, with the id of that time (uuidAt: before every event made since) and the
 * data its row had (`recipients` null: all of them).
 */
export function derivedEvents(email: EmailRec): EventRec[] {
  if (!email.queued_at) return [];
  return [
    {
      id: uuidAtIso(email.queued_at),
      team_id: email.team_id,
      created_at: email.queued_at,
      type: 'email.queued',
      webhook: false,
      subject_id: email.id,
      data: { email_id: email.id, recipients: null },
    },
  ];
}

/** The key under which `address` is one of these recipients, compared case-insensitively. */
export function recipientKey(recipients: Record<string, unknown>, address: string): string | null {
  if (Object.hasOwn(recipients, address)) return address;
  const lower = address.toLowerCase();
  return Object.keys(recipients).find((k) => k.toLowerCase() === lower) ?? null;
}

export class Events {
  private readonly sinks: EventSink[] = [];
  private readonly observers: ((event: EventRec) => void)[] = [];

  /** Be told of every event once its unit of work has committed (operator metrics). */
  observe(fn: (event: EventRec) => void): void {
    this.observers.push(fn);
  }

  /** Register a consumer of webhook-visible events (the composition root does, at start). */
  onEvent(sink: EventSink): void {
    this.sinks.push(sink);
  }

  /**
   * In a unit of work: move `email` to `status`. Returns the updated record (also stored).
   * Reads the current record first (unless `details.current`), so several updates inside one unit
   * of work compose.
   */
  async email(tx: Tx, email: EmailRec, status: EmailStatus, details: EmailEventDetails = {}): Promise<EmailRec> {
    const cur = details.current ? email : ((await tx.emails.get(email.team_id, email.id)) ?? email);
    const at = details.at ?? nowIso();
    const info = statusInfo(status);
    const state = info.recipients;
    // The recipients are copied only when some change (records are never changed in place).
    const changes = !!state && !!details.recipients;
    const next: EmailRec = { ...cur, last_event: status, recipients: changes ? { ...cur.recipients } : cur.recipients };
    if (changes) for (const r of details.recipients!) next.recipients[recipientKey(next.recipients, r) ?? r] = state;
    if (status === 'queued') next.queued_at = at;
    if (status === 'sent' && !next.sent_at) next.sent_at = at;
    if (status === 'delivered' && !next.delivered_at) next.delivered_at = at;
    if (details.site) next.site ??= details.site;
    if (details.ip) next.sending_ip ??= details.ip;
    if (status === 'opened' || status === 'clicked') this.engage(tx, next, details.click?.link ?? null, !!details.automated, at);
    this.count(tx, next, info.count, details, at);
    tx.emails.put(next);
    this.live(tx, next);
    if (status === 'queued') {
      // Stored as `queued_at` (derivedEvents); observed like any other.
      const [ev] = derivedEvents(next);
      this.observeAfterCommit(tx, ev!);
      return next;
    }

    const kind = `email.${status}` as const;
    if (info.emits !== 'webhook') {
      await this.append(tx, next.team_id, kind, next.id, { email_id: next.id, recipients: details.recipients ?? null }, at, false);
      return next;
    }
    // Webhooks and observers get the whole payload; the row keeps only the event's own part.
    await this.append(
      tx,
      next.team_id,
      kind,
      next.id,
      emailPayload(next, status, details),
      at,
      { domain_id: next.domain_id },
      details.automated,
      ownPart(details),
    );
    return next;
  }

  /**
   * In a unit of work: a contact unsubscribed through the link of this (broadcast) email. The
   * contact's own change is `contact.updated`; this logs it on the email and counts it, once.
   */
  async unsubscribed(tx: Tx, email: EmailRec): Promise<void> {
    const cur = (await tx.emails.get(email.team_id, email.id)) ?? email;
    if (cur.counted?.includes('unsubscribed')) return;
    const at = nowIso();
    const next = { ...cur };
    this.count(tx, next, infoOf('email.unsubscribed').count, {}, at);
    tx.emails.put(next);
    this.live(tx, next);
    await this.append(tx, next.team_id, 'email.unsubscribed', next.id, { email_id: next.id, contact_id: next.contact_id ?? null }, at, false);
  }

  /**
   * The dashboard's live stream hears of every state change here, in the change's unit of work
   * (docs/ARCHITECTURE.md §1: events → webhooks / dashboard): the email, and its broadcast, whose
   * page counts its emails' events.
   */
  private live(tx: Tx, email: EmailRec): void {
    tx.changed({ team: email.team_id, topic: 'email', id: email.id });
    if (email.broadcast_id) tx.changed({ team: email.team_id, topic: 'broadcast', id: email.broadcast_id });
  }

  /** Record an open or click on `email` (in place) and, for a human click in a broadcast, on its link. */
  private engage(tx: Tx, email: EmailRec, link: string | null, automated: boolean, at: string): void {
    const { engagement, firstClickOfLink } = engagementAfter(email.engagement, link, automated, at);
    email.engagement = engagement;
    if (link !== null && !automated && email.broadcast_id) tx.metrics.addLink(email.team_id, email.broadcast_id, link, 1, firstClickOfLink ? 1 : 0);
  }

  /** Move the metric counters of `email` as `count` says (updating its `counted` in place, before it is stored). */
  private count(tx: Tx, email: EmailRec, count: Count | undefined, details: EmailEventDetails, at: string): void {
    const { counts, counted } = countersFor(email, count, details);
    if (Object.keys(counts).length === 0) return;
    email.counted = counted;
    const site = details.site ?? email.site ?? null;
    const ip = details.ip ?? email.sending_ip ?? null;
    tx.metrics.add(email.team_id, Date.parse(at), { domain_id: email.domain_id, broadcast_id: email.broadcast_id, site, ip, email_id: email.id }, counts);
  }

  /**
   * In a unit of work, at the email's first delivery attempt: its mailbox provider is the site that
   * attempt reached. Its `sent`, counted at its claim under the site the claim expected (a domain
   * whose provider only its MX shows — a Google Workspace domain — is `other` until an attempt has
   * shown it), moves there — and to the sending IP the attempt left from, if `delivery.ips` chose
   * one. Returns the email with its `site` and `sending_ip` (not stored: the caller's events store it).
   */
  attribute(tx: Tx, email: EmailRec, site: string, ip?: string | null): EmailRec {
    const sendingIp = email.sending_ip ?? ip ?? undefined;
    if (email.site === site && email.sending_ip === sendingIp) return email;
    if (email.sent_at && email.counted?.includes('sent')) {
      const at = Date.parse(email.sent_at);
      const dims = { domain_id: email.domain_id, broadcast_id: email.broadcast_id, email_id: email.id };
      tx.metrics.add(email.team_id, at, { ...dims, site: email.site ?? null, ip: email.sending_ip ?? null }, { sent: -1 });
      tx.metrics.add(email.team_id, at, { ...dims, site, ip: sendingIp ?? null }, { sent: 1 });
    }
    return { ...email, site, ...(sendingIp ? { sending_ip: sendingIp } : {}) };
  }

  /**
   * In a unit of work: an event that is not an email state change (email.received, contact.*,
   * domain.*, suppression.*, topic.*). `scope` names its domain, if it has one (EventScope); a kind
   * counted every time (received mail: the `received` metric) is counted under that domain.
   */
  other(tx: Tx, team: string, type: OtherKind, subjectId: string, data: Record<string, unknown>, scope: EventScope = {}): Promise<EventRec> {
    const at = nowIso();
    const { count } = infoOf(type);
    if (scope.domain_id && count?.per === 'event')
      tx.metrics.add(team, Date.parse(at), { domain_id: scope.domain_id, broadcast_id: null, email_id: subjectId }, { [count.counter]: 1 });
    return this.append(tx, team, type, subjectId, data, at, scope);
  }

  /**
   * In a unit of work: an automation trigger — a custom event sent for a contact (POST
   * /events/send), or a system event (`resend:contact.created`, `resend:contact.added_to_segment`).
   * It is committed with the change it stands for; the back office starts the runs it triggers and
   * wakes the runs waiting for it (docs/api.md §24.6). Resolves to the trigger's id (null: not written, `ifHeard`).
   */
  async trigger(
    tx: Tx,
    team: string,
    t: { event: string; contact_id?: string | null; email?: string | null; payload?: Record<string, unknown> },
    opts: { ifHeard?: boolean } = {},
  ): Promise<string | null> {
    // A system event nothing listens for (no enabled automation starts on it, no run of the contact
    // waits for it) is not written at all: creating contacts costs nothing more without automations.
    if (opts.ifHeard && !(await this.heard(tx, team, t.event, t.contact_id ?? null))) return null;
    const rec: TriggerRec = {
      id: newId(),
      team_id: team,
      created_at: nowIso(),
      event: t.event,
      contact_id: t.contact_id ?? null,
      email: t.email ?? null,
      payload: t.payload ?? {},
    };
    tx.automationTriggers.add(rec);
    return rec.id;
  }

  /** Does an enabled automation start on `event`, or a run of the contact wait for it? */
  private async heard(tx: Tx, team: string, event: string, contactId: string | null): Promise<boolean> {
    if ((await tx.automations.findAll('trigger', event, team)).length) return true;
    return !!contactId && (await tx.automationRuns.findAll('waiting', `${contactId}:${event}`, team)).length > 0;
  }

  /** An email's or contact's event log, oldest first (derived events included, each with its whole `data`). */
  async log(store: StoreReader, team: string, subjectId: string): Promise<EventRec[]> {
    const email = await store.emails.get(team, subjectId);
    const stored = (await store.events.findAll('subject', subjectId, team)).map((ev) => (ev.email_payload ? { ...ev, data: eventData(ev, email) } : ev));
    const derived = email ? derivedEvents(email) : [];
    return derived.length ? [...stored, ...derived].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)) : stored;
  }

  /** Hand `ev` to the observers once `tx` has committed. */
  private observeAfterCommit(tx: Tx, ev: EventRec): void {
    if (this.observers.length)
      tx.afterCommit(() => {
        for (const o of this.observers) o(ev);
      });
  }

  /**
   * `webhook`: the scope of a webhook-visible event (handed to the sinks), false for one that is
   * only logged. `own`: what the row keeps of an email event's `data` (the rest is the email's: eventData).
   */
  private async append(
    tx: Tx,
    team: string,
    type: EventRec['type'],
    subjectId: string,
    data: Record<string, unknown>,
    at: string,
    webhook: EventScope | false,
    automated?: string | null,
    own?: Record<string, unknown>,
  ): Promise<EventRec> {
    const ev: EventRec = { id: newId(), team_id: team, created_at: at, type, webhook: webhook !== false, subject_id: subjectId, data };
    if (automated) ev.automated = automated;
    tx.events.put(own ? { ...ev, data: own, email_payload: true } : ev);
    this.observeAfterCommit(tx, ev);
    if (webhook) for (const sink of this.sinks) await sink(tx, ev, webhook);
    return ev;
  }
}

/** What an email event's row keeps of its `data`: what is its own, not the email's. */
function ownPart(d: EmailEventDetails): Record<string, unknown> {
  const own: Record<string, unknown> = {};
  if (d.recipients) own.recipients = d.recipients;
  if (d.bounce) own.bounce = d.bounce;
  if (d.click) own.click = d.click;
  if (d.failed) own.failed = d.failed;
  if (d.suppressed) own.suppressed = d.suppressed;
  return own;
}

/**
 * An event's `data` as webhooks carry it (docs/api.md §14.3): a row that keeps only its own part
 * (`email_payload`) gets the rest from its email; other rows have it all.
 */
export function eventData(ev: EventRec, email: EmailRec | undefined): Record<string, unknown> {
  if (!ev.email_payload || !email) return ev.data;
  return emailPayload(email, ev.type.slice('email.'.length) as EmailStatus, ev.data as EmailEventDetails);
}

/** `data` of an outbound email event (docs/api.md §14.3); `status` is the event's. */
function emailPayload(e: EmailRec, status: EmailStatus, d: EmailEventDetails): Record<string, unknown> {
  const data: Record<string, unknown> = {
    email_id: e.id,
    created_at: e.created_at,
    message_id: e.message_id,
    from: e.from,
    // Opens and clicks name their recipient only when the message had one (docs/mail.md §6).
    to: d.recipients && status !== 'sent' ? d.recipients : e.to,
    subject: e.subject,
    tags: Object.fromEntries(e.tags.map((t) => [t.name, t.value])),
  };
  const headers = Object.entries(e.headers);
  if (headers.length) data.headers = headers.map(([name, value]) => ({ name, value }));
  if (e.broadcast_id) data.broadcast_id = e.broadcast_id;
  if (e.template_id) data.template_id = e.template_id;
  if (d.bounce) data.bounce = d.bounce;
  if (d.click) data.click = d.click;
  if (d.failed) data.failed = d.failed;
  if (d.suppressed) data.suppressed = d.suppressed;
  return data;
}
