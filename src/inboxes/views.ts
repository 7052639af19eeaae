// Inboxes' records as the API and the webhooks show them (docs/api.md §25): one view of each, read by
// the routes (src/api/resources/inbox*.ts) and by the `inbox.*` payloads (events.ts).
import type { InboxDraftRec, InboxLabelRec, InboxMessageRec, InboxRec, InboxThreadRec, StoreReader } from '../store';
import type {
  Inbox,
  InboxDraft,
  InboxDraftListItem,
  InboxLabel,
  InboxMessage,
  InboxSummary,
  InboxThread,
  InboxThreadSummary,
  ThreadLabel,
} from '../schemas/inboxes';
import { snippetOf } from './threading';

/** What an inbox's list item and record count: unread threads in `inbox`, drafts, the latest mail received. */
export interface InboxCounts {
  unread: number;
  drafts: number;
  last_received: string | null;
}

/** Counted from its threads and drafts when asked (an inbox's record is not written per message). */
export async function inboxCounts(store: StoreReader, inbox: InboxRec): Promise<InboxCounts> {
  const threads = await store.inboxThreads.findAll('inbox', inbox.id, inbox.team_id);
  const drafts = await store.inboxDrafts.findAll('inbox', inbox.id, inbox.team_id);
  let unread = 0;
  let last: string | null = null;
  for (const t of threads) {
    if (t.folder === 'inbox' && !t.read) unread++;
    if (t.last_received_at && (!last || t.last_received_at > last)) last = t.last_received_at;
  }
  return { unread, drafts: drafts.length, last_received: last };
}

export const inboxSummary = (r: InboxRec, c: InboxCounts): InboxSummary => ({
  id: r.id,
  name: r.name,
  email_address: r.email_address,
  from_name: r.from_name,
  unread: c.unread,
  last_received: c.last_received,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

export const inboxView = (r: InboxRec, c: InboxCounts): Inbox => ({
  object: 'inbox',
  id: r.id,
  name: r.name,
  email_address: r.email_address,
  domain_id: r.domain_id,
  receiving_address: null,
  from_name: r.from_name,
  unread: c.unread,
  drafts: c.drafts,
  last_received: c.last_received,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

export const labelView = (l: InboxLabelRec): InboxLabel => ({ id: l.id, name: l.name, color: l.color, created_at: l.created_at });

/** A thread's labels, in its order; labels deleted meanwhile are left out. */
export function threadLabels(t: InboxThreadRec, labels: ReadonlyMap<string, InboxLabelRec>): ThreadLabel[] {
  return t.labels.flatMap((id) => {
    const l = labels.get(id);
    return l ? [{ id: l.id, name: l.name, color: l.color }] : [];
  });
}

/** An inbox's labels by id (a thread's view names them). */
export async function labelsOf(store: StoreReader, team: string, inboxId: string): Promise<Map<string, InboxLabelRec>> {
  return new Map((await store.inboxLabels.findAll('inbox', inboxId, team)).map((l) => [l.id, l]));
}

export const threadView = (t: InboxThreadRec, labels: ReadonlyMap<string, InboxLabelRec>): InboxThread => ({
  id: t.id,
  subject: t.subject,
  from: t.from,
  to: t.to,
  cc: t.cc,
  bcc: t.bcc,
  labels: threadLabels(t, labels),
  email_count: t.email_count,
  has_attachment: t.has_attachment,
  has_draft: t.draft_count > 0,
  read: t.read,
  received_at: t.last_at,
  folder: t.folder,
  assignee: t.assignee,
  snippet: t.snippet,
});

export const threadSummary = (t: InboxThreadRec, labels: ReadonlyMap<string, InboxLabelRec>): InboxThreadSummary => ({
  object: 'inbox_thread',
  id: t.id,
  subject: t.subject,
  folder: t.folder,
  labels: threadLabels(t, labels),
  read: t.read,
  assignee: t.assignee,
});

export const messageView = (m: InboxMessageRec): InboxMessage => ({
  id: m.id,
  direction: m.direction,
  from: m.from,
  to: m.to,
  cc: m.cc,
  bcc: m.bcc,
  reply_to: m.reply_to,
  subject: m.subject,
  message_id: m.message_id,
  html: m.html,
  text: m.text,
  attachments: m.attachments.map((a) => ({ id: a.id, filename: a.filename, size: a.size })),
  read: m.read,
  received_at: m.received_at,
});

const draftAttachments = (d: InboxDraftRec) => d.attachments.map((a) => ({ id: a.id, filename: a.filename, content_type: a.content_type, size: a.size }));

export const draftView = (d: InboxDraftRec): InboxDraft => ({
  object: 'inbox_draft',
  id: d.id,
  type: d.type,
  to: d.to,
  cc: d.cc,
  bcc: d.bcc,
  subject: d.subject,
  html: d.html,
  text: d.text,
  thread_id: d.thread_id,
  reply_to_email_id: d.reply_to_email_id,
  email_id: d.email_id,
  created_at: d.created_at,
  updated_at: d.updated_at,
  attachments: draftAttachments(d),
});

export const draftListItem = (d: InboxDraftRec): InboxDraftListItem => ({
  id: d.id,
  type: d.type,
  to: d.to,
  cc: d.cc,
  bcc: d.bcc,
  subject: d.subject,
  snippet: snippetOf(d.text, d.html),
  thread_id: d.thread_id,
  reply_to_email_id: d.reply_to_email_id,
  updated_at: d.updated_at,
  attachments: draftAttachments(d),
});
