// Drafts (docs/api.md §25.6): mail an inbox has not sent yet — standalone, or a reply in a thread
// (`thread_id` and `reply_to_email_id`). Saved as often as a composer likes; sent through send.ts
// (the one sending core), after which the draft is kept with its `email_id` and leaves the lists.
// `createDraft` is the one way a draft is made: the API's route and the Inbox Agent call it.
import type { InboxDraftFile, InboxDraftRec, InboxRec, InboxThreadRec, Store, StoreReader, Tx } from '../store';
import type { Events } from '../events';
import { errors } from '../errors';
import { isUuid, newId, nowIso } from '../ids';
import { parseAddress } from '../mail/address';
import { resolveAttachments } from '../sending/attachments';
import type { Remember } from '../sending/idempotency';
import type { CreateDraftRequest, DraftAttachmentInput, UpdateDraftRequest } from '../schemas/inboxes';
import { draftEvent, draftSent, type InboxSource } from './events';
import { findInbox } from './index';
import { findThread } from './threads';
import { findMessage, replyRecipients, replySubject, sendFromInbox, type InboxSendDeps, type SendContext } from './send';

/** A draft's bodies (html and text) may hold at most 1 MB of characters together. */
export const MAX_DRAFT_BODY = 1024 * 1024;
/** A draft's files may total at most 25 MB (the SDK's documented limit). */
export const MAX_DRAFT_FILES = 25 * 1024 * 1024;

const addresses = (field: string, v: string | string[] | null | undefined): string[] => {
  const out: string[] = [];
  for (const a of v === undefined || v === null ? [] : Array.isArray(v) ? v : [v]) {
    if (!parseAddress(a)) throw errors.invalidField(field, `\`${a}\` is not a valid email address.`);
    out.push(a.trim());
  }
  return out;
};

function bodies(html: string | null, text: string | null): void {
  if ((html?.length ?? 0) + (text?.length ?? 0) > MAX_DRAFT_BODY)
    throw errors.validation(`A draft's \`html\` and \`text\` may hold at most ${MAX_DRAFT_BODY} characters together.`);
}

/** A draft's files: `content` (base64) or a `path` fetched now; none empty, at most MAX_DRAFT_FILES. */
async function files(list: DraftAttachmentInput[], allowPrivate: boolean): Promise<InboxDraftFile[]> {
  for (const [i, a] of list.entries()) {
    if (!a.content && !a.path) throw errors.invalidField(`attachments[${i}]`, 'give `content` or `path`.');
    if (a.content && !/^[A-Za-z0-9+/\s]*={0,2}\s*$/.test(a.content)) throw errors.invalidField(`attachments[${i}].content`, 'must be base64.');
  }
  const resolved = await resolveAttachments(
    list.map((a) => ({
      filename: a.filename,
      content: a.content ?? null,
      path: a.content ? null : (a.path ?? null),
      content_type: a.content_type ?? null,
      content_id: null,
    })),
    { allowPrivate },
  );
  let total = 0;
  return resolved.map((r, i) => {
    if (!r.content.byteLength) throw errors.invalidField(`attachments[${i}]`, 'the file is empty.');
    total += r.content.byteLength;
    if (total > MAX_DRAFT_FILES) throw errors.validation(`A draft's files may total at most ${MAX_DRAFT_FILES / 1024 / 1024} MB.`);
    return {
      id: newId(),
      filename: r.filename ?? list[i]!.filename,
      content_type: r.content_type,
      content: Buffer.from(r.content).toString('base64'),
      size: r.content.byteLength,
    };
  });
}

export interface DraftDeps {
  store: Store;
  events: Events;
  /** `security.allow_private_networks`: whether a `path` may point at a private address. */
  allowPrivate: boolean;
}

/** Bump a thread's count of drafts (has_draft) by `by`. */
async function countDraft(tx: Tx, team: string, threadId: string | null, by: number): Promise<void> {
  if (!threadId) return;
  const t = await tx.inboxThreads.get(team, threadId);
  if (t) tx.inboxThreads.put({ ...t, draft_count: Math.max(0, t.draft_count + by) });
}

/**
 * Make a draft in an inbox (POST /inboxes/{inbox}/drafts, and the Inbox Agent): standalone, or a
 * reply to an email of a thread (then `to` defaults to that email's sender and `subject` to
 * "Re: …"). Checks, fetches `path` files, then one unit of work with `inbox.draft.created`.
 */
