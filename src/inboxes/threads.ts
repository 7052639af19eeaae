// Threads (docs/api.md §25.4): a message joining one (inbound mail, intake.ts; mail sent from the
// inbox, send.ts) — the one place a thread's counts, participants and folder follow its messages —
// and the changes a teammate makes: folder, read state, assignee, labels, deletion. Each write is in
// the caller's unit of work with its `inbox.*` event (events.ts).
import type { InboxFolder, InboxMessageRec, InboxRec, InboxThreadRec, StoreReader, Tx } from '../store';
import type { Events } from '../events';
import { errors } from '../errors';
import { isUuid, newId } from '../ids';
import { parseEmail } from '../mail/address';
import type { ThreadLabel, UpdateThreadRequest } from '../schemas/inboxes';
import { assignmentChanged, folderUpdated, labelsUpdated, threadEmailEvent, type InboxSource } from './events';
import { labelsOf, threadLabels } from './views';
import { bySubject, participantsOf, snippetOf, subjectKey, threadKeys } from './threading';
import type { ThreadMessageHooks } from './hooks';
import type { ThreadSearch } from './search-index';

/** What adding a message to a thread tells besides the store: the agent's hook and the search index. */
export interface ThreadDeps {
  events: Events;
  hooks?: ThreadMessageHooks | null;
  search?: ThreadSearch | null;
}

/** A message before it has a thread: everything of InboxMessageRec but its thread. */
export type NewMessage = Omit<InboxMessageRec, 'thread_id'>;

/**
 * The thread `m` joins (threading.ts): by In-Reply-To / References, else by subject and
 * participants; undefined when it starts one.
 */
export async function threadFor(
  tx: Tx,
  inbox: InboxRec,
  m: NewMessage,
  inReplyTo: string | null,
  references: string | null,
): Promise<InboxThreadRec | undefined> {
  const team = inbox.team_id;
  for (const id of threadKeys(inReplyTo, references)) {
    for (const known of await tx.inboxMessages.findAll('message', `${inbox.id} ${id}`, team)) {
      const t = await tx.inboxThreads.get(team, known.thread_id);
      if (t) return t;
    }
  }
  const key = subjectKey(m.subject);
  if (!key) return undefined;
  const candidates = await tx.inboxThreads.findAll('subject', `${inbox.id} ${key}`, team);
  const id = bySubject(key, participantsOf(m), inbox.email_address, m.received_at, candidates);
  return id ? candidates.find((c) => c.id === id) : undefined;
}

/**
 * In a unit of work: add a message to `thread` (or to a new thread when undefined), keep the
 * thread's counts, and report it — `inbox.thread.created` for a new thread, then
 * `inbox.email.received` or `inbox.email.sent`. `folder`: a new thread's folder (`inbox`, `spam`
 * for spam, `sent` for mail sent first); an inbound message brings an archived thread back to
 * `inbox`. After the commit the hooks and the search index hear of it.
 */
export async function addToThread(
  deps: ThreadDeps,
  tx: Tx,
  inbox: InboxRec,
  thread: InboxThreadRec | undefined,
  m: NewMessage,
  opts: { folder: InboxFolder; source: InboxSource },
): Promise<{ thread: InboxThreadRec; message: InboxMessageRec }> {
  const team = inbox.team_id;
  const inbound = m.direction === 'inbound';
  const base: InboxThreadRec = thread ?? {
    id: newId(),
    team_id: team,
    created_at: m.received_at,
    inbox_id: inbox.id,
    subject: m.subject,
    subject_key: subjectKey(m.subject),
    folder: opts.folder,
    labels: [],
    read: true,
    assignee: null,
    participants: [],
    from: null,
    to: [],
    cc: [],
    bcc: [],
    email_count: 0,
    unread_count: 0,
    has_attachment: false,
    draft_count: 0,
    last_at: m.received_at,
    last_received_at: null,
    has_sent: false,
    snippet: null,
  };
  const message: InboxMessageRec = { ...m, thread_id: base.id };
  const participants = new Set(base.participants);
  for (const p of participantsOf(m)) participants.add(p);
  const unread = base.unread_count + (inbound && !m.read ? 1 : 0);
  const next: InboxThreadRec = {
    ...base,
    participants: [...participants],
    from: m.from,
    to: m.to,
    cc: m.cc,
    bcc: m.bcc,
    email_count: base.email_count + 1,
    unread_count: unread,
    read: unread === 0,
    has_attachment: base.has_attachment || m.attachments.length > 0,
    // ISO 8601 UTC times sort as strings.
    last_at: [m.received_at, base.last_at].sort()[1]!,
    last_received_at: inbound ? m.received_at : base.last_received_at,
    has_sent: base.has_sent || !inbound,
    snippet: snippetOf(m.text, m.html) ?? base.snippet,
  };
  // New mail in an archived thread (or a reply to a thread only sent so far) brings it to the inbox.
  if (thread && inbound && (thread.folder === 'archive' || thread.folder === 'sent')) next.folder = 'inbox';
  tx.inboxMessages.put(message);
  tx.inboxThreads.put(next);
  // Resend: `inbox.thread.created` is always the mail pipeline's (`system`), whoever sent the email.
  if (!thread) await threadEmailEvent(deps.events, tx, inbox, 'inbox.thread.created', next, message, 'system');
  else if (thread.folder !== next.folder) await folderUpdated(deps.events, tx, inbox, next, thread.folder, opts.source);
  await threadEmailEvent(deps.events, tx, inbox, inbound ? 'inbox.email.received' : 'inbox.email.sent', next, message, opts.source);
  tx.afterCommit(() => {
    deps.search?.index(team, inbox.id, next, message);
    deps.hooks?.emit({ team, inbox_id: inbox.id, thread_id: next.id, message_id: message.id, direction: m.direction, new_thread: !thread });
  });
  return { thread: next, message };
}

