// From an accepted email to delivery-queue entries: one entry per recipient domain (the unit of MX
// resolution and connection reuse), due now. Used at submission and when a scheduled send is due.
import type { EmailRec, QueueEntry, RecipientState, Tx } from '../store';
import type { Events } from '../events';
import { newId } from '../ids';
import { isSuppressed } from '../suppressions';
import { topicAllows } from '../topics';

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
 * none is `suppressed` — or `failed` when the topic kept anyone out, as Resend reports it.
 */
export async function enqueue(tx: Tx, events: Events, email: EmailRec, now = Date.now()): Promise<EmailRec> {
  const topic = email.topic_id ? await tx.topics.get(email.team_id, email.topic_id) : null;
  const recipients = { ...email.recipients };
  for (const [rcpt, state] of Object.entries(recipients)) {
    if (state !== 'pending' && state !== 'suppressed' && state !== 'opted_out') continue;
    let next: RecipientState = (await isSuppressed(tx, email.team_id, rcpt)) ? 'suppressed' : 'pending';
    // A topic deleted meanwhile lets nobody through: no one can be shown to have subscribed.
    if (next === 'pending' && email.topic_id && !(topic && (await topicAllows(tx, topic, rcpt)))) next = 'opted_out';
    recipients[rcpt] = next;
  }
  // Stored once, by the event function below.
  email = { ...email, recipients };
  const byDomain = new Map<string, string[]>();
  for (const [rcpt, state] of Object.entries(recipients)) {
    if (state !== 'pending') continue;
    const domain = rcpt.slice(rcpt.lastIndexOf('@') + 1);
    byDomain.set(domain, [...(byDomain.get(domain) ?? []), rcpt]);
  }
  if (byDomain.size === 0) {
    if (Object.values(recipients).includes('opted_out')) return events.email(tx, email, 'failed', { current: true, failed: { reason: NOT_SUBSCRIBED } });
    const suppressed = Object.keys(recipients).filter((r) => recipients[r] === 'suppressed');
    return events.email(tx, email, 'suppressed', { current: true, recipients: suppressed, suppressed: ON_SUPPRESSION_LIST });
  }
  for (const [domain, recipients] of byDomain) {
    const entry: QueueEntry = {
      id: newId(),
      team_id: email.team_id,
      email_id: email.id,
      domain,
      recipients,
      attempts: 0,
      first_attempt_at: null,
      last_error: null,
    };
    tx.queue.add(entry, now);
  }
  return events.email(tx, email, 'queued', { current: true });
}
