// Mail sent from an inbox (docs/api.md §25.5, §25.6): replies, forwards and drafts, each an email of
// the one sending core (sending/submit.ts `prepare` and `commit`: validation, the sending domain,
// attachments, suppressions, limits, the queue) whose commit also adds it to its thread — the email,
// its message in the thread and their events in one unit of work. In-Reply-To and References
// (RFC 5322 §3.6.4) name the message answered and its ancestors; Reply-To is the inbox's address;
// the caller may not set those three.
import type { ApiKeyRec, EmailRec, InboxMessageRec, InboxRec, InboxThreadRec, StoreReader, Tx } from '../store';
import { errors } from '../errors';
import { formatAddress } from '../mail/address';
import { commit, prepare, type Prepared, type SendingDeps } from '../sending/submit';
import type { Remember } from '../sending/idempotency';
import type { EmailInput } from '../sending/types';
import { findInbox } from './index';
import { addToThread, findThread, type ThreadDeps } from './threads';
import { bareAddress, forwardSubject, replyReferences, replySubject } from './threading';
import type { InboxSource } from './events';

/** Fields Posthorn sets on mail from an inbox: a caller's header of these names, in any case, is a 422. */
const OWN_HEADERS = ['in-reply-to', 'references', 'reply-to'];

/** What sending from an inbox needs: the sending core's, and the thread's listeners. */
export type InboxSendDeps = SendingDeps & Pick<ThreadDeps, 'hooks' | 'search'>;

export interface SendContext {
  team: string;
  key: ApiKeyRec | null;
  source: InboxSource;
}

/** The caller's headers, refused when they name a field Posthorn sets (docs/api.md §25.5). */
export function customHeaders(h: Record<string, unknown> | null | undefined): Record<string, unknown> {
  if (!h) return {};
  for (const name of Object.keys(h))
    if (OWN_HEADERS.includes(name.toLowerCase()))
      throw errors.invalidField('headers', `the \`${name}\` header is set by Posthorn for mail from an inbox and cannot be set here.`);
  return h;
}

/** `From:` of the inbox's mail: its from name, if any, and its address. */
export const inboxFrom = (inbox: InboxRec) => formatAddress({ name: inbox.from_name, address: inbox.email_address, domain: '' });

const list = (v: string | string[] | null | undefined): string[] => (v === undefined || v === null ? [] : Array.isArray(v) ? v : [v]);

/** An outbound message of the thread, made from the email the sending core prepared. */
function outboundMessage(inbox: InboxRec, p: Prepared, references: string[]): Omit<InboxMessageRec, 'thread_id'> {
  const e = p.email;
  return {
    id: e.id,
    team_id: e.team_id,
    created_at: e.created_at,
    inbox_id: inbox.id,
    direction: 'outbound',
    source_id: e.id,
    from: e.from,
    to: e.to,
    cc: e.cc,
    bcc: e.bcc,
    reply_to: e.reply_to,
    subject: e.subject,
    message_id: e.message_id,
    references,
    html: p.content.html,
    text: p.content.text,
    attachments: e.attachments.map((a) => ({ id: a.id, filename: a.filename, content_type: a.content_type, size: a.size })),
    read: true,
    received_at: e.created_at,
  };
}

/**
 * Send one email from `inbox`, as a message of `threadId` (or of a new thread in `sent`): prepared by
 * the sending core, committed with its message in the thread and `also` (a draft marked sent).
 * `parent`: the message answered (In-Reply-To, References). Resolves to the email and the message.
 */
export async function sendFromInbox(
  deps: InboxSendDeps,
  ctx: SendContext,
  inbox: InboxRec,
  threadId: string | null,
  input: EmailInput,
  parent: InboxMessageRec | null,
  also?: (tx: Tx, inbox: InboxRec, thread: InboxThreadRec, message: InboxMessageRec) => Promise<void>,
  /** Under an Idempotency-Key: the answer kept in the same unit of work (sending/idempotency.ts). */
  remember?: Remember,
): Promise<{ email: EmailRec; message: InboxMessageRec }> {
  const references = parent ? replyReferences(parent) : [];
  const headers: Record<string, unknown> = { ...(input.headers as Record<string, unknown> | undefined) };
  if (parent?.message_id) {
    headers['In-Reply-To'] = parent.message_id;
    headers.References = references.join(' ');
  }
  const p = await prepare(deps, { team: ctx.team, key: ctx.key }, { ...input, from: inboxFrom(inbox), reply_to: [inbox.email_address], headers });
  const draft = outboundMessage(inbox, p, references);
  let out: InboxMessageRec | null = null;
  const [email] = await commit(deps, [p], {
    also: async (tx) => {
      // Read again in the unit of work: the inbox or the thread may have gone meanwhile.
      const cur = await findInbox(tx, ctx.team, inbox.id);
      const thread = threadId ? await findThread(tx, cur, threadId) : undefined;
      const added = await addToThread(deps, tx, cur, thread, draft, { folder: 'sent', source: ctx.source });
      out = added.message;
      await also?.(tx, cur, added.thread, added.message);
      remember?.(tx, { status: 200, body: { id: p.email.id } });
    },
  });
  return { email: email!, message: out! };
}

