// The store: the one interface through which every part reads and writes Posthorn's state
// (interface.ts), the record shapes, and the backend behind it — LMDB in data_dir, embedded, or
// PostgreSQL shared by the nodes of a cluster (database.url).
import type { Config } from '../config';
import type { Store, StoreOptions } from './interface';
import { LmdbStore } from './lmdb';
import { PgStore } from './pg';
import { migrate } from './pg/schema';
import { copyLmdbToPg, type Copied } from './pg/copy';
import { PgEnv } from './pg/env';

export * from './interface';
export * from './records';
export * from './email-records';
export * from './webhook-records';
export * from './inbound-records';
export * from './template-records';
export * from './audience-records';
export * from './delivery-records';
export * from './automation-records';
export * from './insight-records';
export * from './agent-records';
export * from './acme-records';
export * from './inbox-records';
export { SIGNALS, CHANGE_TOPICS, type ChangeTopic } from './collections';
export { writeOrRefuse } from './refusable';

/**
 * Open the store (creating it on first use): PostgreSQL when `databaseUrl` is set (cluster mode,
 * its schema migrated first), else LMDB in `dataDir`.
 */
export function openStore(opts: StoreOptions): Promise<Store> {
  return opts.databaseUrl ? PgStore.open(opts) : LmdbStore.open(opts);
}

/** How the store is opened for this configuration (serve, the delivery thread and the CLI alike). */
export function storeOptions(
  config: Pick<Config, 'data_dir' | 'database' | 'retention' | 'webhooks' | 'delivery'> & Partial<Pick<Config, 'cluster'>>,
): StoreOptions {
  // Nothing still being retried may expire: the longer of the delivery window and webhook retries.
  const webhookRetries = config.webhooks.retry_schedule.reduce((a, b) => a + b, 0);
  return {
    dataDir: config.data_dir,
    databaseUrl: config.database.url,
    retentionDays: config.retention.days,
    holdMs: Math.max(config.delivery.retry_window, webhookRetries),
    region: config.cluster?.region ?? null,
  };
}

/** `posthorn migrate`: the PostgreSQL schema brought to this version's (under the advisory lock). */
export async function migrateDatabase(url: string): Promise<{ from: number; to: number }> {
  const env = new PgEnv({ url, writers: 1, readers: 1 });
  try {
    return await migrate(env.sql);
  } finally {
    await env.close();
  }
}

/**
 * `posthorn db copy`: the LMDB store in `fromDir` copied into the (empty) PostgreSQL database of
 * `opts.databaseUrl`, migrated first. The LMDB store is only read.
 */
export async function copyToDatabase(fromDir: string, opts: StoreOptions, progress?: (c: Copied) => void): Promise<Copied> {
  const from = await LmdbStore.open({ ...opts, dataDir: fromDir, databaseUrl: null });
  try {
    const to = await PgStore.open(opts);
    try {
      return await copyLmdbToPg(from, to, progress);
    } finally {
      await to.close();
    }
  } finally {
    await from.close();
  }
}
