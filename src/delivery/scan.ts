// The scan of a claim (docs/ARCHITECTURE.md §4, step 9): which due keys of the queue a claim looks
// at. The queue is keyed [due, domain, entry]; the claim (claim.ts ClaimRound) says of each key
// whether it is passed over without being read (in flight, or its site has no room).
//
// A claim scans from the start at most every FULL_SCAN_MS. In between, it goes on from what the
// last scan saw (ScanMemory): first the keys up to then — there, what waits is the entries that
// scan passed over for room (the rest were taken and moved to their next attempt time), so the
// scan stops once none of their sites has room left — then only what became due since (`after`).
// With one busy destination thousands of entries deep, a scan from the start per freed slot cost
// more than the attempt itself (Postfix's queue manager likewise keeps a per-destination queue in
// memory instead of rescanning). A backlog deeper than QUEUE_SCAN_LIMIT is gone through in steps
// of that many keys, one claim each (`resume`), before the next scan from the start.
import { QUEUE_SCAN_LIMIT, type Queue, type QueueEntry } from '../store';

/**
 * A claim scans the due entries from the start at least this often. A scan from the start also
 * finds what no other scan could: an entry committed by another thread with a due time before the
 * last scan's, or a destination whose site changed when its MX was learned.
 */
export const FULL_SCAN_MS = 500;

/** A key of the queue's due order. */
export interface QueueKey {
  due: number;
  domain: string;
  id: string;
}

/**
 * What the last claim's scan saw, when it saw all of what was due, or all up to the scan limit:
 * up to when, the sites of the entries it passed over for room, when a claim last scanned from
 * the start — and, for a scan the limit cut short, the last key it looked at.
 */
export interface ScanMemory {
  upTo: number;
  fullAt: number;
  /** The claim's own set: a site passed over after its entry was read (claim.ts) joins it too. */
  sites: ReadonlySet<string>;
  resume?: QueueKey;
}

/** What a scan asks of its claim. */
export interface ScanClaim {
  /** Pass this key over without reading its entry (true), or read it (false). */
  pass(domain: string, id: string, due: number): boolean;
  /** Have none of these sites room for one more attempt? */
  noRoom(sites: ReadonlySet<string>): boolean;
  /** Would every later key of this domain be passed over too (its site has no room)? */
  full?(domain: string): boolean;
}

export interface Found {
  due: number;
  entry: QueueEntry;
}

/** How a scan ended: it saw everything due (`whole`), or the scan limit stopped it at `resume`. */
export interface ScanEnd {
  whole: boolean;
  resume: QueueKey | null;
}

/** The memory a claim at `now` goes on from, or null: it scans from the start. */
export function goOnFrom(last: ScanMemory | null, now: number, exclusive: boolean): ScanMemory | null {
  // Another node's claims change the queue beside ours (cluster mode): always from the start.
  if (!exclusive || !last) return null;
  return now - last.fullAt < FULL_SCAN_MS || last.resume ? last : null;
}

/**
 * How a scan that found `found` of the `max` entries it could take, having looked at `looked` keys
 * (the last of them `lastKey`), ended. A scan the slots cut short saw only part of what is due; one
 * the scan limit cut short resumes after its last key.
 */
export function scanEnd(found: number, max: number, looked: number, lastKey: QueueKey | null): ScanEnd {
  const short = found < max;
  return { whole: short && looked < QUEUE_SCAN_LIMIT, resume: short && looked >= QUEUE_SCAN_LIMIT ? lastKey : null };
}

/**
 * What the next claim remembers of this scan: all of it seen up to `now`; or, after a scan the
 * limit cut short, everything up to the resume key's due time (keys before it with a due time of
 * their own were all looked at), so the next claim goes on from there and a backlog deeper than
 * the limit for a site with no room never hides what is due after it; else nothing.
 */
export function memoryAfter(end: ScanEnd, now: number, last: ScanMemory | null, sites: ReadonlySet<string>): ScanMemory | null {
  const fullAt = last?.fullAt ?? now;
  if (end.whole) return { upTo: now, fullAt, sites };
  if (end.resume) return { upTo: end.resume.due - 1, fullAt, sites, resume: end.resume };
  return null;
}

/** Up to `max` entries due at `now` that `claim` reads, and how the scan ended (memoryAfter). */
export function scanDue(
  queue: Pick<Queue, 'due'>,
  now: number,
  max: number,
  last: ScanMemory | null,
  claim: ScanClaim,
): Promise<{ found: Found[]; end: ScanEnd }> {
  return last ? scanOn(queue, now, max, last, claim) : scanFromStart(queue, now, max, claim);
}

/** Keys looked at, as the queue counts them toward its limit, and the last one. */
class Looked {
  n = 0;
  last: QueueKey | null = null;

  see(domain: string, id: string, due: number): void {
    this.n++;
    this.last = { due, domain, id };
  }
}

async function scanFromStart(queue: Pick<Queue, 'due'>, now: number, max: number, claim: ScanClaim) {
  const looked = new Looked();
  const found = await queue.due(now, max, (domain, id, due) => {
    looked.see(domain, id, due);
    if (!claim.pass(domain, id, due)) return false;
    // The rest of the domain's keys may be left unread (a deep backlog to a site with no room).
    return claim.full?.(domain) ? 'domain' : true;
  });
  return { found, end: scanEnd(found.length, max, looked.n, looked.last) };
}

async function scanOn(queue: Pick<Queue, 'due'>, now: number, max: number, last: ScanMemory, claim: ScanClaim) {
  // The head: up to the last scan, until the sites it passed over have no room left.
  let looked = new Looked();
  const head = claim.noRoom(last.sites)
    ? []
    : await queue.due(Math.min(now, last.upTo), max, (domain, id, due) => {
        looked.see(domain, id, due);
        return claim.pass(domain, id, due) ? (claim.noRoom(last.sites) ? 'stop' : true) : false;
      });
  if (!scanEnd(head.length, max, looked.n, null).whole) return { found: head, end: { whole: false, resume: null } };
  // The tail: what became due since. After a scan the limit cut short, it goes on from its last
  // key: the keys of that due time up to it were looked at (passed over for room) and wait for
  // the next scan from the start; they count as looked at, as the queue counts them.
  looked = new Looked();
  const r = last.resume;
  const tail = await queue.due(
    now,
    max - head.length,
    (domain, id, due) => {
      if (r && seenBefore(r, domain, id, due)) {
        looked.n++;
        return true;
      }
      looked.see(domain, id, due);
      return claim.pass(domain, id, due);
    },
    r ? r.due - 1 : last.upTo,
  );
  return { found: [...head, ...tail], end: scanEnd(tail.length, max - head.length, looked.n, looked.last) };
}

/** Is the key at or before `resume`, at its due time? */
export function seenBefore(resume: QueueKey, domain: string, id: string, due: number): boolean {
  return due === resume.due && (domain < resume.domain || (domain === resume.domain && id <= resume.id));
}