/** The message of a thread a reply or forward names; 404 otherwise. */
export async function findMessage(store: Pick<StoreReader, 'inboxMessages'>, inbox: InboxRec, threadId: string, emailId: string): Promise<InboxMessageRec> {
  const m = await store.inboxMessages.get(inbox.team_id, emailId);
  if (!m || m.inbox_id !== inbox.id || m.thread_id !== threadId) throw errors.notFound('Email');
  return m;
}

// ---- Quoting ------------------------------------------------------------------------------------

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** RFC 5322 §3.3 date of a quoted message's header line, in UTC. */
const quotedDate = (iso: string) => new Date(iso).toUTCString();

/** The original's text under the reply, each line quoted with `> ` (RFC 3676 §4.5). */
function quoteText(m: InboxMessageRec): string {
  const body = m.text ?? '';
  return `On ${quotedDate(m.received_at)}, ${m.from} wrote:\n${body
    .split(/\r?\n/)
    .map((l) => (l.startsWith('>') ? `>${l}` : `> ${l}`))
    .join('\n')}`;
}

function quoteHtml(m: InboxMessageRec): string {
  const inner = m.html ?? (m.text ? `<pre>${escapeHtml(m.text)}</pre>` : '');
  return `<div>On ${escapeHtml(quotedDate(m.received_at))}, ${escapeHtml(m.from)} wrote:</div><blockquote style="margin:0 0 0 .8ex;border-left:1px solid #ccc;padding-left:1ex">${inner}</blockquote>`;
}

/** A reply's bodies: the caller's, with the original quoted below each part given. */
export function replyBodies(m: InboxMessageRec, html: string | undefined, text: string | undefined): { html?: string; text?: string } {
  const out: { html?: string; text?: string } = {};
  if (html !== undefined) out.html = `${html}<br><br>${quoteHtml(m)}`;
  if (text !== undefined) out.text = `${text}\n\n${quoteText(m)}`;
  return out;
}

function forwardedHeader(m: InboxMessageRec): string[] {
  return [
    '---------- Forwarded message ---------',
    `From: ${m.from}`,
    `Date: ${quotedDate(m.received_at)}`,
    `Subject: ${m.subject ?? ''}`,
    `To: ${m.to.join(', ')}`,
    ...(m.cc.length ? [`Cc: ${m.cc.join(', ')}`] : []),
  ];
}

/** A forward's bodies: the caller's note (if any), then the forwarded message with its header lines. */
export function forwardBodies(m: InboxMessageRec, html: string | undefined, text: string | undefined): { html?: string; text: string } {
  const head = forwardedHeader(m);
  const textOut = `${text ? `${text}\n\n` : ''}${head.join('\n')}\n\n${m.text ?? ''}`;
  const original = m.html ?? (m.text ? `<pre>${escapeHtml(m.text)}</pre>` : '');
  const htmlOut = html !== undefined || m.html ? `${html ?? ''}<br><br><div>${head.map(escapeHtml).join('<br>')}</div><br>${original}` : undefined;
  return htmlOut === undefined ? { text: textOut } : { html: htmlOut, text: textOut };
}

/**
 * A reply's recipients: the answered message's Reply-To or From (an inbound message), or its To (one
 * the inbox sent); `replyAll` adds its other To and Cc addresses, never the inbox itself.
 */
export function replyRecipients(m: InboxMessageRec, inbox: InboxRec, replyAll: boolean): { to: string[]; cc: string[] } {
  const me = inbox.email_address;
  const to = m.direction === 'inbound' ? (m.reply_to.length ? m.reply_to : [m.from]) : m.to;
  const toSet = new Set(to.map(bareAddress));
  const cc = replyAll
    ? [...m.to, ...m.cc].filter((a) => {
        const b = bareAddress(a);
        if (b === me || toSet.has(b)) return false;
        toSet.add(b);
        return true;
      })
    : [];
  return { to: to.filter((a) => bareAddress(a) !== me || m.direction === 'outbound'), cc };
}

export { list as addressList, replySubject, forwardSubject };

/**
 * The original's files as attachments of a forward (docs/api.md §25.5), read from the received or
 * sent email it is; 422 when they are no longer kept (retention.days).
 */
export async function originalFiles(store: StoreReader, m: InboxMessageRec): Promise<EmailInput[]> {
  if (!m.attachments.length) return [];
  const content = m.direction === 'inbound' ? await store.receivedContent.get(m.team_id, m.source_id) : await store.emailContent.get(m.team_id, m.source_id);
  const files = content?.files ?? {};
  return m.attachments.map((a) => {
    const bytes = files[a.id];
    if (!bytes)
      throw errors.validation('The attachments of the forwarded email are no longer kept (retention.days): forward it without them by sending a new email.');
    return { filename: a.filename, content: Buffer.from(bytes).toString('base64'), content_type: a.content_type };
  });
}
