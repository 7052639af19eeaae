// The 14 `inbox.*` webhook events (docs/api.md §25.8), with Resend's payloads (the SDK's
// `Inbox*EventData`), made through the one event function (`Events.other`) in the unit of work of the
// change they report. Each is scoped to the inbox's domain, so webhooks limited to other domains
// skip it (docs/api.md §14.1).
import type { Events } from '../events';
import type { InboxDraftRec, InboxMessageRec, InboxRec, InboxThreadRec, Tx } from '../store';
import { draftView, inboxCounts, inboxView, labelsOf, messageView, threadSummary } from './views';
import type { ThreadLabel } from '../schemas/inboxes';

/** Who made the change (the SDK's `InboxEventSource`). */
export type InboxSource = 'api' | 'dashboard' | 'agent' | 'system';

/** Webhooks limited to other domains skip an inbox's events (docs/api.md §14.1). */
const scope = (inbox: InboxRec) => ({ domain_id: inbox.domain_id });

export async function inboxEvent(events: Events, tx: Tx, inbox: InboxRec, type: 'inbox.created' | 'inbox.updated', source: InboxSource) {
  const data = { source, inbox_id: inbox.id, inbox: inboxView(inbox, await inboxCounts(tx, inbox)) };
  if (type === 'inbox.created') await events.other(tx, inbox.team_id, 'inbox.created', inbox.id, data, scope(inbox));
  else await events.other(tx, inbox.team_id, 'inbox.updated', inbox.id, data, scope(inbox));
}

export async function inboxDeleted(events: Events, tx: Tx, inbox: InboxRec, source: InboxSource) {
  await events.other(tx, inbox.team_id, 'inbox.deleted', inbox.id, { source, inbox_id: inbox.id }, scope(inbox));
}

async function threadPart(tx: Tx, inbox: InboxRec, thread: InboxThreadRec) {
  return { thread_id: thread.id, thread: threadSummary(thread, await labelsOf(tx, inbox.team_id, inbox.id)) };
}

/** An email of a thread as webhooks carry it: without its bodies (the SDK's `InboxEventEmail`). */
function emailPart(m: InboxMessageRec) {
  const { html: _h, text: _t, ...email } = messageView(m);
  return { email_id: m.id, email };
}

/** inbox.thread.created, inbox.email.received, inbox.email.sent: a thread and one of its emails. */
export async function threadEmailEvent(
  events: Events,
  tx: Tx,
  inbox: InboxRec,
  type: 'inbox.thread.created' | 'inbox.email.received' | 'inbox.email.sent',
  thread: InboxThreadRec,
  message: InboxMessageRec,
  source: InboxSource,
) {
  const data = { source, inbox_id: inbox.id, ...(await threadPart(tx, inbox, thread)), ...emailPart(message) };
  if (type === 'inbox.thread.created') await events.other(tx, inbox.team_id, 'inbox.thread.created', thread.id, data, scope(inbox));
  else if (type === 'inbox.email.received') await events.other(tx, inbox.team_id, 'inbox.email.received', thread.id, data, scope(inbox));
  else await events.other(tx, inbox.team_id, 'inbox.email.sent', thread.id, data, scope(inbox));
}

export async function folderUpdated(events: Events, tx: Tx, inbox: InboxRec, thread: InboxThreadRec, from: string, source: InboxSource) {
  const data = { source, inbox_id: inbox.id, ...(await threadPart(tx, inbox, thread)), from, to: thread.folder };
  await events.other(tx, inbox.team_id, 'inbox.thread.folder.updated', thread.id, data, scope(inbox));
}

/** inbox.thread.assigned (an assignee now) or inbox.thread.unassigned (none now). */
export async function assignmentChanged(
  events: Events,
  tx: Tx,
  inbox: InboxRec,
  thread: InboxThreadRec,
  previous: string | null,
  by: string | null,
  source: InboxSource,
) {
  const base = { source, inbox_id: inbox.id, ...(await threadPart(tx, inbox, thread)), previous_assignee_email: previous };
  if (thread.assignee)
    await events.other(
      tx,
      inbox.team_id,
      'inbox.thread.assigned',
      thread.id,
      { ...base, assignee_email: thread.assignee, assigned_by_email: by },
      scope(inbox),
    );
  else await events.other(tx, inbox.team_id, 'inbox.thread.unassigned', thread.id, base, scope(inbox));
}

export async function labelsUpdated(
  events: Events,
  tx: Tx,
  inbox: InboxRec,
  thread: InboxThreadRec,
  added: ThreadLabel[],
  removed: ThreadLabel[],
  source: InboxSource,
) {
  if (!added.length && !removed.length) return;
  const data = { source, inbox_id: inbox.id, ...(await threadPart(tx, inbox, thread)), added, removed };
  await events.other(tx, inbox.team_id, 'inbox.thread.labels.updated', thread.id, data, scope(inbox));
}

/** A draft without its bodies (the SDK's `InboxEventDraft`). */
function draftPart(d: InboxDraftRec) {
  const { html: _h, text: _t, object: _o, ...draft } = draftView(d);
  return { draft_id: d.id, draft };
}

export async function draftEvent(
  events: Events,
  tx: Tx,
  inbox: InboxRec,
  type: 'inbox.draft.created' | 'inbox.draft.updated' | 'inbox.draft.deleted',
  draft: InboxDraftRec,
  source: InboxSource,
) {
  const thread = draft.thread_id ? await tx.inboxThreads.get(inbox.team_id, draft.thread_id) : undefined;
  const data = { source, inbox_id: inbox.id, ...(thread ? await threadPart(tx, inbox, thread) : {}), ...draftPart(draft) };
  if (type === 'inbox.draft.created') await events.other(tx, inbox.team_id, 'inbox.draft.created', draft.id, data, scope(inbox));
  else if (type === 'inbox.draft.updated') await events.other(tx, inbox.team_id, 'inbox.draft.updated', draft.id, data, scope(inbox));
  else await events.other(tx, inbox.team_id, 'inbox.draft.deleted', draft.id, data, scope(inbox));
}

export async function draftSent(
  events: Events,
  tx: Tx,
  inbox: InboxRec,
  draft: InboxDraftRec,
  thread: InboxThreadRec,
  message: InboxMessageRec,
  source: InboxSource,
) {
  const data = { source, inbox_id: inbox.id, ...(await threadPart(tx, inbox, thread)), ...emailPart(message), ...draftPart(draft) };
  await events.other(tx, inbox.team_id, 'inbox.draft.sent', draft.id, data, scope(inbox));
}
