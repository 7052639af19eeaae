// The back office: everything that happens to mail after it is accepted — delivery to the
// recipients' MX hosts (DKIM signing, SMTP), the processing of inbound mail the SMTP listener spooled
// (parsing, SPF/DKIM/DMARC, bounces and complaints), webhook delivery of the events that follow, and
// the automation runner (triggers become runs; runs advance step by step). It runs
// on a thread of its own (thread.ts), beside the HTTP and SMTP listeners, so signing and sending
// never hold up an accept (docs/ARCHITECTURE.md §2, "Two threads"). It reads and writes the same
// store (LMDB is safe to share between threads) and hears of new work through the store's signals.
import type { Config } from '../config';
import { SIGNALS, type Signal, type Store } from '../store';
import { Resolver } from '../dns/resolver';
import { DeliveryEngine } from '../delivery';
import { WebhookDispatcher, createEvents } from '../events/webhooks';
import { Feedback } from '../feedback';
import { InboundProcessor } from '../inbound';
import { EventCounts } from '../telemetry';
import { AutomationRunner } from '../automations/runner';
import { GroupCommit } from '../sending/submit';
import { IncomingWorker } from '../sending/incoming';
import { Rspamd } from '../insights/rspamd';
import { BounceClassifier } from '../mail/bounce-class';
import { ThreadMessageHooks, type InboxListeners } from '../inboxes/hooks';
import { scanSearch } from '../inboxes/search-index';
import { InboxAgent } from '../inboxes/agent';
import { agentInboxes, queueOnReceived } from '../inboxes/agent-inboxes';
import { ChatCompletions } from '../inboxes/chat-completions';

export interface BackOffice {
  delivery: DeliveryEngine;
  webhooks: WebhookDispatcher;
  inbound: InboundProcessor;
  automations: AutomationRunner;
  /** The Inbox Agent's runs (src/inboxes/agent.ts): drafts from the operator's model, off the intake path. */
  agent: InboxAgent;
  /** Batches accepted as received, written as their emails (src/sending/incoming.ts). */
  incoming: IncomingWorker;
  /** Inboxes' listeners on this thread: inbound mail joins threads here (src/inboxes/intake.ts). */
  inboxes: InboxListeners;
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
  // DNS keeping answers for their TTL: MX lookups of delivery, inbound SPF/DKIM/DMARC.
  const dns = new Resolver(config.dns.servers);
  const mailDns = dns.withCache();
  // The bounce classes' rules, compiled once for the engine and the bounces arriving at VERP addresses.
  const bounces = new BounceClassifier(config.delivery.bounce_classes);
  const delivery = new DeliveryEngine({ store, events, dns: mailDns, config, bounces, counts });
  const webhooks = new WebhookDispatcher({ store, config });
  // rspamd's verdict on received mail (spam.rspamd_url); its failures counted with this thread's events.
  const spam = config.spam.rspamd_url ? new Rspamd(config.spam.rspamd_url, config.spam.timeout, (why) => counts.spamFailure(why)) : null;
  const inboxes: InboxListeners = { hooks: new ThreadMessageHooks(), search: scanSearch };
  const inbound = new InboundProcessor({
    store,
    events,
    dns: mailDns,
    feedback: new Feedback({ store, events, bounces }),
    config,
    spam,
    inboxes,
    dmarcCounted: (result) => counts.dmarcReport(result),
  });
  const automations = new AutomationRunner({ store, events, config, commits: new GroupCommit(store) });
  // The operator's model (agent.url; off when unset): each message received in an inbox whose agent
  // is active queues a run after its commit, and the agent worker asks the model.
  const { agent: agentConfig } = config;
  const model = agentConfig.url
    ? new ChatCompletions({ url: agentConfig.url, model: agentConfig.model ?? '', apiKey: agentConfig.api_key, timeoutMs: agentConfig.timeout_ms })
    : null;
  const agent = new InboxAgent({ store, inboxes: agentInboxes(store, events), model, config: agentConfig });
  if (model) inboxes.hooks.on(queueOnReceived(store));
  const incoming = new IncomingWorker({ store, events });
  const workers = { delivery, webhooks, inbound, automations, agent, incoming };
  // Work this thread commits wakes its own workers; the other thread's commits arrive as messages.
  for (const signal of Object.keys(SIGNALS) as Signal[]) store.on(signal, () => workers[SIGNALS[signal]].kick());
  return {
    ...workers,
    inboxes,
    counts,
    async start() {
      // Spooled mail and batches first: a restart after a crash stores what was accepted before sending more.
      incoming.start();
      await inbound.start();
      await delivery.start();
      webhooks.start();
      automations.start();
      agent.start();
    },
    async stop(graceMs = 10_000) {
      // Runs first: a run settling commits an email the delivery engine then hears of.
      await automations.stop(graceMs);
      await Promise.all([delivery.stop(graceMs), webhooks.stop(), inbound.stop(graceMs), agent.stop(Math.min(graceMs, 5_000)), incoming.stop()]);
      dns.close();
    },
  };
}
