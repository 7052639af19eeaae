// Sending IPs and pools (README.md, "Sending IPs and warm-up"): the addresses of `delivery.ips`
// that an attempt's connections bind to, each saying its own EHLO name. A domain names its pool
// (`pool`, else "default"); within the pool an address is chosen by weight, skipping those that are
// listed on a blocklist (delivery/listings.ts `listedTargets`), out of rotation after a bind failed, suspended for the
// attempt's site, or over their warm-up allowance there (warmup.ts). Chosen per attempt, once its
// site is known (attempt.ts asks through AttemptDeps.source): selection is the engine's one place
// that knows about addresses, and costs a few array reads per attempt.
//
// The state that outlives a process — warm-up schedules, what each address sent per site today,
// why an address left rotation — is the install's `sendingIps` collection, one record per address
// (store/delivery-records.ts SendingIpRec); the engine keeps its own addresses' counts in memory
// and writes them every FLUSH_MS and at stop (addresses belong to nodes, so no other node counts
// them). A crash loses at most FLUSH_MS of counts: an address may go that far over its allowance.
import { networkInterfaces } from 'node:os';
import { isIP } from 'node:net';
import type { Config, SendingIpConfig } from '../config';
import { INSTALL_TEAM, type SendingIpRec } from '../store';
import { allowance, type Allowance, dayOf, hourOf, rampOf, type WarmupRamps, rolled } from './warmup';

export { INSTALL_TEAM };

/** How long an address whose bind failed stays out of rotation before it is tried again (ms). */
export const BIND_RETRY_MS = 10 * 60_000;

/** Connection errors that say the local address cannot be bound (not the remote host's fault). */
export const BIND_FAILURES: ReadonlySet<string> = new Set(['EADDRNOTAVAIL', 'EAFNOSUPPORT']);

/** What an attempt binds to: the address and the EHLO name said from it. */
export interface Source {
  address: string;
  ehlo: string;
}

/** The address chosen, or none: `until` is when the soonest allowance of the pool frees up (mail waits). */
export type Choice = { source: Source } | { source: null; until: number | null; why: 'no-pool' | 'none-usable' | 'allowance' };

/**
 * The addresses of `delivery.ips` that are not on this machine. 127.0.0.0/8 is always local on
 * Linux (the loopback interface answers the whole range, though only 127.0.0.1 is listed), and
 * ::1 is loopback. A node refuses to start while this names any (health/startup.ts).
 */
export function notLocal(ips: readonly { address: string }[], interfaces = networkInterfaces()): string[] {
  const local = new Set<string>();
  for (const list of Object.values(interfaces)) for (const i of list ?? []) local.add(i.address.replace(/%.*$/, '').toLowerCase());
  return ips.map((i) => i.address).filter((a) => !(local.has(a) || (isIP(a) === 4 && a.startsWith('127.')) || a === '::1'));
}

/**
 * Today's allowance of an address at a site (null: not warming); a paused ramp keeps its pause
 * day's. The day after a troubled one its hourly cap is tightened (warmup.ts `allowance`).
 */
export function allowanceOf(ramps: WarmupRamps, r: SendingIpRec, site: string, now: number): Allowance | null {
  const w = r.warmup;
  if ((w.state !== 'warming' && w.state !== 'paused') || !w.ramp || !w.started_at) return null;
  const at = w.state === 'paused' && w.paused_at ? Math.min(now, Date.parse(w.paused_at)) : now;
  return allowance(rampOf(ramps, w.ramp), Date.parse(w.started_at), at, w.held[site] ?? 0, w.slowed?.[site] === dayOf(at));
}

/** Complaints matched back to an address at a site on a UTC day (feedback/sending-ips.ts counts them). */
export function complaintsOn(r: SendingIpRec | undefined, site: string, day: number): number {
  return r?.complaints?.[site]?.[day] ?? 0;
}

/** Today's sending of one address at one site, with its warm-up schedule. */
interface SiteCount {
  day: number;
  sent: number;
  hour: number;
  hourSent: number;
  deferred: number;
  bounced: number;
}

