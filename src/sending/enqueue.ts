// From an accepted email to delivery-queue entries: one entry per recipient domain (the unit of MX
// resolution and connection reuse), due now. Used at submission and when a scheduled send is due.
import type { EmailRec, QueueEntry, RecipientState, Tx } from '../store';
import type { Events } from '../events';
import { newId } from '../ids';
import { sandboxOutcome } from '../mail/sandbox';
import { isSuppressed } from '../suppressions';
import { topicAllows } from '../topics';

export interface EnqueueOptions {
  /** `delivery.sandbox`: Resend's test addresses are simulated (docs/api.md §7.11). */
  sandbox: boolean;
  /** When the entries are due (default: now). */
  now?: number;
  /** The sending domain's region, when regions are in effect (cluster mode, README "Regions"): only nodes of that region claim the entries. */
  region?: string;
}
/** `failed.reason` of an email none of whose recipients the email's topic may reach (docs/api.md §14.3). */
const NOT_SUBSCRIBED = 'not_subscribed_to_topic';
/** `suppressed` of an email every recipient of which is on the suppression list: Resend's words for it (docs/api.md §14.3). */
const ON_SUPPRESSION_LIST = {
  type: 'OnAccountSuppressionList',
  message: 'Posthorn has suppressed sending to this address because it is on the team’s suppression list.',
};

/**
 * Queue the email's pending recipients and mark it `queued`. The suppression list and, for an
 * email scoped to a topic, each recipient's subscription (docs/api.md §7.1) are read here, when
 * the email goes out, so a change between a scheduled send's acceptance and its time counts as it
 * is then. Skipped recipients keep their reason (`suppressed`, `opted_out`); an email left with
 * none is `suppressed` — or `failed` when the topic kept anyone out, as Resend reports it. With
 * the sandbox on, suppressed@resend.dev is suppressed at once, with no entry on the list, and the
 * other sandbox addresses get queue entries of their own (the delivery engine answers for them).
 */
export async function enqueue(tx: Tx, events: Events, email: EmailRec, opts: EnqueueOptions): Promise<EmailRec> {
  const { sandbox, now = Date.now() } = opts;
  const topic = email.topic_id ? await tx.topics.get(email.team_id, email.topic_id) : null;
  const recipients = { ...email.recipients };
  for (const [rcpt, state] of Object.entries(recipients)) {
    if (state !== 'pending' && state !== 'suppressed' && state !== 'opted_out') continue;
    const suppressed = (sandbox && sandboxOutcome(rcpt) === 'suppressed') || (await isSuppressed(tx, email.team_id, rcpt));
    let next: RecipientState = suppressed ? 'suppressed' : 'pending';
    // A topic deleted meanwhile lets nobody through: no one can be shown to have subscribed.
    if (next === 'pending' && email.topic_id && !(topic && (await topicAllows(tx, topic, rcpt)))) next = 'opted_out';
    recipients[rcpt] = next;
  }
  // Stored once, by the event function below.
  email = { ...email, recipients };
  // One entry per domain; sandbox addresses apart from the domain's others, each entry all of one kind.
  const entries = new Map<string, { domain: string; recipients: string[] }>();
  for (const [rcpt, state] of Object.entries(recipients)) {
    if (state !== 'pending') continue;
    const domain = rcpt.slice(rcpt.lastIndexOf('@') + 1);
    const key = sandbox && sandboxOutcome(rcpt) ? `sandbox:${domain}` : domain;
    const group = entries.get(key);
    if (group) group.recipients.push(rcpt);
    else entries.set(key, { domain, recipients: [rcpt] });
  }
  if (entries.size === 0) {
    if (Object.values(recipients).includes('opted_out')) return events.email(tx, email, 'failed', { current: true, failed: { reason: NOT_SUBSCRIBED } });
    const suppressed = Object.keys(recipients).filter((r) => recipients[r] === 'suppressed');
    return events.email(tx, email, 'suppressed', { current: true, recipients: suppressed, suppressed: ON_SUPPRESSION_LIST });
  }
  for (const { domain, recipients } of entries.values()) {
    const entry: QueueEntry = {
      id: newId(),
      team_id: email.team_id,
      email_id: email.id,
      domain,
      recipients,
      attempts: 0,
      first_attempt_at: null,
      last_error: null,
      ...(opts.region ? { region: opts.region } : {}),
    };
    tx.queue.add(entry, now);
  }
  return events.email(tx, email, 'queued', { current: true });
}
