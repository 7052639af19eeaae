// `posthorn backup DEST`: a consistent copy of the LMDB environment, taken with LMDB's own copy
// (mdb_env_copy) from a read transaction, so it is safe while `serve` keeps running and writing.
// Large bodies kept in files beside the database are copied to `DEST.content/`. Restore by putting
// the file in place as `<data_dir>/posthorn.mdb` (and `DEST.content` as `<data_dir>/content`) with
// the service stopped.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Config } from '../config';
import { openStore, storeOptions } from '../store';

export async function backup(config: Config, dest: string, opts: { compact: boolean }): Promise<number> {
  if (config.database.url) {
    process.stderr.write(
      'posthorn: `backup` copies the embedded LMDB store; in cluster mode back the PostgreSQL database up with its own tools (pg_dump, or base backups and WAL archiving: README.md, "Cluster mode")\n',
    );
    return 1;
  }
  const target = resolve(dest);
  if (existsSync(target) || existsSync(`${target}.content`)) {
    process.stderr.write(`posthorn: ${existsSync(target) ? target : `${target}.content`} exists already; choose a new file name\n`);
    return 1;
  }
  const store = await openStore(storeOptions(config));
  try {
    const { files } = await store.backup(target, { compact: opts.compact });
    process.stdout.write(`backup written to ${target}${files ? ` and ${files} files of large emails to ${target}.content/` : ''}\n`);
    return 0;
  } finally {
    await store.close();
  }
}
