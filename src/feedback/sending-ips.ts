// Complaints matched back to the sending IP that delivered the email (README.md, "Sending IPs and
// warm-up"): the email's attempts name the address of `delivery.ips` each was bound to and the
// shaping site it went to (delivery/settle.ts `attemptRecord`); the complaint is counted on that
// address's record, per site and per UTC day of its arrival, in the unit of work of the complaint
// itself. The engine of the address's node reads the count when the day ends: complaints over
// 0.08 % of the day's sends there hold and slow the ramp (delivery/warmup.ts `rolled`).
import { type EmailRec, INSTALL_TEAM, type Tx } from '../store';

/** How many days of complaint counts a record keeps (a day is read once, when it ends). */
const KEEP_DAYS = 7;

/** The attempt that delivered to `rcpt` from a sending IP, if any: the last one with a 2xx reply for it. */
export function deliveredFrom(email: EmailRec, rcpt: string): { address: string; site: string } | null {
  const key = rcpt.toLowerCase();
  for (const a of [...(email.attempts ?? [])].reverse()) {
    if (!a.sending_ip || !a.sending_site) continue;
    if (a.results.some((r) => r.recipient.toLowerCase() === key && r.code >= 200 && r.code < 300)) return { address: a.sending_ip, site: a.sending_site };
  }
  return null;
}

/** In the complaint's unit of work: one more complaint on the record of the address that delivered it, at its site, today (UTC). */
export async function countComplaint(tx: Tx, email: EmailRec, rcpt: string, now: number): Promise<void> {
  const from = deliveredFrom(email, rcpt);
  if (!from) return;
  const r = await tx.sendingIps.get(INSTALL_TEAM, from.address);
  // The record exists from the engine's first look at its addresses; an address no longer configured has none.
  if (!r) return;
  // Days since the epoch, UTC: delivery/warmup.ts `dayOf`, which the engine reads them by.
  const day = Math.floor(now / 86_400_000);
  const complaints: Record<string, Record<string, number>> = {};
  for (const [site, days] of Object.entries(r.complaints ?? {})) {
    const kept = Object.fromEntries(Object.entries(days).filter(([d]) => Number(d) > day - KEEP_DAYS));
    if (Object.keys(kept).length) complaints[site] = kept;
  }
  const site = complaints[from.site] ?? {};
  complaints[from.site] = { ...site, [day]: (site[day] ?? 0) + 1 };
  tx.sendingIps.put({ ...r, complaints });
}
