// Cluster mode's commands (README.md, "Cluster mode"): `posthorn migrate` brings the PostgreSQL
// schema of `database.url` to this version's (serve does it too, at start); `posthorn db copy`
// moves an LMDB install (its data_dir, or --from DIR) into that database, empty and with the
// service stopped.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, type Config } from '../config';
import { copyToDatabase, migrateDatabase, storeOptions } from '../store';

function databaseUrl(config: Config, command: string): string {
  if (!config.database.url)
    throw new ConfigError(
      'database.url',
      `is not set: \`posthorn ${command}\` works on the PostgreSQL store of cluster mode (POSTHORN_DATABASE_URL=postgres://…)`,
    );
  return config.database.url;
}

export async function migrateCommand(config: Config): Promise<number> {
  const { from, to } = await migrateDatabase(databaseUrl(config, 'migrate'));
  process.stdout.write(
    from === to ? `posthorn: the database schema is at version ${to}, nothing to do\n` : `posthorn: the database schema is at version ${to} (was ${from})\n`,
  );
  return 0;
}

export async function dbCopy(config: Config, opts: { from?: string }): Promise<number> {
  databaseUrl(config, 'db copy');
  const dir = opts.from ?? config.data_dir;
  if (!existsSync(join(dir, 'posthorn.mdb'))) {
    process.stderr.write(`posthorn: no LMDB store in ${dir} (give its data_dir with --from DIR)\n`);
    return 1;
  }
  let last = 0;
  const copied = await copyToDatabase(dir, storeOptions(config), (c) => {
    const n = Object.values(c).reduce((a, b) => a + b, 0);
    if (n - last >= 10_000) {
      last = n;
      process.stderr.write(`posthorn: ${n} items copied…\n`);
    }
  });
  const lines = Object.entries(copied).map(([kind, n]) => `  ${kind.padEnd(12)} ${n}`);
  process.stdout.write(`posthorn: copied ${dir} into the database:\n${lines.join('\n')}\n`);
  return 0;
}
