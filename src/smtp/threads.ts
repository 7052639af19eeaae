// Listener threads (docs/ARCHITECTURE.md §2): each SMTP port is served by the main thread's
// listener and by one listener on each of these Worker threads (thread.ts), all bound with
// SO_REUSEPORT so the kernel spreads new connections over them. A thread parses its sessions,
// looks recipients up and commits inbound mail to the spool on its own handle on the store (LMDB
// shares one environment between a process's threads; its commit is flushed before the 250, as the
// main thread's). What must stay one for the whole service is asked of the main thread: AUTH (the
// failure lockout) and submission (rate limit, idempotency, the sending core's group commit). The
// session count and the bytes held in memory are cells of shared memory (limits.ts).
import type { Config } from '../config';
import type { Change, Signal } from '../store';
import { log, isQuiet, writeLine } from '../log';
import { workerEntry } from '../worker-entry';
import { replyFor } from './replies';
import { dataFailure, type SessionUser, type SmtpDesk } from './server';
import { threadOpenCell, type ConnectionGate } from './limits';
import type { ListenerMode } from './index';

const THREAD_ENTRY = workerEntry(import.meta.url, './thread.ts', 'src/smtp/thread.ts');

/** An SMTP reply as it crosses threads. */
export interface ReplyData {
  code: number;
  enhanced: string;
  text: string;
}

export type ToListenerThread =
  | {
      t: 'init';
      config: Config;
      quiet: boolean;
      cells: Int32Array;
      thread: number;
      cert: { key: string; cert: string };
      listeners: { mode: ListenerMode; port: number }[];
    }
  | { t: 'answer'; id: number; ok: true; value: unknown }
  | { t: 'answer'; id: number; ok: false; reply: ReplyData }
  | { t: 'certificate'; key: string; cert: string }
  | { t: 'ping'; id: number }
  | { t: 'stop' };

export type FromListenerThread =
  | { t: 'ready'; unbound: { mode: ListenerMode; port: number; error: string }[] }
  | { t: 'failed'; error: string }
  | { t: 'log'; line: string }
  | { t: 'kick'; signal: Signal }
  | { t: 'changes'; changes: readonly Change[] }
  | { t: 'login'; id: number; ip: string; session: string; username?: string | null; password?: string | null }
  | { t: 'closed'; session: string }
  | { t: 'submit'; id: number; session: string; user: SessionUser; recipients: string[]; raw: Uint8Array }
  | { t: 'refused'; ip?: string }
  | { t: 'pong'; id: number }
  | { t: 'stopped' };

/**
 * What listener threads need of the service beyond SmtpDeps: the whole configuration (a thread
 * opens the store with it), and where its commits are told — the back office (woken by a spool
 * entry) and the live feed.
 */
export interface ThreadWake {
  config: Config;
  backOffice: { kick(signal: Signal): void };
  live: { publish(changes: readonly Change[]): void };
}

/** How long a stop waits for a thread beyond the sessions' close timeout before ending it. */
const STOP_MARGIN_MS = 20_000;

export class ListenerThread {
  private readonly worker: Worker;
  private pings = new Map<number, () => void>();
  private seq = 0;
  private closed: Promise<void>;
  private stopping = false;

  private constructor(
    private readonly index: number,
    private readonly desk: SmtpDesk,
    private readonly wake: ThreadWake,
    cells: Int32Array,
    gate: ConnectionGate,
  ) {
    this.worker = new Worker(THREAD_ENTRY);
    this.closed = new Promise((resolve) => this.worker.addEventListener('close', () => resolve()));
    // A thread that dies is not started again (the other threads serve its ports); the sessions it
    // had open are given back to smtp.max_connections.
    void this.closed.then(() => {
      if (this.stopping) return;
      const open = Atomics.exchange(cells, threadOpenCell(cells, index), 0);
      gate.forget(open);
      log.error('smtp.thread_exited', { thread: index, sessions: open });
    });
    this.worker.onerror = (e) => log.error('smtp.thread_error', { thread: index, error: e.message });
  }

  /** A thread serving `listeners` (already bound by the main thread); null when it could not start (logged). */
  static async start(
    index: number,
    init: { config: Config; cells: Int32Array; cert: { key: string; cert: string }; listeners: { mode: ListenerMode; port: number }[] },
    desk: SmtpDesk,
    wake: ThreadWake,
    gate: ConnectionGate,
  ): Promise<ListenerThread | null> {
    const thread = new ListenerThread(index, desk, wake, init.cells, gate);
    const started = await new Promise<boolean>((resolve) => {
      thread.worker.onmessage = (e: MessageEvent<FromListenerThread>) => {
        const m = e.data;
        if (m.t === 'ready') {
          for (const u of m.unbound) log.warn('smtp.thread_bind_failed', { thread: index, ...u });
          resolve(true);
        } else if (m.t === 'failed') {
          log.error('smtp.thread_failed', { thread: index, error: m.error });
          resolve(false);
        } else thread.hear(m);
      };
      void thread.closed.then(() => resolve(false));
      thread.send({ t: 'init', quiet: isQuiet(), thread: index, ...init });
    });
    if (started) return thread;
    thread.stopping = true;
    thread.worker.terminate();
    return null;
  }

  private send(m: ToListenerThread): void {
    this.worker.postMessage(m);
  }

  private hear(m: FromListenerThread): void {
    if (m.t === 'log') writeLine(m.line);
    else if (m.t === 'kick') this.wake.backOffice.kick(m.signal);
    else if (m.t === 'changes') this.wake.live.publish(m.changes);
    else if (m.t === 'closed') this.desk.closed(m.session);
    else if (m.t === 'refused') this.desk.refused(m.ip);
    else if (m.t === 'stopped') this.worker.terminate();
    else if (m.t === 'login') this.answer(m.id, this.desk.login(m.ip, m.session, m.username, m.password));
    else if (m.t === 'pong') {
      this.pings.get(m.id)?.();
      this.pings.delete(m.id);
    } else if (m.t === 'submit') {
      const raw = Buffer.from(m.raw.buffer, m.raw.byteOffset, m.raw.byteLength);
      const submitted = this.desk.submit(m.user, m.recipients, raw, m.session).catch((e) => {
        throw dataFailure(e, m.session);
      });
      this.answer(m.id, submitted);
    }
  }

  private answer(id: number, work: Promise<unknown>): void {
    work.then(
      (value) => this.send({ t: 'answer', id, ok: true, value }),
      (e) => {
        const r = replyFor(e);
        this.send({ t: 'answer', id, ok: false, reply: { code: r.responseCode, enhanced: r.enhanced, text: r.text } });
      },
    );
  }

  useCertificate(cert: { key: string; cert: string }): void {
    this.send({ t: 'certificate', key: cert.key, cert: cert.cert });
  }

  /** Resolves once the thread has handled every message sent before (tests: a certificate swap has reached it). */
  settled(): Promise<void> {
    const id = ++this.seq;
    return new Promise((resolve) => {
      this.pings.set(id, resolve);
      this.send({ t: 'ping', id });
    });
  }

  /** Close the thread's listeners (sessions get smtp-server's close timeout), its store, and end it. */
  async stop(): Promise<void> {
    this.stopping = true;
    const timer = setTimeout(() => {
      log.warn('smtp.thread_stop_timeout', { thread: this.index });
      this.worker.terminate();
    }, STOP_MARGIN_MS);
    this.send({ t: 'stop' });
    await this.closed;
    clearTimeout(timer);
    for (const resolve of this.pings.values()) resolve();
    this.pings.clear();
  }
}
