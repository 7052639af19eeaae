// A private PostgreSQL server for tests (cluster mode): Debian's PostgreSQL binaries, a cluster
// made by initdb in a temp dir, listening on a free loopback port only, run by the unprivileged
// `postgres` user when the tests run as root (initdb refuses root). The test process's shared
// server starts on first use and stops when the process exits; each caller gets a database of its
// own. A test that stops the database under Posthorn starts a server of its own (`startPgServer`).
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SQL } from 'bun';
import { freePort } from './child';
import { until } from './wait';

/** The newest PostgreSQL under Debian's /usr/lib/postgresql/<major>/bin. */
function binDir(): string {
  const root = '/usr/lib/postgresql';
  const majors = existsSync(root)
    ? readdirSync(root)
        .filter((d) => /^\d+$/.test(d))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  for (const m of majors) if (existsSync(join(root, m, 'bin', 'initdb'))) return join(root, m, 'bin');
  throw new Error('PostgreSQL is not installed (Debian: apt-get install postgresql) — the cluster-mode tests need its initdb and pg_ctl');
}

const asRoot = process.getuid?.() === 0;

/** A PostgreSQL program's command line, run as `postgres` when we are root. */
function command(bin: string, args: string[]): string[] {
  return asRoot ? ['runuser', '-u', 'postgres', '--', join(binDir(), bin), ...args] : [join(binDir(), bin), ...args];
}

function run(bin: string, args: string[]): void {
  const r = Bun.spawnSync(command(bin, args), { stdout: 'pipe', stderr: 'pipe' });
  if (r.exitCode !== 0) throw new Error(`${bin} failed (${r.exitCode}): ${r.stderr.toString()}${r.stdout.toString()}`);
}

export interface PgServer {
  port: number;
  /** URL of database `db` as the test superuser. */
  url(db: string): string;
  /** A fresh, empty database; its URL. */
  database(prefix?: string): Promise<string>;
  drop(url: string): Promise<void>;
  /** Stop the server (fast shutdown: open sessions are ended), and start it again on the same port. */
  stop(): void;
  start(): Promise<void>;
  /** Stop for good and remove its files. */
  destroy(): void;
}

let shared: Promise<PgServer> | null = null;

/** The test process's shared PostgreSQL server (started on first call, stopped at exit). */
export function postgres(): Promise<PgServer> {
  shared ??= startPgServer();
  return shared;
}

/** A PostgreSQL server of the caller's own. */
export async function startPgServer(): Promise<PgServer> {
  const dir = mkdtempSync(join(tmpdir(), 'posthorn-pg-'));
  if (asRoot) {
    chmodSync(dir, 0o755);
    chownSync(dir, Number(Bun.spawnSync(['id', '-u', 'postgres']).stdout.toString().trim()), -1);
  }
  const data = join(dir, 'd');
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'posthorn', '-E', 'UTF8', '--no-sync']);
  const port = await freePort();
  // Loopback only, a socket in the temp dir, room for several nodes' pools. Durability as in
  // production (fsync on): the kill -9 tests kill Posthorn, not the database.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=400 -c shared_buffers=64MB`;
  const url = (db: string) => `postgres://posthorn@127.0.0.1:${port}/${db}`;
  let admin: SQL | null = null;
  let up = false;
  const stop = (mode: 'fast' | 'immediate') => {
    if (!up) return;
    up = false;
    void admin?.close().catch(() => {});
    admin = null;
    Bun.spawnSync(command('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop']), { stdout: 'ignore', stderr: 'ignore' });
  };
  const destroy = () => {
    stop('immediate');
    rmSync(dir, { recursive: true, force: true });
  };
  process.on('exit', destroy);
  // The test process may end without its exit handlers (bun test does not always run them, and a
  // run can be killed): a watchdog in a session of its own stops the server and removes its files
  // once this process is gone.
  const stopCmd = command('pg_ctl', ['-D', data, '-m', 'immediate', 'stop'])
    .map((a) => `'${a}'`)
    .join(' ');
  Bun.spawn(['setsid', 'sh', '-c', `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; ${stopCmd} >/dev/null 2>&1; rm -rf '${dir}'`], {
    stdin: 'ignore',
    stdout: 'ignore',
    stderr: 'ignore',
  }).unref();
  const start = async () => {
    run('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', 'start']);
    up = true;
    admin = new SQL({ url: url('postgres'), max: 2 });
    await until(
      () =>
        admin!.unsafe('SELECT 1').then(
          () => true,
          () => false,
        ),
      'the test PostgreSQL server',
    );
  };
  await start();
  let n = 0;
  return {
    port,
    url,
    async database(prefix = 'posthorn') {
      const name = `${prefix}_${process.pid}_${++n}_${Math.random().toString(36).slice(2, 8)}`;
      await admin!.unsafe(`CREATE DATABASE ${name}`);
      return url(name);
    },
    async drop(dbUrl: string) {
      const name = new URL(dbUrl).pathname.slice(1);
      await admin?.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
    stop: () => stop('fast'),
    start,
    destroy,
  };
}

/** Tests run against PostgreSQL when POSTHORN_TEST_STORE=pg (scripts/test.ts runs the API suites so a second time). */
export const testStore = (): 'lmdb' | 'pg' => (process.env.POSTHORN_TEST_STORE === 'pg' ? 'pg' : 'lmdb');
