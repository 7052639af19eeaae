// The composition root: the one place that builds Posthorn's running parts, in dependency order, and
// wires them together — the event sinks, which worker the store wakes when work becomes due, and
// the order of shutdown. Every part receives only what it names in its own deps type.
import type { Config } from './config';
import { openStore, type Store, type StoreOptions } from './store';
import { Resolver } from './dns/resolver';
import { DomainVerifier } from './domains/verify';
import { Events } from './events';
import { RateLimiter } from './limits/ratelimit';
import { DeliveryEngine } from './delivery';
import { WebhookDispatcher, fanOut } from './events/webhooks';
import { BroadcastSender } from './broadcasts/runner';
import { Feedback } from './feedback';
import { InboundProcessor } from './inbound';
import { Telemetry } from './telemetry';
import { Auth } from './accounts/auth';
import { DashboardAssets } from './dashboard/assets';

export interface Services {
  config: Config;
  store: Store;
  /** DNS asked afresh each time: domain verification must see the zone as it is now. */
  dns: Resolver;
  /** The same resolver keeping answers for their TTL: MX lookups of delivery, inbound SPF/DKIM/DMARC. */
  mailDns: Resolver;
  domains: DomainVerifier;
  events: Events;
  /** The per-team request limit, one instance shared by the HTTP API and SMTP submission. */
  limiter: RateLimiter;
  /** The delivery queue's worker; `start()` is called by `serve` (and the test harness). */
  delivery: DeliveryEngine;
  /** The webhook outbox's worker; started like `delivery`. */
  webhooks: WebhookDispatcher;
  /** Background broadcast sends; the scheduler releases due ones. */
  broadcasts: BroadcastSender;
  /** Bounces and complaints arriving at return-path addresses. */
  feedback: Feedback;
  /** The inbound spool's worker: parses, checks and stores mail the SMTP listener spooled; started like `delivery`. */
  inbound: InboundProcessor;
  /** Operator metrics (GET /metrics). */
  telemetry: Telemetry;
  /** Dashboard sign-in: sessions, passwords, TOTP, OpenID Connect, team members. */
  auth: Auth;
  /** The dashboard's static files (bundled on first use from a checkout, embedded in the binary). */
  dashboard: DashboardAssets;
}

/** How the store is opened for this configuration (serve and the CLI alike). */
export function storeOptions(config: Config): StoreOptions {
  // Nothing still being retried may expire: the longer of the delivery window and webhook retries.
  const webhookRetries = config.webhooks.retry_schedule.reduce((a, b) => a + b, 0);
  return { dataDir: config.data_dir, retentionDays: config.retention.days, holdMs: Math.max(config.delivery.retry_window, webhookRetries) };
}

export async function createServices(config: Config): Promise<Services> {
  const store = await openStore(storeOptions(config));
  const dns = new Resolver(config.dns.servers);
  const mailDns = dns.withCache();
  const events = new Events();
  const delivery = new DeliveryEngine({ store, events, dns: mailDns, config });
  const webhooks = new WebhookDispatcher({ store, config });
  const feedback = new Feedback({ store, events });
  const inbound = new InboundProcessor({ store, events, dns: mailDns, feedback, config });
  // Webhook-visible events fan out to the outbox inside the event's own unit of work.
  events.onEvent(fanOut);
  const telemetry = new Telemetry(store);
  events.observe((ev) => telemetry.event(ev));
  // Work committed to the queue, the outbox or the inbound spool wakes the worker that does it.
  store.on('queue', () => delivery.kick());
  store.on('outbox', () => webhooks.kick());
  store.on('inbound', () => inbound.kick());
  return {
    config,
    store,
    dns,
    mailDns,
    events,
    domains: new DomainVerifier(store, dns, config),
    limiter: new RateLimiter(config.limits.requests_per_second),
    delivery,
    webhooks,
    broadcasts: new BroadcastSender({ store, events, config }),
    feedback,
    inbound,
    telemetry,
    auth: new Auth(store, config),
    dashboard: new DashboardAssets(),
  };
}

export async function closeServices(svc: Services): Promise<void> {
  svc.domains.stop();
  // First: a broadcast batch in hand still commits emails and wakes the delivery engine.
  await svc.broadcasts.stop();
  await Promise.all([svc.delivery.stop(), svc.webhooks.stop(), svc.inbound.stop()]);
  await svc.store.close();
  svc.dns.close();
}
