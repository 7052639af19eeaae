// Writes to the webhook outbox, all inside the caller's transaction: the fan-out of a new event to
// the subscribed endpoints (an `Events` sink, so the event and its webhook deliveries commit
// together and kill -9 can never lose one), moving an event to its next attempt, and dropping the
// outstanding events of an endpoint that was disabled or deleted.
import type { EventRec, Store, WebhookEventRec } from '../../store';
import { newMsgId } from './signing';

/**
 * Inside a transaction: the one write of an event's delivery state. Stores `rec` with `patch`,
 * moving its outbox entry to `due` (null: out of the outbox), keeping record and outbox in step.
 */
export function moveInTxn(store: Store, rec: WebhookEventRec, due: number | null, patch: Partial<WebhookEventRec> = {}): WebhookEventRec {
  const stored = store.webhookEvents.get(rec.team_id, rec.id);
  if (stored?.due != null) store.webhookOutbox.removeInTxn(stored.team_id, stored.webhook_id, stored.due, stored.id);
  const next: WebhookEventRec = { ...(stored ?? rec), ...patch, due };
  if (due !== null) store.webhookOutbox.putInTxn(next.team_id, next.webhook_id, due, next.id);
  store.webhookEvents.putInTxn(next);
  return next;
}

/**
 * Inside the event's transaction: one webhook event, due now, for every enabled webhook of the
 * event's team subscribed to its type. Returns how many were created.
 */
export function fanOutInTxn(store: Store, ev: EventRec): number {
  let n = 0;
  const now = Date.now();
  for (const w of store.webhooks.all(ev.team_id)) {
    if (w.status !== 'enabled' || !w.events.includes(ev.type)) continue;
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
      payload: { type: ev.type, created_at: ev.created_at, data: ev.data },
    };
    moveInTxn(store, rec, now);
    n++;
  }
  return n;
}

/** Inside a transaction: a disabled or deleted endpoint's outstanding events are dropped (failed). */
export function dropOutstandingInTxn(store: Store, team: string, webhookId: string): number {
  // Collected first: the loop rewrites the index it reads.
  const open = [...store.webhookEvents.findAll('outstanding', webhookId, team)];
  for (const rec of open) moveInTxn(store, rec, null, { status: 'failed', replay: false });
  return open.length;
}
