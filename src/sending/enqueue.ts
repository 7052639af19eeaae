// From an accepted email to delivery-queue entries: one entry per recipient domain (the unit of MX
// resolution and connection reuse), due now. Used at submission and when a scheduled send is due.
import type { Services } from '../services';
import type { EmailRec, QueueEntry } from '../store';
import { newId } from '../ids';

/** Inside a transaction: queue the email's pending recipients and mark it `queued`. */
export function enqueueInTxn(svc: Services, email: EmailRec, now = Date.now()): EmailRec {
  const byDomain = new Map<string, string[]>();
  for (const [rcpt, state] of Object.entries(email.recipients)) {
    if (state !== 'pending') continue;
    const domain = rcpt.slice(rcpt.lastIndexOf('@') + 1);
    byDomain.set(domain, [...(byDomain.get(domain) ?? []), rcpt]);
  }
  if (byDomain.size === 0) return svc.events.email(email, 'suppressed');
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
    svc.store.queue.putInTxn(entry, now);
  }
  return svc.events.email(email, 'queued');
}
