// The sending core (docs/ARCHITECTURE.md §1: one path per job): every way in — POST /emails, batch,
// SMTP, broadcasts — calls `prepare` then `commit`. Prepare does the checks and the work that needs
// no lock (validation, sending domain, attachment fetches); commit persists the email, its parts
// and its queue entries (or schedule) in one flushed unit of work, checking suppressions inside
// it, and counting the team's sending limits (limits/quota.ts) in the same unit of work. The MIME
// message is composed later, when it is delivered (message.ts). The store announces the new queue
// entries to the delivery engine after the commit. A batch is accepted as received instead: its
// commit writes one record of the incoming queue, with the quota and the idempotency record, and
// the back office writes its emails through `persist` later (incoming.ts).
import type { Config } from '../config';
import type { ApiKeyRec, EmailRec, EmailContent, Store, Tx } from '../store';
import type { Events } from '../events';
import { errors } from '../errors';
import { newId, nowIso } from '../ids';
import { formatAddress } from '../mail/address';
import { validateEmail } from './validate';
import { resolveAttachments, type AttachmentShare } from './attachments';
import { sendingDomain } from './sender';
import { enqueue } from './enqueue';
import { trackingOf } from './tracking';
import { applyTemplate } from './template';
import { topicField } from '../topics';
import { fingerprint as fingerprintOf, type Idempotency, type IdempotencyScope, type Outcome } from './idempotency';
import type { EmailInput, ValidatedEmail } from './types';
import { validate } from '../schemas/validate';
import { SendEmailRequest } from '../schemas/emails';
import { takeQuota, type EmailLimits } from '../limits/quota';
import { fitsIncoming, incomingRecord } from './incoming-record';

/** What the sending core needs. */
export interface SendingDeps {
  store: Store;
  events: Events;
  config: Pick<Config, 'security' | 'public_url' | 'limits' | 'delivery'> & Partial<Pick<Config, 'cluster'>>;
  /** The group commit of this thread's store (one per composition root). */
  commits: GroupCommit;
  /** The clock `scheduled_at` is checked against (default: the system's). */
  now?: () => number;
}

/** What a send under an idempotency key needs besides (the ways in: HTTP and SMTP). */
export interface SendOnceDeps extends SendingDeps {
  idempotency: Idempotency;
}

export interface SubmitContext {
  team: string;
  /** The API key used (REST or SMTP); null for internal senders such as broadcasts. */
  key: ApiKeyRec | null;
  broadcastId?: string | null;
  /** The contact a broadcast email is for. */
  contactId?: string | null;
  /** The email's id when the caller needed it beforehand (a broadcast's unsubscribe link names it). */
  emailId?: string;
  /** Template values the caller provides itself, under names a request may not use (an automation's unsubscribe URL). */
  templateValues?: Record<string, string>;
}

export interface Prepared {
  email: EmailRec;
  content: EmailContent;
  /** The sending domain's region, when regions are in effect (cluster mode, README "Regions"). */
  region?: string;
}

