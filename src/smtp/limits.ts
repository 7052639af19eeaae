// What keeps one client from taking the SMTP service from the others (docs/mail.md §4, "Limits
// that protect the other clients"):
// - a cap on open sessions across every listener (`smtp.max_connections`): the session past it gets
//   `421 4.7.0` at once and is closed, never a silent wait for a banner;
// - AUTH failure limits per client address, in the spirit of Postfix's smtpd_error_sleep_time and
//   anvil: each failure past the third answers after a growing delay, five within 15 minutes lock
//   the address out of AUTH for a minute (doubling with every further failure, up to an hour), and a
//   connection that keeps trying is closed. Only AUTH is refused: inbound mail from the address is
//   still received, and other addresses are never slowed;
// - a cap on message bytes held in memory across every session (`MessageBudget`): past it a
//   message is refused with a temporary 452 4.3.1 and the sender retries later.
import { FailureLimiter, clientKey } from '../limits/failures';
import { log } from '../log';
import { SmtpReply } from './replies';

/** A refused session is logged at most once per this long, with how many were refused meanwhile. */
const REFUSAL_LOG_MS = 10_000;

/**
 * Where the counts every listener shares live: an Int32Array over a SharedArrayBuffer, so that the
 * listener threads (threads.ts) count in the same cells with Atomics. Cell 0: open sessions; cell 1:
 * message bytes held (≤ MAX_BUFFERED_BYTES, 512 MB, fits); then per thread the sessions it
 * accepted (tests: that every thread serves), then per thread its sessions open now (taken back
 * from cell 0 should the thread die).
 */
export function sharedCells(threads: number): Int32Array {
  return new Int32Array(new SharedArrayBuffer(4 * (2 + 2 * threads)));
}
export const OPEN_CELL = 0;
export const HELD_CELL = 1;
/** The cell counting the sessions thread `thread` accepted. */
export const acceptedCell = (thread: number) => 2 + thread;
/** The cell counting the sessions open on thread `thread`. */
export const threadOpenCell = (cells: Int32Array, thread: number) => 2 + (cells.length - 2) / 2 + thread;

/** Open sessions across the listeners (of every thread, when the cells are shared). */
export class ConnectionGate {
  private refusedSince = 0;
  private refusedCount = 0;

  constructor(
    readonly max: number,
    private readonly now: () => number = Date.now,
    private readonly cells: Int32Array = sharedCells(1),
  ) {}

  /** Take a place for a new session; false when every place is taken. */
  enter(): boolean {
    for (;;) {
      const open = Atomics.load(this.cells, OPEN_CELL);
      if (open >= this.max) return false;
      if (Atomics.compareExchange(this.cells, OPEN_CELL, open, open + 1) === open) return true;
    }
  }

  leave(): void {
    for (;;) {
      const open = Atomics.load(this.cells, OPEN_CELL);
      if (open <= 0 || Atomics.compareExchange(this.cells, OPEN_CELL, open, open - 1) === open) return;
    }
  }

  /** Sessions that ended without leaving (a listener thread that died): their places given back. */
  forget(sessions: number): void {
    for (let i = 0; i < sessions; i++) this.leave();
  }

  get size(): number {
    return Atomics.load(this.cells, OPEN_CELL);
  }

  /**
   * Count a session refused for want of a place: the number refused since the last report when a
   * report is due (one log line per 10 s however hard the door is knocked on), else null.
   */
  refused(): number | null {
    this.refusedCount++;
    const now = this.now();
    if (now - this.refusedSince < REFUSAL_LOG_MS) return null;
    const count = this.refusedCount;
    this.refusedSince = now;
    this.refusedCount = 0;
    return count;
  }
}

/**
 * Message bytes held in memory at once, over every session of every listener: each connection may
 * send 40 MB, so without a shared cap a few hundred slow senders could exhaust memory.
 */
export class MessageBudget {
  constructor(
    readonly max: number,
    private readonly cells: Int32Array = sharedCells(1),
  ) {}

  /** Hold `bytes` more; false (nothing held) when they do not fit. */
  take(bytes: number): boolean {
    for (;;) {
      const held = Atomics.load(this.cells, HELD_CELL);
      if (held + bytes > this.max) return false;
      if (Atomics.compareExchange(this.cells, HELD_CELL, held, held + bytes) === held) return true;
    }
  }

  give(bytes: number): void {
    Atomics.sub(this.cells, HELD_CELL, bytes);
  }

  /** Bytes held right now (tests: nothing stays counted after a session is gone). */
  get size(): number {
    return Atomics.load(this.cells, HELD_CELL);
  }
}

/** Failures from one address before AUTH is locked for it, and the window they count in. */
export const AUTH_POLICY = { threshold: 5, window: 15 * 60_000, lockout: 60_000, maxLockout: 3_600_000 };
/** Failures from one address answered at once; each one past these waits a second longer. */
const FREE_FAILURES = 3;
const MAX_DELAY_MS = 5_000;
/** AUTH commands one connection may fail (or have refused) before it is closed. */
export const AUTH_ATTEMPTS_PER_CONNECTION = 3;

export type AuthVerdict =
  /** Go on and check the credentials. */
  | { ok: true }
  /** Refused without a check: the address is locked out, or the connection has tried too often. */
  | { ok: false; reply: SmtpReply };

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

export class AuthGuard {
  private readonly limiter = new FailureLimiter(AUTH_POLICY);
  /** AUTH failures and refusals per open session (dropped when it closes). */
  private readonly perSession = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Before the credentials are looked at. */
  admit(ip: string, session: string): AuthVerdict {
    const locked = this.limiter.lockedFor([clientKey(ip)], this.now());
    if (!locked) return { ok: true };
    const tries = this.bump(session);
    log.warn('smtp.auth_refused', { ip, session, locked_ms: locked, attempts: tries });
    if (tries >= AUTH_ATTEMPTS_PER_CONNECTION) return { ok: false, reply: closing() };
    // RFC 4954 §6: 454 4.7.0 is the temporary refusal of an authentication.
    return { ok: false, reply: new SmtpReply(454, '4.7.0', `Too many authentication failures from ${ip}; try again in ${seconds(locked)} seconds`) };
  }

  /**
   * After the credentials failed: how long to wait before answering, and the answer — `refused`
   * as it is, or a 421 that closes the connection once the address is locked or the connection has
   * tried too often.
   */
  failed(ip: string, session: string, refused: SmtpReply): { delay: number; reply: SmtpReply } {
    const key = clientKey(ip);
    const locked = this.limiter.fail([key], this.now());
    const failures = this.limiter.failures(key);
    const tries = this.bump(session);
    log.warn('smtp.auth_failed', { ip, session, failures, locked_ms: locked });
    const delay = Math.min(MAX_DELAY_MS, Math.max(0, failures - FREE_FAILURES) * 1000);
    return { delay, reply: locked || tries >= AUTH_ATTEMPTS_PER_CONNECTION ? closing() : refused };
  }

  closed(session: string): void {
    this.perSession.delete(session);
  }

  private bump(session: string): number {
    const n = (this.perSession.get(session) ?? 0) + 1;
    this.perSession.set(session, n);
    return n;
  }
}

/** 421 makes smtp-server close the connection after the reply (RFC 5321 §3.8). */
const closing = () => new SmtpReply(421, '4.7.0', 'Too many authentication failures; closing connection');
