// The claim decisions of the delivery engine (docs/ARCHITECTURE.md §4, step 9), one unit of work
// each: for every due key the scan (scan.ts) looks at — in flight, or no room for its site: passed
// over by key alone — and for every entry it reads — held, email gone, domain no longer able to
// send, or taken: moved to its next attempt time before the attempt (persist before acting).
//
// Shaping (shaping.ts, docs/mail.md §3.1) decides per destination site how many attempts may start
// now. A site with no room for a short rate wait is passed over (the worker wakes when it has
// room: `soonest`); a suspended site's entries, or a long rate wait's, are moved to its end,
// spread out, so that the next claims do not find them again. Held entries (docs/api.md §19.7) are
// out of the due range; entries queued to a held destination since are held when queued
// (QueueTx.add), or here when they escaped that (an attempt in flight at the hold).
import type { Config } from '../config';
import { sendingBlocked } from '../domains/records';
import type { DomainRec, EmailRec, QueueEntry, QueueHold } from '../store';
import { nextAttemptAt, type Random } from '../work/retry';
import { inFlightKey } from './in-flight';
import type { ScanClaim } from './scan';
import type { Room, Shaper } from './shaping';

/** The destinations held, by anyone and per team. */
export interface Holds {
  /** Destinations some team holds: their keys are read, the entry may be its team's. */
  domains: ReadonlySet<string>;
  /** `<team>\0<destination>` of every hold. */
  byTeam: ReadonlySet<string>;
}

export function holdsOf(holds: QueueHold[]): Holds {
  return { domains: new Set(holds.map((h) => h.destination)), byTeam: new Set(holds.map((h) => `${h.team_id}\u0000${h.destination}`)) };
}

/** Does the entry's team hold its destination? */
export function isHeld(holds: Holds, entry: QueueEntry): boolean {
  return holds.byTeam.has(`${entry.team_id}\u0000${entry.domain}`);
}

/** An entry to move out of the due range's way until its site has room (QueueTx.defer). */
export interface Move {
  domain: string;
  id: string;
  from: number;
  to: number;
}

/**
 * One claim's shaping decisions: the room of each site (counted down as attempts are admitted),
 * what it moves, when what it passed over for a short wait may go, and the sites it passed over.
 */
export class ClaimRound implements ScanClaim {
  private readonly room = new Map<string, Room>();
  /** Entries moved per site, for spreading them. */
  private readonly deferred = new Map<string, number>();
  /** The site each domain's keys were counted under by `pass`. */
  private readonly passedAs = new Map<string, string>();
  readonly moves: Move[] = [];
  /** When entries passed over for a short rate wait may go, or null. */
  soonest: number | null = null;
  /**
   * The sites with entries passed over for room: the next claim's scan stops early on them. It
   * starts with the last scan's (the sites passed over then wait still).
   */
  readonly passedSites: Set<string>;

  constructor(
    private readonly shaper: Shaper,
    private readonly now: number,
    /** Attempts in flight per site, counted up as this claim takes more. */
    private readonly perSite: Map<string, number>,
    private readonly busy: ReadonlySet<string>,
    private readonly holds: Holds,
    lastSites?: Iterable<string>,
  ) {
    this.passedSites = new Set(lastSites);
  }

  /** A due key: passed over when in flight or its site has no room. A domain someone holds is read: the entry may be its team's, to be held. */
  pass(domain: string, id: string, due: number): boolean {
    if (this.busy.has(inFlightKey(domain, id))) return true;
    if (this.holds.domains.has(domain)) return false;
    const site = this.shaper.siteOf(domain);
    this.passedAs.set(domain, site);
    if (this.admit(site, domain, id, due)) return false;
    this.passedSites.add(site);
    return true;
  }