/** Validate and build one email; throws the documented ApiError; writes nothing. */
export async function prepare(
  deps: SendingDeps,
  ctx: SubmitContext,
  input: EmailInput,
  /** `share`: a batch item's share of its request's attachment budget (attachments.ts `BatchAttachments`). */
  opts: { share?: AttachmentShare; validated?: ValidatedEmail } = {},
): Promise<Prepared> {
  // The fields' types first (the wire schema, src/schemas/emails.ts), then a template becomes the
  // send's subject and body, so every later check sees a plain send.
  const t = opts.validated
    ? { input, templateId: null }
    : await applyTemplate(deps.store, ctx.team, validate(SendEmailRequest, input, 'body'), ctx.templateValues);
  const v = opts.validated ?? validateEmail(t.input, { now: deps.now?.() });
  // A topic named in the body must exist (422 before the domain's 403, docs/api.md §3.3); who
  // receives the email is decided when it is queued (enqueue.ts).
  if (v.topic_id) await topicField(deps.store, ctx.team, v.topic_id, 'topic_id');
  const domain = await sendingDomain(deps.store, ctx.team, v.from);
  if (ctx.key?.domain_id && ctx.key.domain_id !== domain.id)
    throw errors.validation(`This API key is not authorized to send emails from \`${v.from.domain}\`.`, 403);
  const attachments = await resolveAttachments(v.attachments, { allowPrivate: deps.config.security.allow_private_networks, share: opts.share });
  const id = ctx.emailId ?? newId();
  const messageId = `<${id}@${domain.name}>`;
  const recipients: EmailRec['recipients'] = {};
  // Envelope recipients as written (RFC 5321 §2.4: a local part may be case-sensitive; the domain
  // is already lowercase), one per address however it is capitalised.
  const seen = new Set<string>();
  for (const list of [v.to, v.cc, v.bcc])
    for (const a of list) {
      const folded = a.address.toLowerCase();
      if (seen.has(folded)) continue;
      seen.add(folded);
      recipients[a.address] = 'pending';
    }
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
  const email: EmailRec = {
    id,
    team_id: ctx.team,
    created_at: nowIso(),
    from: v.fromText,
    from_address: v.from.address,
    domain_id: domain.id,
    domain: domain.name,
    to: v.to.map(formatAddress),
    cc: v.cc.map(formatAddress),
    bcc: v.bcc.map(formatAddress),
    reply_to: v.reply_to.map(formatAddress),
    subject: v.subject,
    headers: v.headers,
    tags: v.tags,
    scheduled_at: v.scheduled_at,
    last_event: v.scheduled_at ? 'scheduled' : 'queued',
    message_id: messageId,
    broadcast_id: ctx.broadcastId ?? null,
    contact_id: ctx.contactId ?? null,
    topic_id: v.topic_id,
    attachments: metas,
    recipients,
    sent_at: null,
    api_key_id: ctx.key?.id ?? null,
    ...(t.templateId ? { template_id: t.templateId } : {}),
  };
  // No MIME here: the message is composed from these parts when it is delivered (message.ts).
  const message = { from: v.from, to: v.to, cc: v.cc, reply_to: v.reply_to, tracking: trackingOf(domain) };
  return { email, content: { html: v.html, text: v.text, files, message }, ...(deps.config.cluster?.region ? { region: domain.region } : {}) };
}

/** In a unit of work: persist one prepared email and queue or schedule it (`sandbox`: docs/api.md §7.11). */
export async function persist(tx: Tx, events: Events, p: Prepared, sandbox: boolean): Promise<EmailRec> {
  const email = p.email;
  tx.emailContent.put(email.team_id, email.id, p.content);
  if (email.scheduled_at) {
    tx.emails.put(email);
    tx.schedule.add(Date.parse(email.scheduled_at), email.team_id, email.id);
    return events.email(tx, email, 'scheduled');
  }
  // Suppressions are read inside this unit of work, so one committed before this send always counts.
  return enqueue(tx, events, email, { sandbox, region: p.region });
}

export interface CommitOptions {
  /** Also inside the unit of work: the idempotency record, so a replay can never send twice. */
  also?: (tx: Tx) => Promise<void> | void;
  /**
   * Read inside the unit of work before anything is written: drops emails whose reason to exist
   * ended meanwhile (a broadcast contact who unsubscribed).
   */
  keep?: (tx: Tx, p: Prepared) => Promise<boolean>;
  /**
   * The emails may be accepted as received (a batch, docs/ARCHITECTURE.md §4, "The incoming queue"): one
   * record for them all, written as their emails in a later unit of work (incoming.ts) — when their
   * attachments are small enough to be kept in that record.
   */
  incoming?: boolean;
}

/**
 * In a unit of work: one caller's prepared emails (all of one team), and what it asked for
 * besides. The team's sending limits take them all or refuse them all (docs/api.md §6.1).
 */
async function commitIn(tx: Tx, w: Pick<Waiting, 'events' | 'limits' | 'sandbox' | 'prepared' | 'opts' | 'asReceived'>): Promise<EmailRec[]> {
  const { events, prepared, opts } = w;
  const kept: Prepared[] = [];
  for (const p of prepared) if (!opts.keep || (await opts.keep(tx, p))) kept.push(p);
  if (kept.length) await takeQuota(tx, kept[0]!.email.team_id, kept.length, w.limits);
  if (w.asReceived && kept.length) {
    // The records as prepared: the caller answers their ids; incoming.ts writes them.
    tx.incoming.add(incomingRecord(kept, w.sandbox));
    await opts.also?.(tx);
    return kept.map((p) => p.email);
  }
  const out: EmailRec[] = [];
  for (const p of kept) out.push(await persist(tx, events, p, w.sandbox));
  await opts.also?.(tx);
  return out;
}