export async function createDraft(
  deps: DraftDeps,
  team: string,
  inboxIdOrAddress: string,
  body: CreateDraftRequest,
  source: InboxSource,
  /** Under an Idempotency-Key: the answer kept in the draft's unit of work. */
  remember?: Remember,
): Promise<InboxDraftRec> {
  const inbox = await findInbox(deps.store, team, inboxIdOrAddress);
  const { thread_id, reply_to_email_id } = body;
  if (Boolean(thread_id) !== Boolean(reply_to_email_id)) throw errors.validation('Give both `thread_id` and `reply_to_email_id`, or neither.');
  if (thread_id && !isUuid(thread_id)) throw errors.invalidField('thread_id', 'must be a thread id.');
  if (reply_to_email_id && !isUuid(reply_to_email_id)) throw errors.invalidField('reply_to_email_id', 'must be an email id of the thread.');
  const fields = ['to', 'cc', 'bcc', 'subject', 'text', 'html', 'attachments'] as const;
  if (!fields.some((f) => body[f] !== undefined))
    throw errors.validation('Give at least one of `to`, `cc`, `bcc`, `subject`, `text`, `html` and `attachments`.');
  let to = body.to === undefined || body.to === null ? null : addresses('to', body.to);
  let subject = body.subject ?? null;
  const threadId = thread_id?.toLowerCase() ?? null;
  const replyId = reply_to_email_id?.toLowerCase() ?? null;
  if (threadId && replyId) {
    const thread = await findThread(deps.store, inbox, threadId);
    const parent = await findMessage(deps.store, inbox, thread.id, replyId);
    to ??= replyRecipients(parent, inbox, false).to;
    subject ??= replySubject(parent.subject ?? thread.subject);
  }
  const html = body.html ?? null;
  const text = body.text ?? null;
  bodies(html, text);
  const at = nowIso();
  const draft: InboxDraftRec = {
    id: newId(),
    team_id: team,
    created_at: at,
    updated_at: at,
    inbox_id: inbox.id,
    type: threadId ? 'reply' : 'standalone',
    to,
    cc: addresses('cc', body.cc),
    bcc: addresses('bcc', body.bcc),
    subject,
    html,
    text,
    thread_id: threadId,
    reply_to_email_id: replyId,
    email_id: null,
    attachments: await files(body.attachments ?? [], deps.allowPrivate),
  };
  await deps.store.write(async (tx) => {
    const cur = await findInbox(tx, team, inbox.id);
    if (threadId) await findThread(tx, cur, threadId);
    tx.inboxDrafts.put(draft);
    await countDraft(tx, team, threadId, 1);
    await draftEvent(deps.events, tx, cur, 'inbox.draft.created', draft, source);
    remember?.(tx, { status: 201, body: { object: 'inbox_draft', id: draft.id } });
  });
  return draft;
}

/** A draft of this inbox, not yet sent; 404 otherwise. */
export async function findDraft(store: Pick<StoreReader, 'inboxDrafts'>, inbox: InboxRec, id: string): Promise<InboxDraftRec> {
  const d = await store.inboxDrafts.get(inbox.team_id, id);
  if (!d || d.inbox_id !== inbox.id || d.email_id) throw errors.notFound('Draft');
  return d;
}

/** PATCH a draft: the fields given replace the draft's (`attachments` replaces every file; `null` or `[]` removes them). */
export async function updateDraft(deps: DraftDeps, inbox: InboxRec, id: string, body: UpdateDraftRequest, source: InboxSource): Promise<void> {
  const fields = ['to', 'cc', 'bcc', 'subject', 'text', 'html', 'attachments'] as const;
  if (!fields.some((f) => body[f] !== undefined))
    throw errors.validation('Give at least one of `to`, `cc`, `bcc`, `subject`, `text`, `html` and `attachments`.');
  const cur = await findDraft(deps.store, inbox, id);
  const next: InboxDraftRec = { ...cur };
  if (body.to !== undefined) next.to = body.to === null ? null : addresses('to', body.to);
  if (body.cc !== undefined) next.cc = addresses('cc', body.cc);
  if (body.bcc !== undefined) next.bcc = addresses('bcc', body.bcc);
  if (body.subject !== undefined) next.subject = body.subject;
  if (body.html !== undefined) next.html = body.html;
  if (body.text !== undefined) next.text = body.text;
  bodies(next.html, next.text);
  if (body.attachments !== undefined) next.attachments = await files(body.attachments ?? [], deps.allowPrivate);
  next.updated_at = nowIso();
  await deps.store.write(async (tx) => {
    const inboxNow = await findInbox(tx, inbox.team_id, inbox.id);
    await findDraft(tx, inboxNow, id);
    tx.inboxDrafts.put(next);
    await draftEvent(deps.events, tx, inboxNow, 'inbox.draft.updated', next, source);
  });
}

/** In a unit of work: delete a draft, with `inbox.draft.deleted`. */
export async function deleteDraft(events: Events, tx: Tx, inbox: InboxRec, id: string, source: InboxSource): Promise<void> {
  const d = await findDraft(tx, inbox, id);
  tx.inboxDrafts.remove(inbox.team_id, d.id);
  await countDraft(tx, inbox.team_id, d.thread_id, -1);
  await draftEvent(events, tx, inbox, 'inbox.draft.deleted', d, source);
}

/**
 * Send a draft (docs/api.md §25.6): as a reply in its thread, or as the first message of a new
 * thread in `sent`; the draft is kept with its `email_id`, out of the lists, with
 * `inbox.email.sent` then `inbox.draft.sent`. Resolves to the email's id.
 */
export async function sendDraft(
  deps: InboxSendDeps,
  ctx: SendContext,
  inbox: InboxRec,
  id: string,
  headers: Record<string, unknown>,
  remember?: Remember,
): Promise<string> {
  const draft = await findDraft(deps.store, inbox, id);
  if (!draft.to?.length) throw errors.missingField('to');
  const parent = draft.thread_id && draft.reply_to_email_id ? await findMessage(deps.store, inbox, draft.thread_id, draft.reply_to_email_id) : null;
  const input = {
    to: draft.to,
    cc: draft.cc,
    bcc: draft.bcc,
    subject: draft.subject ?? '',
    ...(draft.html !== null ? { html: draft.html } : {}),
    ...(draft.text !== null ? { text: draft.text } : {}),
    headers,
    attachments: draft.attachments.map((a) => ({ filename: a.filename, content: a.content, content_type: a.content_type })),
  };
  const { email } = await sendFromInbox(
    deps,
    ctx,
    inbox,
    draft.thread_id,
    input,
    parent,
    async (tx, cur, thread: InboxThreadRec, message) => {
      const now = await findDraft(tx, cur, draft.id);
      const sent = { ...now, email_id: message.id, thread_id: thread.id, updated_at: nowIso() };
      tx.inboxDrafts.put(sent);
      await countDraft(tx, cur.team_id, now.thread_id, -1);
      await draftSent(deps.events, tx, cur, sent, thread, message, ctx.source);
    },
    remember,
  );
  return email.id;
}
