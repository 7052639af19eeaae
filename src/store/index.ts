// The store: the one interface through which every part reads and writes Posthorn's state
// (interface.ts), the record shapes, and the backend behind it — LMDB in data_dir, embedded.
import type { Store, StoreOptions } from './interface';
import { LmdbStore } from './lmdb';

export * from './interface';
export * from './records';
export * from './email-records';
export * from './webhook-records';
export * from './inbound-records';
export * from './audience-records';

/** Open the store (creating it on first use). */
export function openStore(opts: StoreOptions): Promise<Store> {
  return LmdbStore.open(opts);
}
