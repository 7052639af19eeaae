// A clock for the code under test (the `now` a part takes, services.ts `createServices`): the
// system's time until a test stops it, then moved only by the test. A test that needs a later
// time — a new rate-limit window, a scheduled time passed — moves the clock instead of sleeping.
export class TestClock {
  private stopped: number | null = null;

  /** The time the code under test sees (bound: pass it as is). */
  readonly now = (): number => this.stopped ?? Date.now();

  /** Stop the clock at `at` (default: now); it shows that time until moved or released. */
  stop(at = Date.now()): void {
    this.stopped = at;
  }

  /** Move the stopped clock by `ms`. */
  advance(ms: number): void {
    if (this.stopped === null) throw new Error('TestClock.advance: stop the clock first');
    this.stopped += ms;
  }

  /** Back to the system's time. */
  release(): void {
    this.stopped = null;
  }
}
