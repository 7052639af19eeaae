// The listeners first: the back office works from durable queues (the delivery queue, the inbound
// spool, the webhook outbox), so its work can wait a moment; an SMTP client waiting for its 250 or
// an API caller waiting for its 200 cannot. On Linux the nice value is an attribute of each thread
// (setpriority(2), NOTES: "different threads in the same process can have different nice values"),
// so this thread — and the signing threads it starts, which inherit it — runs BACK_OFFICE_NICE
// steps below the listeners. With a core to spare nothing changes; when the CPU is contended the
// listeners answer first and the back office catches up from the store (docs/ARCHITECTURE.md §2).
import { getPriority, setPriority } from 'node:os';
import { log } from '../log';

/**
 * Nice steps below the main thread. At 5 a contended core is shared about 3 : 1 (CFS weights 1024
 * and 335): the listeners first, and still a steady share for delivery on a one-core machine.
 */
export const BACK_OFFICE_NICE = 5;
/** The lowest priority there is (the highest nice value). */
const LOWEST = 19;

/** Lower the calling thread's CPU priority; on other systems (one value per process) nothing is done. */
export function yieldToListeners(): void {
  if (process.platform !== 'linux') return;
  try {
    // Relative: a service an operator runs at nice 5 puts its back office at 15.
    setPriority(0, Math.min(LOWEST, getPriority(0) + BACK_OFFICE_NICE));
  } catch (e) {
    // Lowering one's own priority needs no privilege; if a sandbox refuses it, all runs as before.
    log.warn('backoffice.priority_unchanged', { error: String((e as Error)?.message ?? e) });
  }
}
