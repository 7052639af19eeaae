// Scheduled sends (docs/api.md §7.1, §7.5, §7.6): release due emails to the delivery queue,
// reschedule, cancel. The schedule index survives restarts; a due email whose domain was deleted
// or is no longer verified fails instead of sending.
import type { EmailRec, StoreReader, Tx } from '../store';
import { errors } from '../errors';
import { sendingBlocked } from '../domains/records';
import { enqueue } from './enqueue';
import type { Config } from '../config';
import type { SendingDeps } from './submit';

/** Move every due scheduled email to the delivery queue. Returns how many were released. */
export async function releaseDue(
  deps: Pick<SendingDeps, 'store' | 'events'> & { config: Pick<Config, 'delivery'> & Partial<Pick<Config, 'cluster'>> },
  now = Date.now(),
): Promise<number> {
  const { store, events } = deps;
  const { sandbox } = deps.config.delivery;
  // A look first, so that an empty schedule costs no unit of work each second.
  if ((await store.schedule.due(now, 1)).length === 0) return 0;
  // Read again inside the unit: in cluster mode that claims the entries (FOR UPDATE SKIP LOCKED),
  // so the nodes releasing at the same second each take their own.
  return store.write(async (tx) => {
    const due = await tx.schedule.due(now);
    for (const { due: at, team, id: emailId } of due) {
      tx.schedule.remove(at, team, emailId);
      const email = await tx.emails.get(team, emailId);
      // A rescheduled or cancelled email left a stale entry behind: skip it.
      if (email?.last_event !== 'scheduled' || Date.parse(email.scheduled_at ?? '') !== at) continue;
      const domain = await tx.domains.get(team, email.domain_id);
      const blocked = sendingBlocked(domain);
      if (blocked) await events.email(tx, email, 'failed', { failed: { reason: blocked } });
      // With regions (cluster mode), the entries carry the domain's region: only its nodes claim them.
      else await enqueue(tx, events, email, { sandbox, now, region: deps.config.cluster?.region ? domain?.region : undefined });
    }
    return due.length;
  });
}

async function scheduledEmail(store: StoreReader, team: string, id: string, verb: 'updated' | 'canceled'): Promise<EmailRec> {
  const email = await store.emails.get(team, id);
  if (!email) throw errors.notFound('Email');
  if (email.last_event !== 'scheduled') throw errors.validation(`Only scheduled emails can be ${verb}.`);
  return email;
}

/** PATCH /emails/{id}: a new time (ISO, or null = now). */
export async function reschedule(
  deps: Pick<SendingDeps, 'store' | 'events'> & { config: Pick<Config, 'delivery'> },
  team: string,
  id: string,
  at: string | null,
): Promise<void> {
  await deps.store.write(async (tx: Tx) => {
    const email = await scheduledEmail(tx, team, id, 'updated');
    tx.schedule.remove(Date.parse(email.scheduled_at!), team, id);
    const when = at ?? new Date().toISOString();
    tx.emails.put({ ...email, scheduled_at: when });
    tx.schedule.add(Date.parse(when), team, id);
  });
  if (at === null) await releaseDue(deps);
}

/** POST /emails/{id}/cancel. */
export async function cancel(deps: Pick<SendingDeps, 'store' | 'events'>, team: string, id: string): Promise<void> {
  await deps.store.write(async (tx) => {
    const email = await scheduledEmail(tx, team, id, 'canceled');
    tx.schedule.remove(Date.parse(email.scheduled_at!), team, id);
    await deps.events.email(tx, email, 'canceled');
  });
}
