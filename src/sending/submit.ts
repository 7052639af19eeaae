// The sending core (SPEC.md §2): every way in — POST /emails, batch, SMTP, broadcasts — calls
// `prepare` then `commit`. Prepare does the checks and the work that needs no lock (validation,
// sending domain, attachment fetches, MIME); commit persists the email, its content and its queue
// entries (or schedule) in one flushed transaction, checking suppressions inside it.
import type { Services } from '../services';
import type { ApiKeyRec, EmailRec, EmailContent } from '../store';
import { errors } from '../api/errors';
import { newId } from '../ids';
import { validateEmail } from './validate';
import { resolveAttachments } from './attachments';
import { composeMime } from './mime';
import { sendingDomain } from './sender';
import { formatAddress } from './address';
import { enqueueInTxn } from './enqueue';
import { recipientKey } from '../events';
import type { EmailInput, ValidatedEmail } from './types';

export interface SubmitContext {
  team: string;
  /** The API key used (REST or SMTP); null for internal senders such as broadcasts. */
  key: ApiKeyRec | null;
  broadcastId?: string | null;
}

export interface Prepared {
  email: EmailRec;
  content: EmailContent;
}

/** Validate and build one email; throws the documented ApiError; writes nothing. */
export async function prepare(svc: Services, ctx: SubmitContext, input: EmailInput, opts: { batchItem?: boolean; validated?: ValidatedEmail } = {}): Promise<Prepared> {
  const v = opts.validated ?? validateEmail(input, { batchItem: opts.batchItem });
  const domain = sendingDomain(svc.store, ctx.team, v.from);
  if (ctx.key?.domain_id && ctx.key.domain_id !== domain.id)
    throw errors.validation(`This API key is not authorized to send emails from \`${v.from.domain}\`.`, 403);
  const attachments = await resolveAttachments(v.attachments, { allowPrivate: svc.config.security.allow_private_networks });
  const id = newId();
  const created = new Date();
  const messageId = `<${id}@${domain.name}>`;
  const raw = await composeMime(v, { messageId, date: created, attachments });
  const files: Record<string, Uint8Array> = {};
  const metas = attachments.map((a) => {
    const attId = newId();
    files[attId] = a.content;
    return {
      id: attId,
      filename: a.filename,
      content_type: a.content_type,
      content_disposition: a.content_id ? ('inline' as const) : ('attachment' as const),
      content_id: a.content_id,
      size: a.content.byteLength,
    };
  });
  const recipients: EmailRec['recipients'] = {};
  // Envelope recipients as written (RFC 5321 §2.4: a local part may be case-sensitive; the domain
  // is already lowercase), one per address however it is capitalised.
  for (const a of [...v.to, ...v.cc, ...v.bcc]) if (!recipientKey(recipients, a.address)) recipients[a.address] = 'pending';
  const email: EmailRec = {
    id,
    team_id: ctx.team,
    created_at: created.toISOString(),
    from: v.fromText,
    from_address: v.from.address,
    domain_id: domain.id,
    domain: domain.name,
    to: v.to.map(show),
    cc: v.cc.map(show),
    bcc: v.bcc.map(show),
    reply_to: v.reply_to.map(show),
    subject: v.subject,
    headers: v.headers,
    tags: v.tags,
    scheduled_at: v.scheduled_at,
    last_event: v.scheduled_at ? 'scheduled' : 'queued',
    message_id: messageId,
    broadcast_id: ctx.broadcastId ?? null,
    attachments: metas,
    recipients,
    sent_at: null,
    api_key_id: ctx.key?.id ?? null,
  };
  return { email, content: { html: v.html, text: v.text, raw, files } };
}

const show = formatAddress;

/** Inside a transaction: persist one prepared email and queue or schedule it. */
export function commitInTxn(svc: Services, p: Prepared): EmailRec {
  const { store, events } = svc;
  const email = p.email;
  store.emailContent.put([email.team_id, email.id], p.content);
  if (email.scheduled_at) {
    store.emails.putInTxn(email);
    store.schedule.addInTxn(Date.parse(email.scheduled_at), email.team_id, email.id);
    return events.email(email, 'scheduled');
  }
  // Suppressions are read inside this transaction, so one committed before this send always counts.
  return enqueueInTxn(svc, email);
}

/**
 * Persist prepared emails in one flushed commit; `alsoInTxn` runs inside it (the idempotency
 * record, so a replay can never send twice). `keep`, read inside the transaction before anything is
 * written, drops emails whose reason to exist ended meanwhile (a broadcast contact who
 * unsubscribed). Wakes the delivery engine afterwards.
 */
export async function commit(svc: Services, prepared: Prepared[], alsoInTxn?: () => void, keep?: (p: Prepared) => boolean): Promise<EmailRec[]> {
  const saved = await svc.store.transaction(() => {
    const out = prepared.filter((p) => !keep || keep(p)).map((p) => commitInTxn(svc, p));
    alsoInTxn?.();
    return out;
  });
  svc.delivery?.kick();
  return saved;
}

/** One email, start to finish: what REST, SMTP and broadcasts call for a single message. */
export async function submit(svc: Services, ctx: SubmitContext, input: EmailInput): Promise<EmailRec> {
  const [email] = await commit(svc, [await prepare(svc, ctx, input)]);
  return email;
}

