// Scheduled sends (api-reference §7.1, §7.5, §7.6): release due emails to the delivery queue,
// reschedule, cancel. The schedule index survives restarts; a due email whose domain was deleted
// or is no longer verified fails instead of sending.
import type { Services } from '../services';
import type { EmailRec } from '../store';
import { errors } from '../api/errors';
import { canSendFrom } from '../domains/records';
import { enqueueInTxn } from '../sending/enqueue';

/** Move every due scheduled email to the delivery queue. Returns how many were released. */
export async function releaseDue(svc: Services, now = Date.now()): Promise<number> {
  const due = svc.store.schedule.due(now);
  if (due.length === 0) return 0;
  await svc.store.transaction(() => {
    for (const { due: at, team, id: emailId } of due) {
      svc.store.schedule.removeInTxn(at, team, emailId);
      const email = svc.store.emails.get(team, emailId);
      // A rescheduled or cancelled email left a stale entry behind: skip it.
      if (!email || email.last_event !== 'scheduled' || Date.parse(email.scheduled_at ?? '') !== at) continue;
      const domain = svc.store.domains.get(team, email.domain_id);
      if (!domain || !canSendFrom(domain)) svc.events.email(email, 'failed');
      else enqueueInTxn(svc, email, now);
    }
  });
  svc.delivery?.kick();
  return due.length;
}

function scheduledEmail(svc: Services, team: string, id: string, verb: 'updated' | 'canceled'): EmailRec {
  const email = svc.store.emails.get(team, id);
  if (!email) throw errors.notFound('Email');
  if (email.last_event !== 'scheduled') throw errors.validation(`Only scheduled emails can be ${verb}.`);
  return email;
}

/** PATCH /emails/{id}: a new time (ISO, or null = now). */
export async function reschedule(svc: Services, team: string, id: string, at: string | null): Promise<void> {
  scheduledEmail(svc, team, id, 'updated');
  await svc.store.transaction(() => {
    const email = scheduledEmail(svc, team, id, 'updated');
    svc.store.schedule.removeInTxn(Date.parse(email.scheduled_at!), team, id);
    const when = at ?? new Date().toISOString();
    svc.store.emails.putInTxn({ ...email, scheduled_at: when });
    svc.store.schedule.addInTxn(Date.parse(when), team, id);
  });
  if (at === null) await releaseDue(svc);
}

/** POST /emails/{id}/cancel. */
export async function cancel(svc: Services, team: string, id: string): Promise<void> {
  scheduledEmail(svc, team, id, 'canceled');
  await svc.store.transaction(() => {
    const email = scheduledEmail(svc, team, id, 'canceled');
    svc.store.schedule.removeInTxn(Date.parse(email.scheduled_at!), team, id);
    svc.events.email(email, 'canceled');
  });
}
