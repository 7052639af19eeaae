// Sending a queued broadcast (docs/api.md §13): one ordinary email per recipient, each through
// the one sending core (`prepare` → `commit`), so suppressions, MIME, the delivery
// queue and events work exactly as for any other email. Emails are committed in batches, and each
// batch records which contacts it covered in the same transaction (the store's broadcast progress):
// a send interrupted by a crash resumes with the contacts not yet covered, and nobody gets two.
// The last batch's transaction marks the broadcast `sent`.
//
// A `from` domain that is no longer verified when the emails are created: the broadcast goes back
// to `draft` (logged), with the emails made so far kept. That is the state a user can act on —
// verify the domain or change `from`, then send again (contacts already covered are skipped). The
// alternative, one `failed` email per recipient, would fill the email list with copies of one error.
import type { Config } from '../config';
import type { BroadcastRec, ContactRec, StoreReader, TopicRec, Tx } from '../store';
import type { EmailInput } from '../sending/types';
import { ApiError } from '../errors';
import { newId, nowIso } from '../ids';
import { log } from '../log';
import { prepare, commit, type Prepared, type SendingDeps } from '../sending/submit';
import { addressField } from '../sending/address';
import { sendingDomain } from '../sending/sender';
import { SignedLinks } from '../links/signed';
import { renderPlaceholders, withPreheader, type Recipient } from './placeholders';
import { subscriptionOf } from '../topics';
import { propertyDefs } from '../contacts/properties';
import { unschedule } from '.';
import { engagementOf, mostEngagedFirst, warmingPool } from './engagement';

/** What sending a broadcast needs: the sending core's, and `public_url` for unsubscribe links. */
export interface BroadcastDeps extends SendingDeps {
  config: Pick<Config, 'security' | 'public_url' | 'limits' | 'delivery'>;
}

/** Emails per transaction: large enough to batch the fsync, small enough to keep commits short. */
export const BATCH_SIZE = 100;

/** sent: done; refused: back to draft (domain); stopped: shutdown, resumes later; skipped: nothing to do. */
export type SendOutcome = 'sent' | 'refused' | 'stopped' | 'skipped';

export interface SendOptions {
  /** Checked between batches: shutting down stops after the batch in hand (the rest resumes later). */
  signal?: AbortSignal;
  batchSize?: number;
}

/** The broadcast changed under a batch (not queued any more, or contacts already covered): nothing of the batch was written. */
class StaleBatch extends Error {}

