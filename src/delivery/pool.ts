// Connection reuse per destination (docs/mail.md §3): sessions to one host:port (with one TLS/AUTH set-up)
// are kept open for a few seconds after use and handed to the next message for that host, at most
// `perDestination` at a time — receiving MTAs throttle or refuse senders that open many parallel
// connections. Waiters are served first come, first served.
import { SmtpSession, ConnectError, type Target } from './smtp-client';

export interface PoolOptions {
  /** Sessions open at once to one destination (connecting, busy or idle). */
  perDestination: number;
  /** Close a session unused for this long (ms). */
  idleMs: number;
  /** Transactions per session before it is closed and replaced. */
  maxMessages: number;
}

export const DEFAULT_POOL: PoolOptions = { perDestination: 20, idleMs: 5_000, maxMessages: 100 };

interface Idle {
  session: SmtpSession;
  timer: ReturnType<typeof setTimeout>;
}

interface Dest {
  /** Sessions counted against the limit: connecting, leased or idle. */
  open: number;
  idle: Idle[];
  waiters: { resolve: (s: SmtpSession | null) => void; reject: (e: unknown) => void }[];
}

export class ConnectionPool {
  private readonly dests = new Map<string, Dest>();
  private readonly leased = new Set<SmtpSession>();
  private closed = false;

  constructor(private readonly opts: PoolOptions = DEFAULT_POOL) {}

  /** Connections allowed to one destination at a time. */
  get perDestination(): number {
    return this.opts.perDestination;
  }

  /** The pool key: one pool per host:port and connection set-up. */
  static key(t: Target): string {
    return `${t.host}|${t.port}|${t.security}|${t.auth?.user ?? ''}`;
  }

  /** A session to `target`: an idle one, a new one, or the next one freed. Throws ConnectError. */
  async acquire(target: Target): Promise<SmtpSession> {
    if (this.closed) throw new ConnectError({ code: 421, text: '421 4.3.2 delivery is shutting down' });
    const key = ConnectionPool.key(target);
    for (;;) {
      const d = this.dest(key);
      const idle = d.idle.pop();
      if (idle) {
        clearTimeout(idle.timer);
        if (idle.session.alive) return this.lease(idle.session);
        d.open--;
        continue;
      }
      if (d.open < this.opts.perDestination) {
        d.open++;
        try {
          return this.lease(await SmtpSession.open(target));
        } catch (e) {
          this.slotFreed(key, d);
          throw e;
        }
      }
      // At the limit: wait for a session to be released (null = a slot freed, connect ourselves).
      const handed = await new Promise<SmtpSession | null>((resolve, reject) => d.waiters.push({ resolve, reject }));
      if (handed) return this.lease(handed);
    }
  }

  /** Give a session back after a transaction; `reusable` false closes it. */
  release(session: SmtpSession, reusable: boolean): void {
    this.leased.delete(session);
    const key = ConnectionPool.key(session.target);
    const d = this.dest(key);
    if (this.closed || !reusable || !session.alive || session.messages >= this.opts.maxMessages) {
      if (session.alive) session.quit();
      this.slotFreed(key, d);
      return;
    }
    const waiter = d.waiters.shift();
    if (waiter) return waiter.resolve(session);
    const timer = setTimeout(() => {
      const i = d.idle.findIndex((x) => x.session === session);
      if (i < 0) return;
      d.idle.splice(i, 1);
      session.quit();
      this.slotFreed(key, d);
    }, this.opts.idleMs);
    timer.unref?.();
    d.idle.push({ session, timer });
  }

  /** QUIT idle sessions and refuse new work; `force` also drops sessions in use. */
  close(force = false): void {
    this.closed = true;
    for (const [key, d] of this.dests) {
      for (const { session, timer } of d.idle) {
        clearTimeout(timer);
        session.quit();
      }
      d.idle = [];
      for (const w of d.waiters) w.reject(new ConnectError({ code: 421, text: '421 4.3.2 delivery is shutting down' }));
      d.waiters = [];
      this.dests.delete(key);
    }
    if (force) for (const s of this.leased) s.close();
  }

  /** Sessions open now, per destination key (tests, bench). */
  stats(): Record<string, { open: number; idle: number; waiting: number }> {
    const out: Record<string, { open: number; idle: number; waiting: number }> = {};
    for (const [k, d] of this.dests) out[k] = { open: d.open, idle: d.idle.length, waiting: d.waiters.length };
    return out;
  }

  private lease(s: SmtpSession): SmtpSession {
    this.leased.add(s);
    return s;
  }

  private dest(key: string): Dest {
    let d = this.dests.get(key);
    if (!d) {
      d = { open: 0, idle: [], waiters: [] };
      this.dests.set(key, d);
    }
    return d;
  }

  /** A session closed: let the next waiter open one, forget an unused destination. */
  private slotFreed(key: string, d: Dest): void {
    d.open = Math.max(0, d.open - 1);
    const waiter = d.waiters.shift();
    if (waiter) return waiter.resolve(null);
    if (d.open === 0 && d.idle.length === 0 && this.dests.get(key) === d) this.dests.delete(key);
  }
}