  /**
   * Would every key of `domain` from here on be passed over? Its site has no room and moves
   * nothing (not suspended), and no one holds it — so a PostgreSQL claim leaves the rest of a
   * deep backlog to it out of its scan (Queue.due's 'domain').
   */
  full(domain: string): boolean {
    if (this.holds.domains.has(domain)) return false;
    const r = this.roomOf(this.shaper.siteOf(domain));
    return r.n <= 0 && r.until === null;
  }

  noRoom(sites: ReadonlySet<string>): boolean {
    for (const site of sites) if (this.roomOf(site).n > 0) return false;
    return true;
  }

  /**
   * An entry read: the site its attempt goes to — counted against its room, unless its key was
   * counted under that site already — or null when that site has no room (it is passed over). The
   * site an earlier attempt found (by MX) counts from now on, for this entry too.
   */
  admitRead(entry: QueueEntry, due: number): string | null {
    if (entry.site) this.shaper.learn(entry.domain, entry.site);
    const site = this.shaper.siteOf(entry.domain);
    if (this.passedAs.get(entry.domain) === site || this.admit(site, entry.domain, entry.id, due)) return site;
    this.passedSites.add(site);
    return null;
  }

  /** An attempt for `site` starts: it uses the site's rates and counts as in flight there. */
  took(site: string): void {
    this.shaper.take(site, this.now);
    this.perSite.set(site, (this.perSite.get(site) ?? 0) + 1);
  }

  /** May one more attempt for `site` start (counted if so)? If not, a suspended site's entry moves. */
  private admit(site: string, domain: string, id: string, due: number): boolean {
    const r = this.roomOf(site);
    if (r.n > 0) {
      r.n--;
      return true;
    }
    if (r.until !== null) {
      const nth = this.deferred.get(site) ?? 0;
      this.deferred.set(site, nth + 1);
      this.moves.push({ domain, id, from: due, to: this.shaper.spread(site, r.until, this.now, nth) });
    } else {
      // Room comes soon (a short rate wait): the entry waits where it is; the worker wakes then.
      const wait = this.shaper.waitFor(site, this.now);
      if (wait > 0) this.soonest = Math.min(this.soonest ?? Infinity, this.now + wait);
    }
    return false;
  }

  private roomOf(site: string): Room {
    let r = this.room.get(site);
    if (!r) {
      r = this.shaper.room(site, this.now, this.perSite.get(site) ?? 0);
      this.room.set(site, r);
    }
    return r;
  }
}

/** What a claim does with an entry whose email and sending domain it has read. */
export type ClaimVerdict =
  | { kind: 'drop'; reason: string }
  | { kind: 'fail'; email: EmailRec; reason: string }
  | { kind: 'take'; email: EmailRec; domain: DomainRec };

/**
 * An email gone (retention) is dropped from the queue; an email whose domain was deleted or lost
 * its verification fails (every entry of it leaves the queue); else the entry is taken.
 */
export function claimVerdict(email: EmailRec | undefined, domain: DomainRec | undefined): ClaimVerdict {
  if (!email) return { kind: 'drop', reason: 'email no longer stored' };
  const blocked = sendingBlocked(domain);
  if (blocked) return { kind: 'fail', email, reason: blocked };
  return { kind: 'take', email, domain: domain! };
}

/**
 * A taken entry as persisted before its attempt: attempts+1, its first attempt's time, in flight
 * since `now` — due at its next attempt time, when it is retried if the process dies during it.
 */
export function leased(
  entry: QueueEntry,
  now: number,
  retry: Pick<Config['delivery'], 'retry_schedule' | 'retry_window'>,
  random?: Random,
): { next: QueueEntry; due: number } {
  const attempts = entry.attempts + 1;
  const first_attempt_at = entry.first_attempt_at ?? new Date(now).toISOString();
  const due = nextAttemptAt(retry.retry_schedule, attempts, first_attempt_at, retry.retry_window, now, random);
  return { next: { ...entry, attempts, first_attempt_at, attempting: new Date(now).toISOString() }, due };
}