/** Create the recipient emails of a `queued` broadcast and mark it `sent`. Anything else is left alone. */
export async function sendBroadcast(svc: BroadcastDeps, team: string, broadcastId: string, opts: SendOptions = {}): Promise<SendOutcome> {
  const { store } = svc;
  const b = await store.broadcasts.get(team, broadcastId);
  if (b?.status !== 'queued') return 'skipped';
  const refusal = await domainRefusal(svc, b);
  if (refusal) return refuse(svc, b, refusal);
  const links = new SignedLinks(store.secret('links'), svc.config.public_url);
  // A topic deleted since the send was accepted: nobody can be shown to have subscribed.
  const topic = b.topic_id ? ((await store.topics.get(team, b.topic_id)) ?? null) : undefined;
  if (topic === null) return refuse(svc, b, new ApiError(422, 'validation_error', "The broadcast's topic no longer exists."));
  const receives = (r: StoreReader, c: ContactRec) => wanted(r, c, topic);
  const properties = await propertyDefs(store, team);
  let todo = await pendingRecipients(svc, b, receives);
  // Warming addresses may spill it into the next days: the most engaged recipients go first.
  if (await warmingPool(store, svc.config.delivery.ips, (await store.domains.find('name', addressField('from', b.from).domain))?.pool))
    todo = mostEngagedFirst(todo, await engagementOf(store, b));
  const size = opts.batchSize ?? BATCH_SIZE;
  // At least one commit: an empty segment (or a resumed, fully covered one) still ends `sent`.
  for (let i = 0; i === 0 || i < todo.length; i += size) {
    if (opts.signal?.aborted) return 'stopped';
    // Canceled while sending (docs/api.md §13.3): the batches not prepared yet are never made.
    if ((await store.broadcasts.get(team, b.id))?.status !== 'queued') return 'skipped';
    const last = i + size >= todo.length;
    // contact id → email id, or null when the contact is skipped (unsubscribed meanwhile, refused address).
    const covered = new Map<string, string | null>();
    const prepared: Prepared[] = [];
    const recipientOf = new Map<Prepared, ContactRec>();
    const results = await Promise.allSettled(
      todo.slice(i, i + size).map(async (id) => {
        // Read again: a contact may have unsubscribed or left since the list was made.
        const c = await store.contacts.get(team, id);
        if (!c || !(await receives(store, c))) return { id, p: null };
        const emailId = newId();
        const r: Recipient = { contact: c, properties, unsubscribeUrl: links.unsubscribeUrl({ team, contact: c.id, email: emailId }) };
        const p = await prepare(svc, { team, key: null, broadcastId: b.id, contactId: c.id, emailId }, emailFor(b, r));
        recipientOf.set(p, c);
        return { id, p };
      }),
    );
    for (const [k, r] of results.entries()) {
      const id = todo[i + k];
      if (r.status === 'fulfilled') {
        covered.set(id, r.value.p?.email.id ?? null);
        if (r.value.p) prepared.push(r.value.p);
        continue;
      }
      if (!(r.reason instanceof ApiError)) throw r.reason;
      // 403: the domain lost its verification mid-way.
      if (r.reason.statusCode === 403) return refuse(svc, b, r.reason);
      log.warn('broadcast.recipient_skipped', { team_id: team, broadcast_id: b.id, contact_id: id, reason: r.reason.message });
      covered.set(id, null);
    }
    try {
      // Inside the commit: a contact who unsubscribed, left the segment or changed address while
      // the batch was being built is skipped (recorded as covered without an email).
      const keep = async (tx: Tx, p: Prepared) => {
        const c = recipientOf.get(p)!;
        const cur = await tx.contacts.get(team, c.id);
        const ok =
          !!cur && (await receives(tx, cur)) && cur.email.toLowerCase() === c.email.toLowerCase() && (await tx.memberships.has(team, b.segment_id, c.id));
        if (!ok) covered.set(c.id, null);
        return ok;
      };
      const also = async (tx: Tx) => {
        const cur = await tx.broadcasts.get(team, b.id);
        if (cur?.status !== 'queued') throw new StaleBatch();
        // Written back as read, so that a cancel committed meanwhile makes this unit run again and
        // stop (PostgreSQL writes a row read in a unit only if unchanged; LMDB runs units one by one).
        if (!last) tx.broadcasts.put(cur);
        for (const [contact, email] of covered) {
          if (await tx.broadcastProgress.has(team, b.id, contact)) throw new StaleBatch();
          tx.broadcastProgress.put(team, b.id, contact, email);
        }
        if (last) {
          tx.broadcasts.put({ ...cur, status: 'sent', sent_at: nowIso() });
          unschedule(tx, cur);
          await tx.broadcastProgress.clear(team, b.id);
        }
      };
      await commit(svc, prepared, { also, keep });
    } catch (e) {
      if (!(e instanceof StaleBatch)) throw e;
      return 'skipped';
    }
  }
  return 'sent';
}

/**
 * One recipient's email as the send makes it, prepared and not stored (the review before sending,
 * review.ts): the first contact of the segment who would receive it, or a stand-in at example.com
 * when nobody would yet. Throws what `prepare` throws (the domain's 403 among it).
 */
export async function renderSample(svc: BroadcastDeps, b: BroadcastRec): Promise<{ prepared: Prepared; contact: ContactRec | null }> {
  const { store } = svc;
  const team = b.team_id;
  const topic = b.topic_id ? ((await store.topics.get(team, b.topic_id)) ?? undefined) : undefined;
  let contact: ContactRec | null = null;
  for (const id of await store.memberships.contactsOf(team, b.segment_id)) {
    const c = await store.contacts.get(team, id);
    if (c && (await wanted(store, c, topic))) {
      contact = c;
      break;
    }
  }
  const now = nowIso();
  const standIn: ContactRec = {
    id: newId(),
    team_id: team,
    created_at: now,
    updated_at: now,
    email: 'subscriber@example.com',
    first_name: null,
    last_name: null,
    unsubscribed: false,
    properties: {},
  };
  const properties = await propertyDefs(store, team);
  const links = new SignedLinks(store.secret('links'), svc.config.public_url);
  const render = (c: ContactRec, contactId: string | null) => {
    const emailId = newId();
    const r: Recipient = { contact: c, properties, unsubscribeUrl: links.unsubscribeUrl({ team, contact: c.id, email: emailId }) };
    return prepare(svc, { team, key: null, broadcastId: b.id, contactId, emailId }, emailFor(b, r));
  };
  if (contact) {
    try {
      return { prepared: await render(contact, contact.id), contact };
    } catch (e) {
      // A contact the send would skip (its email refused, sendBroadcast above): the stand-in then.
      if (!(e instanceof ApiError) || e.statusCode === 403) throw e;
    }
  }
  return { prepared: await render(standIn, null), contact: null };
}

