// The running parts of one Posthorn process, handed to the API, SMTP and background jobs.
import type { Config } from './config';
import { Store } from './store';
import { DomainVerifier } from './domains/verify';
import { Resolver } from './dns/resolver';
import { Events } from './events';
import { DeliveryEngine } from './delivery';

export interface Services {
  config: Config;
  store: Store;
  dns: Resolver;
  domains: DomainVerifier;
  events: Events;
  /** The delivery queue worker; `start()` is called by `serve` (and the test harness). */
  delivery: DeliveryEngine;
}

export function createServices(config: Config): Services {
  const store = new Store(config.data_dir, config.retention.days);
  const dns = new Resolver(config.dns.servers);
  const domains = new DomainVerifier(store, dns, config);
  const events = new Events(store);
  const base = { config, store, dns, domains, events };
  return { ...base, delivery: new DeliveryEngine(base) };
}

export async function closeServices(svc: Services): Promise<void> {
  svc.domains.stop();
  await svc.delivery.stop();
  await svc.store.close();
}
