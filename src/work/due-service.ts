// The one face of the back office's durable workers — the delivery engine, the webhook dispatcher,
// the inbound processor, the automation runner (docs/ARCHITECTURE.md §2, "Two threads"): start,
// stop, kick and idle over the shared due-work loop (due-worker.ts). A worker is a subclass that
// says what its work is (the DueWork steps: nextDue, claim, key, attempt, settle) and adds what
// its own start and stop do beside the loop (resume what a crash left, ready a pool, log).
import { DueWorker } from './due-worker';

export interface DueServiceOptions {
  /** Prefix of the loop's log events, e.g. `delivery`. */
  name: string;
  /** Attempts in flight at once. */
  concurrency: number;
  /** How long stop() lets attempts in flight finish when given no time of its own. */
  graceMs: number;
}

export abstract class DueService<C, R> {
  private readonly loop: DueWorker<C, R>;
  private readonly graceMs: number;

  constructor(opts: DueServiceOptions) {
    this.graceMs = opts.graceMs;
    this.loop = new DueWorker(
      opts.name,
      {
        nextDue: () => this.nextDue(),
        claim: (max, busy) => this.claim(max, busy),
        key: (c) => this.key(c),
        attempt: (c) => this.attempt(c),
        settle: (c, r) => this.settle(c, r),
        abandon: () => this.abandon(),
        wakeAt: () => this.wakeAt(),
      },
      opts.concurrency,
    );
  }

  /** Start taking work. */
  start(): void | Promise<void> {
    this.loop.start();
  }

  /**
   * Stop taking work and let attempts in flight finish for up to `graceMs`; after that their
   * outcomes are not recorded — each item is already persisted at its next attempt time, so it is
   * simply retried after a restart. Resolves true when everything finished in time.
   */
  stop(graceMs = this.graceMs): Promise<boolean> {
    return this.loop.stop(graceMs);
  }

  /** New work was committed: look now. */
  kick(): void {
    this.loop.kick();
  }

  /** Resolves once nothing is due now and no attempt is in flight (tests, benchmarks). */
  idle(): Promise<void> {
    return this.loop.idle();
  }

  /** The steps of the work (due-worker.ts DueWork). */
  protected abstract nextDue(): Promise<number | null>;
  protected abstract claim(max: number, busy: ReadonlySet<string>): Promise<C[]>;
  protected abstract key(c: C): string;
  protected abstract attempt(c: C): Promise<R>;
  protected abstract settle(c: C, r: R): Promise<unknown>;

  /** stop() gave up waiting: end what hangs (DueWork.abandon). */
  protected abandon(): void {}

  /** When items passed over for a moment may be taken (DueWork.wakeAt); null: no such wait. */
  protected wakeAt(): number | null {
    return null;
  }
}