/**
 * Does the contact receive the broadcast? Not when unsubscribed from everything; with a topic,
 * only when subscribed to it (their choice, or the topic's default, docs/api.md §12.8).
 */
async function wanted(r: StoreReader, c: ContactRec, topic: TopicRec | undefined): Promise<boolean> {
  if (c.unsubscribed) return false;
  return !topic || (await subscriptionOf(r, topic, c.id)) === 'opt_in';
}

/**
 * Contacts still to email, in segment order: members who receive it (`wanted`), one per address
 * (compared case-insensitively), without those an earlier run already covered.
 */
async function pendingRecipients(svc: BroadcastDeps, b: BroadcastRec, receives: (r: StoreReader, c: ContactRec) => Promise<boolean>): Promise<string[]> {
  const { store } = svc;
  const seen = new Set<string>();
  const out: string[] = [];
  for (const id of await store.memberships.contactsOf(b.team_id, b.segment_id)) {
    const c: ContactRec | undefined = await store.contacts.get(b.team_id, id);
    if (!c || !(await receives(store, c))) continue;
    const address = c.email.toLowerCase();
    if (seen.has(address)) continue;
    seen.add(address);
    if (!(await store.broadcastProgress.has(b.team_id, b.id, id))) out.push(id);
  }
  return out;
}

/** One recipient's email: placeholders rendered (docs/api.md §13.4), unsubscribe headers set. */
export function emailFor(b: BroadcastRec, r: Recipient): EmailInput {
  const html = b.html ? renderPlaceholders(b.html, r, 'html') : null;
  const preview = b.preview_text ? renderPlaceholders(b.preview_text, r, 'text') : null;
  return {
    from: b.from,
    to: r.contact.email,
    subject: renderPlaceholders(b.subject, r, 'header'),
    html: html && preview ? withPreheader(html, preview) : html,
    // null: the core derives the text part from the html.
    text: b.text ? renderPlaceholders(b.text, r, 'text') : b.text,
    reply_to: b.reply_to ?? undefined,
    topic_id: b.topic_id,
    headers: {
      // RFC 2369 §3.2: the URL in angle brackets; RFC 8058 §3.1: a POST of this body unsubscribes.
      'List-Unsubscribe': `<${r.unsubscribeUrl}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    },
  };
}

async function domainRefusal(svc: BroadcastDeps, b: BroadcastRec): Promise<ApiError | null> {
  try {
    await sendingDomain(svc.store, b.team_id, addressField('from', b.from));
    return null;
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
}

/** Back to draft (see the top of this file); emails already created stay. */
async function refuse(svc: BroadcastDeps, b: BroadcastRec, why: ApiError): Promise<SendOutcome> {
  return returnToDraft(svc, b, why.message);
}

/** Take a queued broadcast back to `draft` (unscheduled), so its owner can fix it and send again. */
export async function returnToDraft(svc: Pick<BroadcastDeps, 'store'>, b: Pick<BroadcastRec, 'team_id' | 'id'>, reason: string): Promise<SendOutcome> {
  await svc.store.write(async (tx) => {
    const cur = await tx.broadcasts.get(b.team_id, b.id);
    if (cur?.status !== 'queued') return;
    unschedule(tx, cur);
    tx.broadcasts.put({ ...cur, status: 'draft', scheduled_at: null });
  });
  log.warn('broadcast.refused', { team_id: b.team_id, broadcast_id: b.id, reason });
  return 'refused';
}
