// Connection reuse per destination (docs/mail.md §3): sessions to one host:port (with one TLS/AUTH
// set-up) are kept open for a few seconds after use and handed to the next message for that host.
// Connections are counted per *group* — the destination's site when shaping is on (shaping.ts: one
// site may have several MX hosts), else the host itself — at most the lease's `maxConnections` at a
// time: receiving MTAs throttle or refuse senders that open many parallel connections. Waiters are
// served first come, first served.
import { SmtpSession, ConnectError, type Target } from './smtp-client';

export interface PoolOptions {
  /** Sessions open at once to one destination (connecting, busy or idle), when a lease names none. */
  perDestination: number;
  /** Close a session unused for this long (ms). */
  idleMs: number;
  /** Transactions per session before it is closed and replaced, when a lease names none. */
  maxMessages: number;
}

export const DEFAULT_POOL: PoolOptions = { perDestination: 20, idleMs: 5_000, maxMessages: 100 };

/** What a session is counted against, and how long it may serve (a site's limits, shaping.ts). */
export interface Lease {
  group: string;
  maxConnections: number;
  maxMessages: number;
}

interface Idle {
  session: SmtpSession;
  timer: ReturnType<typeof setTimeout>;
}

interface Waiter {
  key: string;
  resolve: (s: SmtpSession | null) => void;
  reject: (e: unknown) => void;
}

interface Group {
  /** Sessions counted against the limit: connecting, leased or idle. */
  open: number;
  waiters: Waiter[];
}

const closing = () => new ConnectError({ code: 421, text: '421 4.3.2 delivery is shutting down', local: true });

export class ConnectionPool {
  private readonly idle = new Map<string, Idle[]>();
  private readonly groups = new Map<string, Group>();
  /** The group and message limit each session was opened under. */
  private readonly leases = new WeakMap<SmtpSession, Lease>();
  private readonly leased = new Set<SmtpSession>();
  private closed = false;

  constructor(private readonly opts: PoolOptions = DEFAULT_POOL) {}

  /** Connections allowed to one destination at a time, when a lease names none. */
  get perDestination(): number {
    return this.opts.perDestination;
  }

  /** The pool key: one pool per host:port, connection set-up and local address (a sending IP). */
  static key(t: Target): string {
    return `${t.host}|${t.port}|${t.security}|${t.auth?.user ?? ''}|${t.verify ? (t.verify.enforce ? 've' : 'vt') : ''}${t.localAddress ? `|${t.localAddress}` : ''}`;
  }

  /** A session to `target`: an idle one, a new one, or the next one freed. Throws ConnectError. */
  async acquire(target: Target, lease?: Lease): Promise<SmtpSession> {
    if (this.closed) throw closing();
    const key = ConnectionPool.key(target);
    const l = lease ?? { group: key, maxConnections: this.opts.perDestination, maxMessages: this.opts.maxMessages };
    for (;;) {
      const g = this.group(l.group);
      const idle = this.idle.get(key)?.pop();
      if (idle) {
        clearTimeout(idle.timer);
        if (idle.session.alive) return this.lease(idle.session, l);
        this.slotFreed(this.leases.get(idle.session)?.group ?? l.group);
        continue;
      }
      if (g.open < l.maxConnections) {
        g.open++;
        try {
          const session = await SmtpSession.open(target);
          this.leases.set(session, l);
          return this.lease(session, l);
        } catch (e) {
          this.slotFreed(l.group);
          throw e;
        }
      }
      // At the limit: wait for a session to be released (null = a slot freed, connect ourselves).
      const handed = await new Promise<SmtpSession | null>((resolve, reject) => g.waiters.push({ key, resolve, reject }));
      if (handed) return this.lease(handed, l);
    }
  }

  /** Give a session back after a transaction; `reusable` false closes it. */
  release(session: SmtpSession, reusable: boolean): void {
    this.leased.delete(session);
    const key = ConnectionPool.key(session.target);
    const lease = this.leases.get(session) ?? { group: key, maxConnections: this.opts.perDestination, maxMessages: this.opts.maxMessages };
    const g = this.group(lease.group);
    const mine = g.waiters.findIndex((w) => w.key === key);
    // Kept open only for this host: if the group's other hosts wait for room, the slot goes to them.
    const othersWait = mine < 0 && g.waiters.length > 0;
    if (this.closed || !reusable || !session.alive || session.messages >= lease.maxMessages || othersWait) {
      if (session.alive) session.quit();
      this.slotFreed(lease.group);
      return;
    }
    if (mine >= 0) {
      g.waiters.splice(mine, 1)[0]!.resolve(session);
      return;
    }
    const timer = setTimeout(() => {
      const list = this.idle.get(key) ?? [];
      const i = list.findIndex((x) => x.session === session);
      if (i < 0) return;
      list.splice(i, 1);
      if (!list.length) this.idle.delete(key);
      session.quit();
      this.slotFreed(lease.group);
    }, this.opts.idleMs);
    timer.unref?.();
    const list = this.idle.get(key) ?? [];
    list.push({ session, timer });
    this.idle.set(key, list);
  }

  /** QUIT idle sessions and refuse new work; `force` also drops sessions in use. */
  close(force = false): void {
    this.closed = true;
    for (const list of this.idle.values())
      for (const { session, timer } of list) {
        clearTimeout(timer);
        session.quit();
      }
    this.idle.clear();
    for (const g of this.groups.values()) {
      for (const w of g.waiters) w.reject(closing());
      g.waiters = [];
    }
    this.groups.clear();
    if (force) for (const s of this.leased) s.close();
  }

  /** Sessions open now, per group (tests, bench). */
  stats(): Record<string, { open: number; waiting: number }> {
    const out: Record<string, { open: number; waiting: number }> = {};
    for (const [k, g] of this.groups) out[k] = { open: g.open, waiting: g.waiters.length };
    return out;
  }

  private lease(s: SmtpSession, l: Lease): SmtpSession {
    if (!this.leases.has(s)) this.leases.set(s, l);
    this.leased.add(s);
    return s;
  }

  private group(name: string): Group {
    let g = this.groups.get(name);
    if (!g) {
      g = { open: 0, waiters: [] };
      this.groups.set(name, g);
    }
    return g;
  }

  /** A session closed: let the next waiter open one, forget an unused group. */
  private slotFreed(name: string): void {
    const g = this.groups.get(name);
    if (!g) return;
    g.open = Math.max(0, g.open - 1);
    const waiter = g.waiters.shift();
    if (waiter) {
      waiter.resolve(null);
      return;
    }
    if (g.open === 0) this.groups.delete(name);
  }
}
