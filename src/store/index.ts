// The store: the one interface through which every part reads and writes Posthorn's state
// (interface.ts), the record shapes, and the backend behind it — LMDB in data_dir, embedded.
import type { Config } from '../config';
import type { Store, StoreOptions } from './interface';
import { LmdbStore } from './lmdb';

export * from './interface';
export * from './records';
export * from './email-records';
export * from './webhook-records';
export * from './inbound-records';
export * from './template-records';
export * from './audience-records';
export * from './delivery-records';
export * from './automation-records';

/** Open the store (creating it on first use). */
export function openStore(opts: StoreOptions): Promise<Store> {
  return LmdbStore.open(opts);
}

/** How the store is opened for this configuration (serve, the delivery thread and the CLI alike). */
export function storeOptions(config: Pick<Config, 'data_dir' | 'retention' | 'webhooks' | 'delivery'>): StoreOptions {
  // Nothing still being retried may expire: the longer of the delivery window and webhook retries.
  const webhookRetries = config.webhooks.retry_schedule.reduce((a, b) => a + b, 0);
  return { dataDir: config.data_dir, retentionDays: config.retention.days, holdMs: Math.max(config.delivery.retry_window, webhookRetries) };
}
