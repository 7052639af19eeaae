// The running parts of one Posthorn process, handed to the API, SMTP and background jobs.
import type { Config } from './config';
import { Store } from './store';
import { DomainVerifier } from './domains/verify';
import { Resolver } from './dns/resolver';
import { Events } from './events';
import { flushRequestLog } from './api/platform/requestlog';
import { DeliveryEngine } from './delivery';
import { WebhookDispatcher } from './events/webhooks';
import { RateLimiter } from './api/platform/ratelimit';
import { BroadcastSender } from './broadcasts/runner';

export interface Services {
  config: Config;
  store: Store;
  dns: Resolver;
  domains: DomainVerifier;
  events: Events;
  /** The delivery queue worker; `start()` is called by `serve` (and the test harness). */
  delivery: DeliveryEngine;
  /** The webhook outbox worker; started like `delivery`. */
  webhooks: WebhookDispatcher;
  /** Background broadcast sends (src/broadcasts/runner.ts); the scheduler releases due ones. */
  broadcasts: BroadcastSender;
  /** The per-team request limit, one instance shared by the HTTP API and SMTP submission (api-reference §6). */
  limiter: RateLimiter;
}

export function createServices(config: Config): Services {
  // Nothing still being retried may expire: the longer of the delivery window and webhook retries.
  const webhookRetries = config.webhooks.retry_schedule.reduce((a, b) => a + b, 0);
  const store = new Store(config.data_dir, config.retention.days, Math.max(config.delivery.retry_window, webhookRetries));
  const dns = new Resolver(config.dns.servers);
  const domains = new DomainVerifier(store, dns, config);
  const events = new Events(store);
  const limiter = new RateLimiter(config.limits.requests_per_second);
  const base = { config, store, dns, domains, events, limiter };
  const svc = { ...base, delivery: new DeliveryEngine(base), webhooks: new WebhookDispatcher(base) } as Services;
  // The broadcast sender calls the sending core, which takes the finished Services.
  svc.broadcasts = new BroadcastSender(svc);
  return svc;
}

export async function closeServices(svc: Services): Promise<void> {
  svc.domains.stop();
  // First: a broadcast batch in hand still commits emails and wakes the delivery engine.
  await svc.broadcasts.stop();
  await Promise.all([svc.delivery.stop(), svc.webhooks.stop()]);
  await flushRequestLog(svc.store);
  await svc.store.close();
}
