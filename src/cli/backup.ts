// `posthorn backup DEST`: a consistent copy of the LMDB environment, taken with LMDB's own copy
// (mdb_env_copy) from a read transaction, so it is safe while `serve` keeps running and writing.
// Restore by putting the file in place as `<data_dir>/posthorn.mdb` with the service stopped.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Config } from '../config';
import { openStore } from '../store';
import { storeOptions } from '../services';

export async function backup(config: Config, dest: string, opts: { compact: boolean }): Promise<number> {
  const target = resolve(dest);
  if (existsSync(target)) {
    process.stderr.write(`posthorn: ${target} exists already; choose a new file name\n`);
    return 1;
  }
  const store = await openStore(storeOptions(config));
  try {
    await store.backup(target, { compact: opts.compact });
    process.stdout.write(`backup written to ${target}\n`);
    return 0;
  } finally {
    await store.close();
  }
}
