// Writes to the webhook outbox, all inside the caller's unit of work: the fan-out of a new event to
// the subscribed endpoints (an `Events` sink, so the event and its webhook deliveries commit
// together and kill -9 can never lose one), moving an event to its next attempt, and dropping the
// outstanding events of an endpoint that was disabled or deleted.
import type { EventRec, Tx, WebhookEventRec, WebhookRec } from '../../store';
import type { EventScope } from '../index';
import { newMsgId } from './signing';

/**
 * The one write of an event's delivery state. Stores `rec` with `patch`, moving its outbox entry to
 * `due` (null: out of the outbox), keeping record and outbox in step.
 */
export async function moveEvent(tx: Tx, rec: WebhookEventRec, due: number | null, patch: Partial<WebhookEventRec> = {}): Promise<WebhookEventRec> {
  const stored = await tx.webhookEvents.get(rec.team_id, rec.id);
  if (stored?.due != null) tx.outbox.remove(stored.team_id, stored.webhook_id, stored.due, stored.id);
  const next: WebhookEventRec = { ...(stored ?? rec), ...patch, due };
  if (due !== null) tx.outbox.put(next.team_id, next.webhook_id, due, next.id);
  tx.webhookEvents.put(next);
  return next;
}

/**
 * Does `w` take `ev`? Enabled, subscribed to its type, and — when limited to some domains
 * (`domain_ids`, docs/api.md §14.1) — the event is one of theirs; an event of no domain (contact,
 * topic, suppression) goes to every subscribed webhook.
 */
export function takes(w: WebhookRec, ev: EventRec, scope: EventScope): boolean {
  if (w.status !== 'enabled' || !w.events.includes(ev.type)) return false;
  return !w.domain_ids?.length || scope.domain_id === undefined || w.domain_ids.includes(scope.domain_id);
}

/**
 * The event sink: one webhook event, due now, for every enabled webhook of the event's team
 * subscribed to it (`takes`). A webhook with `include_content` gets the payload with the message
 * when the event has one (`email.received`). Returns how many were created.
 */
export async function fanOut(tx: Tx, ev: EventRec, scope: EventScope = {}): Promise<number> {
  let n = 0;
  const now = Date.now();
  // Made at most once, for the first webhook that asks for it.
  let withContent: Promise<Record<string, unknown>> | undefined;
  const content = (make: () => Promise<Record<string, unknown>>) => {
    withContent ??= make();
    return withContent;
  };
  for (const w of await tx.webhooks.all(ev.team_id)) {
    if (!takes(w, ev, scope)) continue;
    const data = w.include_content && scope.withContent ? await content(scope.withContent) : ev.data;
    const rec: WebhookEventRec = {
      id: newMsgId(),
      team_id: ev.team_id,
      created_at: ev.created_at,
      webhook_id: w.id,
      event_id: ev.id,
      type: ev.type,
      status: 'pending',
      attempts: 0,
      due: null,
      replay: false,
      payload: { type: ev.type, created_at: ev.created_at, data },
    };
    await moveEvent(tx, rec, now);
    n++;
  }
  return n;
}

/** A disabled or deleted endpoint's outstanding events are dropped (failed). */
export async function dropOutstanding(tx: Tx, team: string, webhookId: string): Promise<number> {
  const open = await tx.webhookEvents.findAll('outstanding', webhookId, team);
  for (const rec of open) await moveEvent(tx, rec, null, { status: 'failed', replay: false });
  return open.length;
}
