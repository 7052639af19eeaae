// Broadcasts (docs/api.md §13): content validation, the state rules, and the hand-off to sending.
// Lifecycle: draft → (scheduled) → queued → sent; only drafts are edited or sent, a scheduled
// broadcast can be cancelled back to a draft, one being sent (queued) stopped (`canceled`).
import type { BroadcastRec, StoreReader, Tx } from '../store';
import { errors } from '../errors';
import { isUuid } from '../ids';
import { addressField, addressList } from '../sending/address';
import { sendingDomain } from '../sending/sender';
import { topicField } from '../topics';
import type { BroadcastInput } from '../schemas/broadcasts';

export type BroadcastContent = Pick<BroadcastRec, 'name' | 'segment_id' | 'from' | 'subject' | 'reply_to' | 'preview_text' | 'html' | 'text' | 'topic_id'>;

/** Check the content fields given (docs/api.md §13.2), their types checked by their schema; only those present are returned. */
export async function contentFields(store: StoreReader, team: string, input: BroadcastInput): Promise<Partial<BroadcastContent>> {
  const out: Partial<BroadcastContent> = {};
  const segmentId = await segmentField(store, team, input);
  if (segmentId !== undefined) out.segment_id = segmentId;
  if (input.from !== undefined) {
    addressField('from', input.from);
    out.from = input.from;
  }
  if (input.subject !== undefined) out.subject = input.subject;
  if (input.reply_to !== undefined) {
    // Stored as given, always as an array; null or [] clears it.
    const given = input.reply_to === null ? [] : [input.reply_to].flat();
    addressList('reply_to', given);
    out.reply_to = given.length ? given : null;
  }
  for (const k of ['name', 'preview_text', 'html', 'text'] as const) if (input[k] !== undefined) out[k] = input[k];
  // Scoped to a topic: only the segment's contacts subscribed to it receive the broadcast.
  if (input.topic_id !== undefined) out.topic_id = input.topic_id === null ? null : (await topicField(store, team, input.topic_id, 'topic_id')).id;
  return out;
}

/** `segment_id`, or its deprecated alias `audience_id`: a segment of the team (lowercase id). */
async function segmentField(store: StoreReader, team: string, input: BroadcastInput): Promise<string | undefined> {
  const { segment_id: seg, audience_id: aud } = input;
  if (seg !== undefined && aud !== undefined && seg.toLowerCase() !== aud.toLowerCase())
    throw errors.validation('The `segment_id` and `audience_id` fields must name the same segment.');
  const field = seg !== undefined ? 'segment_id' : 'audience_id';
  const id = seg ?? aud;
  if (id === undefined) return undefined;
  if (!(await segmentExists(store, team, id))) throw errors.validation(`The \`${field}\` field must name a segment of this team.`);
  return id.toLowerCase();
}

async function segmentExists(store: StoreReader, team: string, id: string): Promise<boolean> {
  return isUuid(id) && (await store.segments.get(team, id.toLowerCase())) !== undefined;
}

/**
 * Throw unless `b` may be sent now (docs/api.md §13.3): a draft with `html` or `text`, its
 * segment still there, `from` on a verified domain of the team (403). Writes nothing, so it may
 * run at the top of a unit of work.
 */
export async function checkSendable(store: StoreReader, b: BroadcastRec): Promise<void> {
  if (b.status !== 'draft') throw errors.validation('Only draft broadcasts can be sent.');
  if (!b.html && !b.text) throw errors.validation('Missing `html` or `text` field.');
  if (!(await segmentExists(store, b.team_id, b.segment_id))) throw errors.validation('The `segment_id` field must name a segment of this team.');
  if (b.topic_id) await topicField(store, b.team_id, b.topic_id, 'topic_id');
  await sendingDomain(store, b.team_id, addressField('from', b.from));
}

/**
 * A started broadcast's key in the broadcast due index: its scheduled time, or 0 (due now) when it
 * was sent at once. The entry stays until the broadcast is `sent` (or cancelled, deleted, refused),
 * so a send interrupted by a crash is found and resumed after the restart.
 */
export const dueKey = (b: Pick<BroadcastRec, 'scheduled_at'>): number => (b.scheduled_at ? Date.parse(b.scheduled_at) : 0);

/**
 * In a unit of work, after `checkSendable`: start sending a draft — `scheduled` when a future
 * time is given, else `queued` — and put it in the due index (persist before acting). The caller
 * then starts a queued one (`BroadcastSender.start`); the scheduler starts due scheduled ones.
 */
export function startBroadcast(tx: Tx, b: BroadcastRec, scheduledAt: string | null): BroadcastRec {
  const next: BroadcastRec = { ...b, status: scheduledAt ? 'scheduled' : 'queued', scheduled_at: scheduledAt };
  tx.broadcasts.put(next);
  tx.broadcastSchedule.add(dueKey(next), next.team_id, next.id);
  return next;
}

/** A scheduled or queued broadcast leaves the due index (cancel, delete, refusal). */
export function unschedule(tx: Tx, b: BroadcastRec): void {
  if (b.status === 'scheduled' || b.status === 'queued') tx.broadcastSchedule.remove(dueKey(b), b.team_id, b.id);
}

/** Throw unless the broadcast may be edited (PATCH). */
export function checkEditable(b: BroadcastRec): void {
  if (b.status !== 'draft') throw errors.validation('Only draft broadcasts can be updated.');
}

/**
 * In a unit of work: cancel (docs/api.md §13.3). A scheduled broadcast goes back to draft; one
 * being sent (`queued`) stops: `canceled`, out of the due index, its progress forgotten — a batch
 * of its emails not yet committed finds it so and is dropped (send.ts). Its emails already queued
 * for delivery are the caller's to cancel (the queue's controls). Anything else → 422.
 */
export async function cancelBroadcast(tx: Tx, b: BroadcastRec): Promise<BroadcastRec> {
  if (b.status !== 'scheduled' && b.status !== 'queued') throw errors.validation('Only scheduled broadcasts or broadcasts being sent can be canceled.');
  unschedule(tx, b);
  if (b.status === 'scheduled') {
    const next: BroadcastRec = { ...b, status: 'draft', scheduled_at: null };
    tx.broadcasts.put(next);
    return next;
  }
  const next: BroadcastRec = { ...b, status: 'canceled' };
  tx.broadcasts.put(next);
  await tx.broadcastProgress.clear(b.team_id, b.id);
  return next;
}

/** Throw unless the broadcast may be deleted (deleting a scheduled one cancels it). */
export function checkDeletable(b: BroadcastRec): void {
  if (b.status !== 'draft' && b.status !== 'scheduled') throw errors.validation('Only draft or scheduled broadcasts can be deleted.');
}
