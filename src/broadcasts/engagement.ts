// The order of a broadcast's recipients when its sending IPs are warming (README.md, "Sending IPs
// and warm-up"): a broadcast larger than today's allowance spills into the next days, so the most
// engaged recipients go first — their emails are made first, and the delivery queue takes waiting
// entries oldest first. Engagement is what the store already keeps: each email's human opens and
// clicks (`engagement`, the automated ones left out) on the emails of the team's last broadcasts,
// summed per contact.
import type { Config } from '../config';
import type { BroadcastRec, StoreReader } from '../store';
import { INSTALL_TEAM } from '../store';

/** How many of the team's latest sent broadcasts a contact's engagement is read from. */
export const ENGAGEMENT_BROADCASTS = 10;
/** A human click weighs as much as this many opens: it says more about a recipient than an open. */
const CLICK_WEIGHT = 3;

/**
 * Does the broadcast's mail leave from a pool with an address warming (its allowance may not take
 * the broadcast today)? An address of `delivery.ips` with `warmup` set that has no record yet warms
 * from its first day (delivery/ips.ts `SendingIps.record`).
 */
export async function warmingPool(store: StoreReader, ips: Config['delivery']['ips'], pool = 'default'): Promise<boolean> {
  const recs = new Map((await store.sendingIps.all(INSTALL_TEAM)).map((r) => [r.id, r]));
  return ips.some((ip) => {
    if (ip.pool !== pool) return false;
    const r = recs.get(ip.address);
    return r ? r.warmup.state === 'warming' || r.warmup.state === 'paused' : ip.warmup !== null;
  });
}

/** Each contact's engagement over the team's last sent broadcasts other than `b`: human opens, and clicks weighed CLICK_WEIGHT. */
export async function engagementOf(store: StoreReader, b: BroadcastRec): Promise<Map<string, number>> {
  const sent = (await store.broadcasts.all(b.team_id)).filter((x) => x.id !== b.id && x.status === 'sent').slice(-ENGAGEMENT_BROADCASTS);
  const score = new Map<string, number>();
  for (const past of sent) {
    await store.emails.pageBy('broadcast', past.id, b.team_id, {}, null, (e) => {
      const g = e.engagement;
      if (e.contact_id && g && (g.opens || g.clicks)) score.set(e.contact_id, (score.get(e.contact_id) ?? 0) + g.opens + CLICK_WEIGHT * g.clicks);
      return undefined;
    });
  }
  return score;
}

/** Contact ids most engaged first; equals keep their order (the segment's). */
export function mostEngagedFirst(ids: string[], score: ReadonlyMap<string, number>): string[] {
  return ids
    .map((id, i) => ({ id, i, s: score.get(id) ?? 0 }))
    .sort((a, b) => b.s - a.s || a.i - b.i)
    .map((x) => x.id);
}
