// The back office: everything that happens to mail after it is accepted — delivery to the
// recipients' MX hosts (DKIM signing, SMTP), and webhook delivery of the events that follow. It runs
// on a thread of its own (thread.ts), beside the HTTP and SMTP listeners, so signing and sending
// never hold up an accept (docs/ARCHITECTURE.md §2, "Two threads"). It reads and writes the same
// store (LMDB is safe to share between threads) and hears of new work through the store's signals.
import type { Config } from '../config';
import type { Store } from '../store';
import { Resolver } from '../dns/resolver';
import { DeliveryEngine } from '../delivery';
import { WebhookDispatcher, createEvents } from '../events/webhooks';
import { EventCounts } from '../telemetry';

export interface BackOffice {
  delivery: DeliveryEngine;
  webhooks: WebhookDispatcher;
  /** Events recorded by this thread, by type (the HTTP thread's GET /metrics adds them up). */
  counts: EventCounts;
  start(): Promise<void>;
  /** Stop taking work; attempts in flight get `graceMs` to finish. */
  stop(graceMs?: number): Promise<void>;
}

export function createBackOffice(config: Config, store: Store): BackOffice {
  const events = createEvents();
  const counts = new EventCounts();
  events.observe((ev) => counts.event(ev));
  const delivery = new DeliveryEngine({ store, events, dns: new Resolver(config.dns.servers), config });
  const webhooks = new WebhookDispatcher({ store, config });
  // Work this thread commits wakes its own workers; the other thread's commits arrive as messages.
  store.on('queue', () => delivery.kick());
  store.on('outbox', () => webhooks.kick());
  return {
    delivery,
    webhooks,
    counts,
    async start() {
      await delivery.start();
      webhooks.start();
    },
    async stop(graceMs = 10_000) {
      await Promise.all([delivery.stop(graceMs), webhooks.stop()]);
    },
  };
}
