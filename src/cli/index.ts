// Command line: serve, init, keys create, backup, migrate, db copy, domains, doctor, version (README, "CLI").
import { parseArgs } from 'node:util';
import { loadConfig, ConfigError, type Config } from '../config';
import { BounceRuleError } from '../mail/bounce-class';
import { VERSION } from '../version';

const USAGE = `Usage: posthorn <command> [options]

Commands:
  serve                         run the API, SMTP listeners and delivery (bootstraps on first start)
  init [--json] [--admin-email EMAIL] [--new-team [--team-name NAME]]
                                create a team, an admin user and a full_access API key; refused
                                when a team exists unless --new-team asks for another one
  keys create --name NAME [--permission full_access|sending_access] [--domain ID] [--team ID|NAME] [--json]
                                create an API key (--team required when several teams exist)
  backup DEST [--compact]       write a consistent copy of the database to the file DEST (safe while serving)
  migrate                       apply the PostgreSQL schema migrations of database.url (cluster mode)
  db copy [--from DIR]          copy an LMDB install (data_dir, or DIR) into the empty database.url
  domains rotate-dkim DOMAIN [--ed25519] [--status] [--team ID] [--json]
                                rotate a domain's DKIM key: start, or check and switch once published
  doctor [--json]               check whether this server can deliver and is trusted (exit 1 on a failure)
  version                       print the version

Options:
  --config PATH                 TOML configuration file (or POSTHORN_CONFIG)
`;

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(USAGE);
    return command ? 0 : 2;
  }
  if (command === 'version' || command === '--version') {
    process.stdout.write(`posthorn ${VERSION} (bun ${Bun.version})\n`);
    return 0;
  }
  try {
    switch (command) {
      case 'serve': {
        const { values } = parseArgs({ args: rest, options: { config: { type: 'string' } }, strict: true });
        const { serve } = await import('./serve');
        return await serve(config(values.config));
      }
      case 'init': {
        const { values } = parseArgs({
          args: rest,
          options: {
            config: { type: 'string' },
            json: { type: 'boolean' },
            'admin-email': { type: 'string' },
            'new-team': { type: 'boolean' },
            'team-name': { type: 'string' },
          },
          strict: true,
        });
        if (values['team-name'] !== undefined && !values['new-team']) throw new UsageError('init: --team-name goes with --new-team');
        const { init } = await import('./init');
        return await init(config(values.config), {
          json: !!values.json,
          adminEmail: values['admin-email'],
          newTeam: !!values['new-team'],
          teamName: values['team-name'],
        });
      }
      case 'doctor': {
        const { values } = parseArgs({ args: rest, options: { config: { type: 'string' }, json: { type: 'boolean' } }, strict: true });
        const { doctor } = await import('./doctor');
        return await doctor(config(values.config), { json: !!values.json });
      }
      case 'backup': {
        const { values, positionals } = parseArgs({
          args: rest,
          options: { config: { type: 'string' }, compact: { type: 'boolean' } },
          allowPositionals: true,
          strict: true,
        });
        if (positionals.length !== 1) throw new UsageError('backup: give the file to write, e.g. `posthorn backup /var/backups/posthorn.mdb`');
        const { backup } = await import('./backup');
        return await backup(config(values.config), positionals[0], { compact: !!values.compact });
      }
      case 'migrate': {
        const { values } = parseArgs({ args: rest, options: { config: { type: 'string' } }, strict: true });
        const { migrateCommand } = await import('./db');
        return await migrateCommand(config(values.config));
      }
      case 'db': {
        const [sub, ...args] = rest;
        if (sub !== 'copy') throw new UsageError('db: the only subcommand is `db copy`');
        const { values } = parseArgs({ args, options: { config: { type: 'string' }, from: { type: 'string' } }, strict: true });
        const { dbCopy } = await import('./db');
        return await dbCopy(config(values.config), { from: values.from });
      }
      case 'domains': {
        const [sub, ...args] = rest;
        if (sub !== 'rotate-dkim') throw new UsageError('domains: the only subcommand is `domains rotate-dkim`');
        const { values, positionals } = parseArgs({
          args,
          options: {
            config: { type: 'string' },
            ed25519: { type: 'boolean' },
            status: { type: 'boolean' },
            team: { type: 'string' },
            json: { type: 'boolean' },
          },
          allowPositionals: true,
          strict: true,
        });
        if (positionals.length !== 1) throw new UsageError('domains rotate-dkim: give the domain, e.g. `posthorn domains rotate-dkim example.com`');
        const { rotateDkim } = await import('./domains');
        return await rotateDkim(config(values.config), {
          domain: positionals[0],
          ed25519: !!values.ed25519,
          status: !!values.status,
          team: values.team,
          json: !!values.json,
        });
      }
      case 'keys': {
        const [sub, ...args] = rest;
        if (sub !== 'create') throw new UsageError('keys: the only subcommand is `keys create`');
        const { values } = parseArgs({
          args,
          options: {
            config: { type: 'string' },
            name: { type: 'string' },
            permission: { type: 'string' },
            domain: { type: 'string' },
            team: { type: 'string' },
            json: { type: 'boolean' },
          },
          strict: true,
        });
        if (values.name === undefined) throw new UsageError('keys create: --name is required');
        const { keysCreate } = await import('./keys');
        return await keysCreate(config(values.config), {
          name: values.name,
          permission: values.permission,
          domain: values.domain,
          team: values.team,
          json: !!values.json,
        });
      }
      default:
        throw new UsageError(`unknown command: ${command}`);
    }
  } catch (e) {
    if (e instanceof ConfigError || e instanceof BounceRuleError) {
      process.stderr.write(`posthorn: ${e.message}\n`);
      return 78; // EX_CONFIG
    }
    if (e instanceof UsageError || (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`posthorn: ${(e as Error).message}\n\n${USAGE}`);
      return 2;
    }
    throw e;
  }
}

class UsageError extends Error {}

function config(path: string | undefined): Config {
  return loadConfig({ path: path ?? null });
}
