// From an accepted email to delivery-queue entries: one entry per recipient domain (the unit of MX
// resolution and connection reuse), due now. Used at submission and when a scheduled send is due.
import type { EmailRec, QueueEntry, Tx } from '../store';
import type { Events } from '../events';
import { newId } from '../ids';
import { isSuppressed } from '../suppressions';

/**
 * Queue the email's pending recipients and mark it `queued`. The suppression list is read here,
 * when the email goes out, so an address suppressed (or released) between a scheduled send's
 * acceptance and its time counts as it is then.
 */
export async function enqueue(tx: Tx, events: Events, email: EmailRec, now = Date.now()): Promise<EmailRec> {
  const recipients = { ...email.recipients };
  for (const [rcpt, state] of Object.entries(recipients))
    if (state === 'pending' || state === 'suppressed') recipients[rcpt] = (await isSuppressed(tx, email.team_id, rcpt)) ? 'suppressed' : 'pending';
  // Stored once, by the event function below.
  email = { ...email, recipients };
  const byDomain = new Map<string, string[]>();
  for (const [rcpt, state] of Object.entries(recipients)) {
    if (state !== 'pending') continue;
    const domain = rcpt.slice(rcpt.lastIndexOf('@') + 1);
    byDomain.set(domain, [...(byDomain.get(domain) ?? []), rcpt]);
  }
  if (byDomain.size === 0) return events.email(tx, email, 'suppressed', { current: true });
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
    tx.queue.put(entry, now);
  }
  return events.email(tx, email, 'queued', { current: true });
}
