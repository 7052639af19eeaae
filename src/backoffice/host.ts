// The HTTP thread's handle on the back office (parts.ts), which runs on a Worker thread of its own
// (thread.ts): started and stopped with the service, told of work the HTTP and SMTP side committed
// (the store's `queue` and `outbox` signals), asked whether it is idle (tests) and what it counted
// (GET /metrics). A thread that dies unexpectedly is started again — every entry it had claimed is
// persisted at its next attempt time, and a new start puts interrupted attempts back to work.
import type { Config } from '../config';
import type { Change, Signal } from '../store';
import { log, isQuiet, watchQuiet, writeLine } from '../log';
import type { FromThread, ToThread, Worker as BackOfficeWorker } from './messages';
import { workerEntry } from '../worker-entry';

/** The thread's entry point (scripts/build.ts embeds it in the binary). */
const THREAD_ENTRY = workerEntry(import.meta.url, './thread.ts', 'src/backoffice/thread.ts');

/** How long a stop waits for the thread beyond its grace period before ending it. */
const STOP_MARGIN_MS = 5_000;

export class BackOfficeThread {
  private worker: Worker | null = null;
  private readonly replies = new Map<number, (value: unknown) => void>();
  private seq = 0;
  private stopping = false;
  private restarts = 0;
  private changeListener: ((changes: readonly Change[]) => void) | null = null;

  private readonly unwatch: () => void;

  constructor(private readonly config: Config) {
    this.unwatch = watchQuiet((quiet) => this.send({ t: 'quiet', quiet }));
  }

  /** Start the thread; resolves once its store is open and its workers run. */
  start(): Promise<void> {
    this.stopping = false;
    return new Promise((resolve, reject) => {
      const worker = new Worker(THREAD_ENTRY);
      this.worker = worker;
      let started = false;
      worker.onmessage = (e: MessageEvent<FromThread>) => {
        const m = e.data;
        if (m.t === 'ready') {
          started = true;
          this.restarts = 0;
          resolve();
        } else if (m.t === 'failed') reject(new Error(`the delivery thread did not start: ${m.error}`));
        else if (m.t === 'reply') {
          this.replies.get(m.id)?.(m.value);
          this.replies.delete(m.id);
        } else if (m.t === 'log') writeLine(m.line);
        else if (m.t === 'changes') this.changeListener?.(m.changes);
        else if (m.t === 'stopped') worker.terminate();
      };
      worker.onerror = (e) => log.error('backoffice.error', { error: e.message });
      worker.addEventListener('close', () => {
        if (this.worker === worker) this.worker = null;
        if (!started) return reject(new Error('the delivery thread exited while starting'));
        if (!this.stopping) this.restart();
      });
      this.send({ t: 'init', config: this.config, quiet: isQuiet() });
    });
  }

  private restart(): void {
    const wait = Math.min(60_000, 1_000 * 2 ** this.restarts++);
    log.error('backoffice.exited', { restart_in_ms: wait });
    setTimeout(() => {
      if (!this.stopping) this.start().catch((e) => log.error('backoffice.restart_failed', { error: String(e) }));
    }, wait).unref();
  }

  private send(m: ToThread): void {
    this.worker?.postMessage(m);
  }

  private ask<T>(m: (id: number) => ToThread): Promise<T> {
    const id = ++this.seq;
    return new Promise((resolve) => {
      this.replies.set(id, resolve as (v: unknown) => void);
      this.send(m(id));
    });
  }

  /** Be told of the changes the thread commits (when its store does not carry them to this thread's). */
  onChange(listener: (changes: readonly Change[]) => void): void {
    this.changeListener = listener;
  }

  /** Work of this kind was committed on this thread. */
  kick(signal: Signal): void {
    this.send({ t: 'kick', signal });
  }

  /** Resolves once nothing of `what` is due now and no attempt is in flight (tests). */
  idle(what: BackOfficeWorker): Promise<void> {
    return this.ask((id) => ({ t: 'idle', id, what }));
  }

  /** Events the thread recorded, by type. */
  async counts(): Promise<Map<string, number>> {
    if (!this.worker) return new Map();
    return new Map(await this.ask<[string, number][]>((id) => ({ t: 'counts', id })));
  }

  /** Stop the thread: attempts in flight get `graceMs`, then it closes its store and ends. */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopping = true;
    this.unwatch();
    const worker = this.worker;
    if (!worker) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        log.warn('backoffice.stop_timeout', { grace_ms: graceMs });
        worker.terminate();
        resolve();
      }, graceMs + STOP_MARGIN_MS);
      worker.addEventListener('close', () => {
        clearTimeout(timer);
        resolve();
      });
      this.send({ t: 'stop', graceMs });
    });
    this.worker = null;
    for (const reply of this.replies.values()) reply(null);
    this.replies.clear();
  }
}