/** The sending IPs of this node, their pools and their state (one per delivery engine). */
export class SendingIps {
  readonly list: readonly SendingIpConfig[];
  private readonly byPool = new Map<string, SendingIpConfig[]>();
  private readonly byAddress = new Map<string, SendingIpConfig>();
  /** Out of rotation until (ms), after a failed bind. */
  private readonly down = new Map<string, { until: number; reason: string; at: number }>();
  /** Suspended for a site until (ms): a reply of the sender's classes came through it. */
  private readonly suspended = new Map<string, number>();
  private listed: ReadonlySet<string> = new Set();
  /** The durable state as last read or written (warm-up schedules), by address. */
  private readonly records = new Map<string, SendingIpRec>();
  /** Counts per address and site, written to the records by `flush`. */
  private readonly counts = new Map<string, Map<string, SiteCount>>();
  private dirty = new Set<string>();

  constructor(
    config: Pick<Config['delivery'], 'ips' | 'warmup'>,
    private readonly random: () => number = Math.random,
  ) {
    this.list = config.ips;
    this.ramps = config.warmup;
    for (const ip of config.ips) {
      this.byAddress.set(ip.address, ip);
      const pool = this.byPool.get(ip.pool) ?? [];
      pool.push(ip);
      this.byPool.set(ip.pool, pool);
    }
  }

  private readonly ramps: WarmupRamps;

  /** Are addresses configured? If not, the kernel chooses and nothing here runs. */
  get enabled(): boolean {
    return this.list.length > 0;
  }

  pools(): string[] {
    return [...this.byPool.keys()];
  }

  /**
   * The addresses listed on a blocklist now: delivery/listings.ts `listedTargets`, read by the engine
   * every 5 s with the warm-up state (engine.ts `syncIps`).
   */
  setListed(listed: ReadonlySet<string>): void {
    this.listed = listed;
  }

  /** The durable records, as read at start (and by GET /ips through the store). */
  load(records: SendingIpRec[]): void {
    for (const r of records) {
      if (!this.byAddress.has(r.id)) continue;
      this.records.set(r.id, r);
      const m = new Map<string, SiteCount>();
      for (const [site, s] of Object.entries(r.sites)) m.set(site, { ...s });
      this.counts.set(r.id, m);
    }
  }

  /** An address's record as it stands (made for an address seen for the first time). */
  record(address: string, now: number): SendingIpRec {
    let r = this.records.get(address);
    if (!r) {
      const ip = this.byAddress.get(address)!;
      const iso = new Date(now).toISOString();
      r = {
        id: address,
        team_id: INSTALL_TEAM,
        created_at: iso,
        pool: ip.pool,
        ehlo: ip.ehlo,
        warmup: ip.warmup ? { state: 'warming', ramp: ip.warmup, started_at: iso, held: {} } : { state: 'off', ramp: null, started_at: null, held: {} },
        out_of_rotation: null,
        sites: {},
      };
      this.records.set(address, r);
      this.dirty.add(address);
    }
    return r;
  }

  /** The configured address (pool, EHLO, weight), if this node has it. */
  config(address: string): SendingIpConfig | undefined {
    return this.byAddress.get(address);
  }

  /** A warm-up change from POST /ips/{ip}/warmup, read back from the store (the record is the API's to write). */
  adopt(r: SendingIpRec): void {
    const had = this.records.get(r.id);
    this.records.set(r.id, had ? { ...r, sites: had.sites } : r);
  }

  /**
   * The address an attempt to `site` binds to, from `pool`: by weight among those usable now. Null
   * with `until` when every address of the pool is over its allowance there (the attempt waits).
   */
  choose(pool: string, site: string, now: number): Choice {
    const ips = this.byPool.get(pool);
    if (!ips?.length) return { source: null, until: null, why: 'no-pool' };
    let total = 0;
    const usable: SendingIpConfig[] = [];
    let soonest: number | null = null;
    let overAllowance = false;
    for (const ip of ips) {
      const down = this.down.get(ip.address);
      if (down && down.until > now) continue;
      if (this.listed.has(ip.address)) continue;
      const susp = this.suspended.get(`${ip.address} ${site}`);
      if (susp && susp > now) continue;
      const left = this.left(ip.address, site, now);
      if (left && left.n <= 0) {
        overAllowance = true;
        if (soonest === null || left.until < soonest) soonest = left.until;
        continue;
      }
      usable.push(ip);
      total += ip.weight;
    }
    if (!usable.length) return { source: null, until: soonest, why: overAllowance ? 'allowance' : 'none-usable' };
    let pick = this.random() * total;
    let chosen = usable[usable.length - 1]!;
    for (const ip of usable) {
      pick -= ip.weight;
      if (pick < 0) {
        chosen = ip;
        break;
      }
    }
    // Counted when chosen, not when its outcome comes: attempts under way at once share the allowance.
    const c = this.count(chosen.address, site, now);
    c.sent++;
    c.hourSent++;
    this.dirty.add(chosen.address);
    return { source: { address: chosen.address, ehlo: chosen.ehlo } };
  }

