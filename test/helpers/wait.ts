// The one bounded wait of the tests: look again until a condition holds. For what can only be
// seen by looking (mail at a sink, a stored state, a process's answer); never to let time pass —
// a test that needs a later time injects a clock instead.

/** An answer of `check` that says the condition holds. */
type Holds<T> = Exclude<T, false | 0 | '' | null | undefined>;

/**
 * Poll `check` every `everyMs` until its answer is truthy, and return that answer. After
 * `timeoutMs`, throw `timed out waiting for <what>`; `what` may be a function, called then (the
 * state last seen, for the failure message).
 */
export async function until<T>(
  check: () => T | Promise<T>,
  what: string | (() => string | Promise<string>),
  timeoutMs = 30_000,
  everyMs = 50,
): Promise<Holds<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v as Holds<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${typeof what === 'string' ? what : await what()} (${timeoutMs} ms)`);
    await Bun.sleep(everyMs);
  }
}