interface Waiting {
  events: Events;
  limits: EmailLimits;
  /** `delivery.sandbox` (docs/api.md §7.11). */
  sandbox: boolean;
  prepared: Prepared[];
  opts: CommitOptions;
  /** Written to the incoming queue as one record (CommitOptions.incoming, when the attachments allow it). */
  asReceived: boolean;
  resolve: (emails: EmailRec[]) => void;
  reject: (e: unknown) => void;
}

/**
 * The sending core's group commit: the commits asked for during one turn of the event loop
 * (concurrent requests) go in one unit of work. One per store, made by the composition root
 * (services.ts, backoffice/parts.ts) with the store it commits to.
 */
export class GroupCommit {
  /** The group forming during this turn of the event loop, if any. */
  private forming: Waiting[] | null = null;

  constructor(private readonly store: Store) {}

  /** Commit with the others asked for in this turn; resolves once that unit is flushed. */
  join(w: Omit<Waiting, 'resolve' | 'reject'>): Promise<EmailRec[]> {
    return new Promise((resolve, reject) => {
      (this.forming ?? this.form()).push({ ...w, resolve, reject });
    });
  }

  private form(): Waiting[] {
    const group: Waiting[] = [];
    this.forming = group;
    setImmediate(() => {
      this.forming = null;
      void this.commit(group);
    });
    return group;
  }

  /** One unit of work for the group; if it fails, each again on its own (one's failure is never another's). */
  private async commit(group: Waiting[]): Promise<void> {
    const alone = (w: Waiting) => this.store.write((tx) => commitIn(tx, w)).then(w.resolve, w.reject);
    if (group.length === 1) return alone(group[0]!);
    let results: EmailRec[][];
    try {
      results = await this.store.write(async (tx) => {
        const out: EmailRec[][] = [];
        for (const w of group) out.push(await commitIn(tx, w));
        return out;
      });
    } catch {
      await Promise.all(group.map(alone));
      return;
    }
    group.forEach((w, i) => {
      w.resolve(results[i]!);
    });
  }
}

/**
 * Persist prepared emails in one flushed commit. Commits asked for in the same turn of the event
 * loop (concurrent requests) share one unit of work — group commit: each resolves only once that
 * unit is flushed, as if it had been alone. If the shared unit fails, each is committed again on
 * its own, so one caller's failure is never another's.
 */
export async function commit(deps: SendingDeps, prepared: Prepared[], opts: CommitOptions = {}): Promise<EmailRec[]> {
  const shared = { events: deps.events, limits: deps.config.limits, sandbox: deps.config.delivery.sandbox, prepared, opts };
  // Accepted as received: the attachments stay in the incoming queue's record, nothing is staged.
  if (opts.incoming && fitsIncoming(prepared)) return deps.commits.join({ ...shared, asReceived: true });
  // Large attachments are written to their files first, off the event loop (store.emailContent.stage).
  const { emailContent } = deps.store;
  await Promise.all(prepared.map((p) => emailContent.stage(p.email.team_id, p.email.id, p.content)));
  try {
    const out = await deps.commits.join({ ...shared, asReceived: false });
    // Emails `keep` dropped were never put: nothing names their files.
    const kept = new Set(out.map((e) => e.id));
    for (const p of prepared) emailContent.unstage(p.email.team_id, p.email.id, kept.has(p.email.id));
    return out;
  } catch (e) {
    for (const p of prepared) emailContent.unstage(p.email.team_id, p.email.id, false);
    throw e;
  }
}

/** One email, start to finish: what broadcasts and internal senders call for a single message. */
export async function submit(deps: SendingDeps, ctx: SubmitContext, input: EmailInput): Promise<EmailRec> {
  const [email] = await commit(deps, [await prepare(deps, ctx, input)]);
  return email;
}

/**
 * One email under an idempotency key: what POST /emails and SMTP submission do. Answers the
 * outcome to reply with — `{ id }`, or the stored answer of the first request with this key.
 */
export function sendOnce(
  deps: SendOnceDeps,
  ctx: SubmitContext,
  input: EmailInput,
  idempotency: Omit<IdempotencyScope, 'team' | 'fingerprint'>,
): Promise<Outcome> {
  const scope = { ...idempotency, team: ctx.team, fingerprint: () => fingerprintOf(input) };
  return deps.idempotency.run(scope, async (remember) => {
    const p = await prepare(deps, ctx, input);
    const o = { status: 200, body: { id: p.email.id } };
    await commit(deps, [p], { also: remember && ((tx) => remember(tx, o)) });
    return o;
  });
}