/** A thread of this inbox; 404 otherwise. */
export async function findThread(tx: Pick<StoreReader, 'inboxThreads'>, inbox: InboxRec, threadId: string): Promise<InboxThreadRec> {
  const t = await tx.inboxThreads.get(inbox.team_id, threadId);
  if (!t || t.inbox_id !== inbox.id) throw errors.notFound('Thread');
  return t;
}

/**
 * In a unit of work: a PATCH of a thread — read state (every message of it), folder, and
 * (Posthorn) assignee — each change with its event; `by`: the teammate who made it, when known.
 */
export async function updateThread(
  events: Events,
  tx: Tx,
  inbox: InboxRec,
  cur: InboxThreadRec,
  body: UpdateThreadRequest,
  source: InboxSource,
  by: string | null,
): Promise<InboxThreadRec> {
  if (body.read === undefined && body.folder === undefined && body.assignee === undefined) throw errors.validation('Give at least one of `read` and `folder`.');
  let assignee = cur.assignee;
  if (body.assignee !== undefined) {
    if (body.assignee === null || body.assignee.trim() === '') assignee = null;
    else {
      const a = parseEmail(body.assignee.trim());
      if (!a) throw errors.invalidField('assignee', 'must be an email address or null.');
      assignee = a.address.toLowerCase();
    }
  }
  const next: InboxThreadRec = { ...cur, assignee };
  if (body.folder !== undefined) next.folder = body.folder;
  if (body.read !== undefined && body.read !== cur.read) {
    const team = inbox.team_id;
    let unread = 0;
    for (const m of await tx.inboxMessages.findAll('thread', cur.id, team)) {
      if (m.direction !== 'inbound') continue;
      if (m.read !== body.read) tx.inboxMessages.put({ ...m, read: body.read });
      if (!body.read) unread++;
    }
    next.read = body.read;
    next.unread_count = unread;
  }
  tx.inboxThreads.put(next);
  if (next.folder !== cur.folder) await folderUpdated(events, tx, inbox, next, cur.folder, source);
  if (next.assignee !== cur.assignee) await assignmentChanged(events, tx, inbox, next, cur.assignee, by, source);
  return next;
}

/** The label ids of a body, each a label of this inbox (else 404 naming it). */
async function ownLabels(tx: Tx, inbox: InboxRec, ids: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const raw of ids) {
    const id = raw.toLowerCase();
    if (!isUuid(id)) throw errors.invalidField('labels', `\`${raw}\` is not a label id.`);
    const l = await tx.inboxLabels.get(inbox.team_id, id);
    if (!l || l.inbox_id !== inbox.id) throw errors.notFound('Label');
    if (!out.includes(id)) out.push(id);
  }
  return out;
}

/**
 * In a unit of work: a thread's labels become `labels` (`mode`: `add` keeps the others, `set`
 * replaces them, `remove` takes those away), with `inbox.thread.labels.updated` when they changed.
 * Answers the thread's labels.
 */
export async function changeLabels(
  events: Events,
  tx: Tx,
  inbox: InboxRec,
  cur: InboxThreadRec,
  ids: string[],
  mode: 'add' | 'set' | 'remove',
  source: InboxSource,
): Promise<ThreadLabel[]> {
  const given = await ownLabels(tx, inbox, ids);
  const after =
    mode === 'set' ? given : mode === 'add' ? [...cur.labels, ...given.filter((g) => !cur.labels.includes(g))] : cur.labels.filter((l) => !given.includes(l));
  const labels = await labelsOf(tx, inbox.team_id, inbox.id);
  const next = { ...cur, labels: after.filter((id) => labels.has(id)) };
  const view = (ids: string[]) => threadLabels({ ...cur, labels: ids }, labels);
  const added = view(next.labels.filter((l) => !cur.labels.includes(l)));
  const removed = view(cur.labels.filter((l) => !next.labels.includes(l)));
  if (added.length || removed.length) {
    tx.inboxThreads.put(next);
    await labelsUpdated(events, tx, inbox, next, added, removed, source);
  }
  return threadLabels(next, labels);
}

/** In a unit of work: a thread, its messages and its drafts (no webhook kind reports a deleted thread). */
export async function deleteThread(tx: Tx, inbox: InboxRec, t: InboxThreadRec): Promise<void> {
  const team = inbox.team_id;
  for (const m of await tx.inboxMessages.findAll('thread', t.id, team)) tx.inboxMessages.remove(team, m.id);
  for (const d of await tx.inboxDrafts.findAll('thread', t.id, team)) tx.inboxDrafts.remove(team, d.id);
  tx.inboxThreads.remove(team, t.id);
}
