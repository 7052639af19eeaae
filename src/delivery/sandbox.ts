// Sandbox addresses in the delivery engine (docs/api.md §7.11): a queue entry whose recipients are
// all Resend's test addresses is answered here — no DNS lookup, no connection — with the replies a
// destination would have given: 250 for delivered@ and complained@ (whose complaint settle.ts adds),
// `550 5.1.1` for bounced@. The result is recorded like any other attempt (settle.ts), marked
// `simulated` on the email; the sending core (sending/enqueue.ts) queues sandbox recipients apart
// from the domain's others, so an entry is all of one kind.
import type { Reply } from '../mail/smtp-reply';
import { sandboxOutcome } from '../mail/sandbox';
import type { QueueEntry } from '../store';
import type { AttemptResult } from './attempt';

/** The host a simulated attempt names (docs/api.md §7.3). */
export const SANDBOX_HOST = 'sandbox';

/** The simulated attempt of `entry`, or null when one of its recipients is not a sandbox address it can answer for. */
export function simulatedAttempt(entry: QueueEntry): AttemptResult | null {
  const replies = new Map<string, Reply>();
  for (const rcpt of entry.recipients) {
    const reply = simulatedReply(rcpt);
    // Queued before the sandbox was turned on, beside ordinary addresses: delivered as it was queued.
    if (!reply) return null;
    replies.set(rcpt, reply);
  }
  return { replies, host: SANDBOX_HOST, ip: null, tls: null, simulated: true };
}

/**
 * What the destination says to one recipient. A remote reply, not one of Posthorn's own (`local`):
 * it is read like a real server's (smtp-reply.ts), so the bounce is the one a real 5.1.1 gives.
 */
function simulatedReply(rcpt: string): Reply | null {
  switch (sandboxOutcome(rcpt)) {
    case 'delivered':
    case 'complained':
      return { code: 250, text: '250 2.0.0 OK: simulated delivery to a sandbox address' };
    case 'bounced':
      return { code: 550, text: `550 5.1.1 <${rcpt}>: Unknown User (simulated bounce of a sandbox address)` };
    default:
      // suppressed@ never reaches the queue while the sandbox is on (sending/enqueue.ts).
      return null;
  }
}
