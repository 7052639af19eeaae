// When a broadcast's emails waiting on warm-up allowances will have left (README.md, "Sending IPs
// and warm-up"; docs/api.md §19.17): its pending recipients per site against the allowances of
// the addresses of its domain's pool, day by day on their ramps (delivery/warmup.ts), each day's
// share spread at most its hourly cap. An estimate: held days ahead, deferrals and other mail from
// the same addresses are not foreseen.
import type { Config } from '../config';
import { type BroadcastRec, INSTALL_TEAM, type SendingIpRec, type StoreReader } from '../store';
import { parseAddress } from '../mail/address';
import { allowanceOf } from './ips';
import { SiteRules } from './shaping';
import { dayOf, type WarmupRamps } from './warmup';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** Beyond this the ramps are past any real volume: no forecast. */
const MAX_DAYS = 60;

/**
 * When the `pending` recipients (per shaping site) will have been sent from `pool`'s addresses
 * (their records), or null when no allowance limits them (an address of the pool that is not
 * warming sends without one) or nothing is pending. `now` itself when today's room suffices.
 */
export function completesAt(ramps: WarmupRamps, pool: readonly SendingIpRec[], pending: ReadonlyMap<string, number>, now: number): number | null {
  if (!pool.length || pool.some((r) => r.warmup.state === 'off' || r.warmup.state === 'complete')) return null;
  let latest: number | null = null;
  for (const [site, n] of pending) {
    if (n <= 0) continue;
    const at = siteCompletes(ramps, pool, site, n, now);
    if (at === null) return null;
    latest = latest === null ? at : Math.max(latest, at);
  }
  return latest;
}

/** When `n` recipients at `site` will have gone: day by day, each day's room spread at its hourly cap. */
function siteCompletes(ramps: WarmupRamps, pool: readonly SendingIpRec[], site: string, n: number, now: number): number | null {
  let left = n;
  const today = dayOf(now);
  for (let d = 0; d <= MAX_DAYS; d++) {
    const from = d === 0 ? now : (today + d) * DAY_MS;
    let daily = 0;
    let hourly = 0;
    for (const r of pool) {
      const a = allowanceOf(ramps, r, site, from);
      if (!a) return null;
      const s = r.sites[site];
      const sent = d === 0 && s?.day === today ? s.sent : 0;
      daily += Math.max(0, a.daily - sent);
      hourly += a.hourly;
    }
    // Today has only the hours left of it (this one included).
    if (d === 0) daily = Math.min(daily, Math.ceil(((today + 1) * DAY_MS - now) / HOUR_MS) * hourly);
    if (daily >= left) {
      // This hour's cap is shared with what it sent already; an estimate to the hour is enough.
      return left <= 0 ? from : from + Math.ceil(left / Math.max(1, hourly) - 1) * HOUR_MS;
    }
    left -= daily;
  }
  return null;
}

/** A broadcast's forecast (docs/api.md §19.17): its recipients still waiting, and when the last will have gone. */
export interface BroadcastForecast {
  pending: number;
  completes_at: string;
}

/**
 * The forecast of a sent broadcast whose domain's pool has an address warming, else null: its
 * emails' recipients not yet delivered (pending or delayed), per site — the site their last attempt
 * went to, else their domain's — against the pool's allowances.
 */
export async function broadcastForecast(store: StoreReader, config: Pick<Config, 'delivery'>, b: BroadcastRec, now: number): Promise<BroadcastForecast | null> {
  if (b.status !== 'sent') return null;
  const name = parseAddress(b.from)?.domain;
  const domain = name ? await store.domains.find('name', name) : undefined;
  const pool = (await store.sendingIps.all(INSTALL_TEAM)).filter((r) => r.pool === (domain?.pool ?? 'default'));
  if (!pool.some((r) => r.warmup.state === 'warming' || r.warmup.state === 'paused')) return null;
  const rules = new SiteRules(config.delivery.shaping);
  const pending = new Map<string, number>();
  let total = 0;
  await store.emails.pageBy('broadcast', b.id, b.team_id, {}, null, (e) => {
    const site = e.attempts?.at(-1)?.sending_site;
    for (const [rcpt, state] of Object.entries(e.recipients)) {
      if (state !== 'pending' && state !== 'delayed') continue;
      const d = rcpt.slice(rcpt.lastIndexOf('@') + 1);
      const s = site ?? rules.siteOfDomain(d) ?? d;
      pending.set(s, (pending.get(s) ?? 0) + 1);
      total++;
    }
    return undefined;
  });
  if (!total) return null;
  const at = completesAt(config.delivery.warmup, pool, pending, now);
  return at === null ? null : { pending: total, completes_at: new Date(at).toISOString() };
}
