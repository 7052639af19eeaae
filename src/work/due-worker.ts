// The loop shared by the durable workers (email delivery, webhook dispatch): take due items from a
// persistent due-index, each already moved to its next attempt time by `claim` ("persist before
// acting", docs/ARCHITECTURE.md: a crash mid-attempt means a retry), run their attempts
// concurrently, then record each outcome. It sleeps until the next item is due, or until kick()
// (new work committed) wakes it.
import { log } from '../log';

export interface DueWork<C, R> {
  /** Due time (ms) of the earliest item, or null when there is none. */
  nextDue(): Promise<number | null>;
  /**
   * In one commit: take up to `max` due items whose key is not in `busy`, persisting each at its
   * next attempt time.
   */
  claim(max: number, busy: ReadonlySet<string>): Promise<C[]>;
  /** A claimed item's identity; an item is never run twice at once. */
  key(c: C): string;
  /** The slow, outside part of an attempt (network); must not write to the store. */
  attempt(c: C): Promise<R>;
  /** Record an attempt's outcome. Skipped once stop() has given up on the attempts in flight. */
  settle(c: C, r: R): Promise<unknown>;
  /** stop() gave up waiting: drop connections so that hanging attempts end. */
  abandon?(): void;
  /**
   * When items due now that the last claim passed over (a destination out of room for a moment)
   * may be taken, or null: the loop sleeps until then instead of claiming again at once.
   */
  wakeAt?(): number | null;
}

const MAX_SLEEP_MS = 60_000;
/** How often to look again while the due items are all in flight (their retry time passed mid-attempt). */
const BUSY_POLL_MS = 1_000;

export class DueWorker<C, R> {
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly settling = new Set<Promise<unknown>>();
  private running = false;
  private aborted = false;
  private loop: Promise<void> | null = null;
  private woken = false;
  private claiming = false;
  private backoff = 0;
  private wakeUp: (() => void) | null = null;

  constructor(
    /** Prefix of log events, e.g. `delivery`. */
    private readonly name: string,
    private readonly work: DueWork<C, R>,
    /** Attempts in flight at once. */
    private readonly concurrency: number,
  ) {}

  get busy(): number {
    return this.inFlight.size;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.aborted = false;
    this.loop = this.run();
  }

  /**
   * Stop taking work and let attempts in flight finish for up to `graceMs`. After that their
   * outcomes are not recorded — each item is already persisted at its next attempt time, so it is
   * simply retried after a restart. Resolves true when everything finished in time.
   */
  async stop(graceMs: number): Promise<boolean> {
    if (!this.running) return true;
    this.running = false;
    this.kick();
    await this.loop;
    const all = Promise.allSettled([...this.inFlight.values()]);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const finished = await Promise.race([all.then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), graceMs)))]);
    clearTimeout(timer);
    if (!finished) {
      this.aborted = true;
      this.work.abandon?.();
      log.warn(`${this.name}.stop_abandoned`, { in_flight: this.inFlight.size });
    }
    // No write may follow the store's close.
    await Promise.allSettled([...this.settling]);
    return finished;
  }

  /** New items are due: look now. */
  kick(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  /** Resolves once nothing is due now and no attempt is in flight (tests, benchmarks). */
  async idle(): Promise<void> {
    for (;;) {
      const next = await this.work.nextDue();
      if (!this.claiming && this.inFlight.size === 0 && (next === null || next > Date.now())) return;
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  private async run(): Promise<void> {
    while (this.running) {
      const free = this.concurrency - this.inFlight.size;
      if (free > 0) {
        let batch: C[] = [];
        try {
          // A claim's commit is visible before it resolves: idle() must not see that gap as rest.
          this.claiming = true;
          try {
            batch = await this.work.claim(free, new Set(this.inFlight.keys()));
          } finally {
            this.claiming = false;
          }
          this.backoff = 0;
        } catch (e) {
          // A failing claim (full disk, a bad record) must not spin: back off up to a minute.
          this.backoff = Math.min(this.backoff ? this.backoff * 2 : BUSY_POLL_MS, MAX_SLEEP_MS);
          log.error(`${this.name}.claim_failed`, { error: String(e), retry_in_ms: this.backoff });
          await this.pause(this.backoff);
          continue;
        }
        for (const c of batch) this.launch(c);
        if (batch.length === free && this.running) continue; // probably more due
      }
      await this.sleep();
    }
  }

  /** Wait `ms`, or less if kicked (stop() kicks: shutdown never waits out a backoff). */
  private async pause(ms: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await new Promise<void>((resolve) => {
      this.wakeUp = resolve;
      timer = setTimeout(resolve, ms);
    });
    clearTimeout(timer);
    this.wakeUp = null;
    this.woken = false;
  }

  /** Wait for a kick, a finished attempt, or the next due time. */
  private async sleep(): Promise<void> {
    if (this.woken || !this.running) {
      this.woken = false;
      return;
    }
    const next = await this.work.nextDue();
    if (this.woken || !this.running) {
      this.woken = false;
      return;
    }
    let wait: number | null = next === null ? null : next - Date.now();
    if (wait !== null && wait <= 0) {
      // Due now but not taken: in flight already, or passed over until `wakeAt` (or a finished attempt's kick).
      const hint = this.work.wakeAt?.() ?? null;
      wait = this.inFlight.size ? BUSY_POLL_MS : 0;
      if (hint !== null) wait = Math.max(0, Math.min(this.inFlight.size ? BUSY_POLL_MS : Infinity, hint - Date.now()));
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    await new Promise<void>((resolve) => {
      this.wakeUp = resolve;
      if (wait !== null) timer = setTimeout(resolve, Math.min(wait, MAX_SLEEP_MS));
    });
    clearTimeout(timer);
    this.wakeUp = null;
    this.woken = false;
  }

  private launch(c: C): void {
    const key = this.work.key(c);
    const p = this.attemptAndSettle(c)
      .catch((e) => log.error(`${this.name}.attempt_crashed`, { key, error: String((e as Error)?.stack ?? e) }))
      .finally(() => {
        this.inFlight.delete(key);
        this.kick(); // a slot is free
      });
    this.inFlight.set(key, p);
  }

  private async attemptAndSettle(c: C): Promise<void> {
    const r = await this.work.attempt(c);
    if (this.aborted) return; // shutting down: the item is persisted for its next attempt
    const settle = this.work.settle(c, r);
    this.settling.add(settle);
    try {
      await settle;
    } finally {
      this.settling.delete(settle);
    }
  }
}