  /** What the address may still send at the site now (null: no warm-up, no limit), and when more is allowed. */
  left(address: string, site: string, now: number): { n: number; until: number } | null {
    if (!this.records.has(address) && !this.byAddress.get(address)?.warmup) return null;
    // Counted first: a new day's count decides whether the ramp holds, before today's allowance is read.
    const c = this.count(address, site, now);
    const r = this.records.get(address) ?? this.record(address, now);
    const a = this.allowanceOf(r, site, now);
    if (!a) return null;
    const dayLeft = a.daily - c.sent;
    const hourLeft = a.hourly - c.hourSent;
    if (dayLeft <= 0) return { n: 0, until: (dayOf(now) + 1) * 86_400_000 };
    if (hourLeft <= 0) return { n: 0, until: (hourOf(now) + 1) * 3_600_000 };
    return { n: Math.min(dayLeft, hourLeft), until: now };
  }

  /** Today's allowance of an address at a site (null: not warming). */
  allowanceOf(r: SendingIpRec, site: string, now: number): Allowance | null {
    return allowanceOf(this.ramps, r, site, now);
  }

  /** The replies of an attempt from `address` to `site` (its send was counted when it was chosen): deferrals and bounces hold the ramp. */
  outcome(address: string, site: string, now: number, outcome: { deferred: number; bounced: number }): void {
    if (!this.byAddress.has(address)) return;
    const c = this.count(address, site, now);
    c.deferred += outcome.deferred;
    c.bounced += outcome.bounced;
    this.dirty.add(address);
  }

  /** A reply of the sender's classes came through `address`: it leaves rotation for `site` until then. */
  suspend(address: string, site: string, until: number): void {
    if (this.byAddress.has(address)) this.suspended.set(`${address} ${site}`, until);
  }

  /** The bind to `address` failed: out of rotation for BIND_RETRY_MS (an incident on its record). */
  bindFailed(address: string, reason: string, now: number): void {
    this.down.set(address, { until: now + BIND_RETRY_MS, reason, at: now });
    const r = this.record(address, now);
    this.records.set(address, { ...r, out_of_rotation: { at: new Date(now).toISOString(), until: new Date(now + BIND_RETRY_MS).toISOString(), reason } });
    this.dirty.add(address);
  }

  /** The records changed since the last call, with their counts (written by the engine). */
  changed(now: number): SendingIpRec[] {
    const out: SendingIpRec[] = [];
    for (const address of this.dirty) {
      const r = this.record(address, now);
      const sites: SendingIpRec['sites'] = {};
      for (const [site, c] of this.counts.get(address) ?? []) if (c.day === dayOf(now)) sites[site] = { ...c };
      const ip = this.byAddress.get(address)!;
      out.push({ ...r, pool: ip.pool, ehlo: ip.ehlo, sites });
    }
    this.dirty = new Set();
    return out;
  }

  /**
   * The count of an address at a site for now's day and hour; a new day holds the ramp after a
   * troubled one (warmup.ts `rolled`: its deferrals, bounces, and the complaints matched back to the
   * address that day) and tightens its hourly cap for the day.
   */
  private count(address: string, site: string, now: number): SiteCount {
    let m = this.counts.get(address);
    if (!m) {
      m = new Map();
      this.counts.set(address, m);
    }
    let c = m.get(site);
    const day = dayOf(now);
    const hour = hourOf(now);
    if (!c || c.day !== day) {
      if (c) {
        const r = this.records.get(address);
        if (r && r.warmup.state === 'warming' && rolled({ ...c, complained: complaintsOn(r, site, c.day) })) {
          // A troubled day: the site's ramp holds (does not grow) for it, and today is slowed.
          const held = { ...r.warmup.held, [site]: (r.warmup.held[site] ?? 0) + (day - c.day) };
          const slowed = { ...r.warmup.slowed, [site]: day };
          this.records.set(address, { ...r, warmup: { ...r.warmup, held, slowed } });
          this.dirty.add(address);
        }
      }
      c = { day, sent: 0, hour, hourSent: 0, deferred: 0, bounced: 0 };
      m.set(site, c);
    } else if (c.hour !== hour) {
      c.hour = hour;
      c.hourSent = 0;
    }
    return c;
  }
}
