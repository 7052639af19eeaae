// Inbound mail into inboxes (docs/api.md §25.4): called by the inbound processor in the unit of work
// that stores a received email (inbound/received.ts), so the email, its place in a thread and their
// events commit together with the spool entry's removal — kill -9 at any moment loses no inbox
// message and adds none twice. Each inbox among the email's envelope recipients of that team gets
// the message in one of its threads (threading.ts); spam lands in `spam`.
import type { InboxRec, ReceivedContent, ReceivedEmailRec, Tx } from '../store';
import { newId } from '../ids';
import { addToThread, threadFor, type ThreadDeps } from './threads';
import { messageIds } from './threading';

/** rspamd's actions that mean spam (README "Deliverability"); `greylist` and `no action` do not. */
const SPAM_ACTIONS = new Set(['add header', 'rewrite subject', 'soft reject', 'reject']);

/** Spam: rspamd scored it as spam when it is configured, or its `From:` domain failed DMARC (RFC 7489). */
export function isSpam(rec: Pick<ReceivedEmailRec, 'spam' | 'authentication'>): boolean {
  const s = rec.spam;
  if (
    s?.status === 'scored' &&
    ((s.action !== null && SPAM_ACTIONS.has(s.action)) || (s.score !== null && s.required_score !== null && s.score >= s.required_score))
  )
    return true;
  return rec.authentication?.dmarc === 'fail';
}

/** The team's inboxes among the envelope recipients of `rec`. */
async function inboxesOf(tx: Tx, rec: ReceivedEmailRec): Promise<InboxRec[]> {
  const out: InboxRec[] = [];
  for (const addr of new Set(rec.received_for.map((a) => a.toLowerCase()))) {
    const inbox = await tx.inboxes.find('address', addr);
    if (inbox && inbox.team_id === rec.team_id) out.push(inbox);
  }
  return out;
}

/** In the received email's unit of work: add it to the threads of the inboxes it was sent to. */
export async function intakeReceived(deps: ThreadDeps, tx: Tx, rec: ReceivedEmailRec, content: ReceivedContent): Promise<void> {
  const inboxes = await inboxesOf(tx, rec);
  if (!inboxes.length) return;
  const spam = isSpam(rec);
  for (const inbox of inboxes) {
    const m = {
      id: newId(),
      team_id: rec.team_id,
      created_at: rec.created_at,
      inbox_id: inbox.id,
      direction: 'inbound' as const,
      source_id: rec.id,
      from: rec.from,
      to: rec.to,
      cc: rec.cc,
      bcc: rec.bcc,
      reply_to: rec.reply_to,
      subject: rec.subject || null,
      message_id: rec.message_id,
      // Its References, or without them its In-Reply-To (RFC 5322 §3.6.4): what a reply's References extends.
      references: messageIds(content.headers.references).length ? messageIds(content.headers.references) : messageIds(content.headers['in-reply-to']),
      html: content.html,
      text: content.text,
      attachments: rec.attachments.map((a) => ({ id: a.id, filename: a.filename, content_type: a.content_type, size: a.size })),
      read: false,
      received_at: rec.created_at,
    };
    // The same message delivered again (a sender's retry after a lost 250, a copy through a list):
    // the inbox keeps the first.
    if (m.message_id && (await tx.inboxMessages.findAll('message', `${inbox.id} ${m.message_id}`, rec.team_id)).some((x) => x.direction === 'inbound'))
      continue;
    const thread = spam ? undefined : await threadFor(tx, inbox, m, content.headers['in-reply-to'] ?? null, content.headers.references ?? null);
    await addToThread(deps, tx, inbox, thread, m, { folder: spam ? 'spam' : 'inbox', source: 'system' });
  }
}
