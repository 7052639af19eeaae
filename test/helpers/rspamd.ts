// A private rspamd for tests (Debian's `rspamd`, installed by scripts/preflight.sh): Debian's rules
// (/etc/rspamd/common.conf and its modules) under a configuration of its own in a temp dir — its
// run, db and log dirs there, one normal worker on a free loopback port (POST /checkv2), no
// controller or proxy — run by the unprivileged `_rspamd` user when the tests run as root.
//
// Nothing leaves 127.0.0.0/8: rspamd's own resolver asks the test DNS server (`dns`), or a
// loopback port where nobody answers; the modules that reach out by other means are off —
// fuzzy_check (rspamd.com's fuzzy servers, resolved through the system's resolver while the
// configuration loads), rbl and asn (DNS lists), url_redirector (fetches the message's links) and
// rspamd_update. Maps that live on the web fail to resolve and are skipped.
//
// Starting takes about a second once Hyperscan's compiled rules are cached (a shared cache dir in
// the temp dir, kept between runs), some 20–40 s the first time on this machine.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Subprocess } from 'bun';
import { freePort } from './posthorn';
import { until } from './wait';

export interface TestRspamd {
  /** Its normal worker: the value of `spam.rspamd_url`. */
  url: string;
  port: number;
  /** Stop it (a stopped rspamd refuses connections: what Posthorn must survive). */
  stop(): Promise<void>;
}

const asRoot = process.getuid?.() === 0;
const USER = '_rspamd';
/** Hyperscan's compiled rules, shared by every test rspamd (compiling them is most of a cold start). */
const HS_CACHE = join(tmpdir(), 'posthorn-rspamd-hs-cache');

const give = (path: string) => {
  if (asRoot) Bun.spawnSync(['chown', '-R', `${USER}:${USER}`, path]);
};

/**
 * Start a private rspamd; `dns`: the test DNS server (`127.0.0.1:port`) it resolves through;
 * `port`: where it listens (default: a free one), for a Posthorn configured before it starts.
 */
export async function startRspamd(opts: { dns?: string; port?: number } = {}): Promise<TestRspamd> {
  const bin = Bun.which('rspamd') ?? (existsSync('/usr/bin/rspamd') ? '/usr/bin/rspamd' : null);
  if (!bin) throw new Error('rspamd is not installed (Debian: apt-get install --no-install-recommends rspamd; scripts/preflight.sh installs it)');
  const dir = mkdtempSync(join(tmpdir(), 'posthorn-rspamd-'));
  for (const d of ['conf', 'local/override.d', 'db', 'run', 'log']) mkdirSync(join(dir, d), { recursive: true });
  mkdirSync(HS_CACHE, { recursive: true });
  const port = opts.port ?? (await freePort());
  const nameserver = opts.dns ?? '127.0.0.1:9';
  writeFileSync(
    join(dir, 'conf', 'rspamd.conf'),
    `.include "$CONFDIR/common.conf"
options {
  pidfile = "$RUNDIR/rspamd.pid";
  filters = "chartable,dkim,regexp";
  cache_file = "$DBDIR/symbols.cache";
  hs_cache_dir = "${HS_CACHE}/";
  url_tld = "\${SHAREDIR}/effective_tld_names.dat";
  allow_raw_input = true;
  task_timeout = 8s;
  local_addrs = [];
  explicit_modules = ["settings"];
  map_watch_interval = 1d;
  dns { nameserver = ["${nameserver}"]; timeout = 0.5s; retransmits = 1; sockets = 2; }
}
logging { type = "file"; filename = "$LOGDIR/rspamd.log"; level = "warning"; }
worker "normal" { bind_socket = "127.0.0.1:${port}"; count = 1; mime = true; }
`,
  );
  for (const m of ['fuzzy_check', 'rbl', 'asn', 'url_redirector', 'rspamd_update'])
    writeFileSync(join(dir, 'local', 'override.d', `${m}.conf`), 'enabled = false;\n');
  give(dir);
  give(HS_CACHE);
  const vars = ['LOCAL_CONFDIR=local', 'DBDIR=db', 'RUNDIR=run', 'LOGDIR=log'].map((v) => {
    const [k, sub] = v.split('=');
    return `--var=${k}=${join(dir, sub!)}`;
  });
  const proc: Subprocess = Bun.spawn([bin, '-f', '-c', join(dir, 'conf', 'rspamd.conf'), ...(asRoot ? ['-u', USER, '-g', USER] : []), ...vars], {
    stdout: Bun.file(join(dir, 'log', 'stdout.log')),
    stderr: Bun.file(join(dir, 'log', 'stderr.log')),
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await until(
      async () => {
        if (proc.exitCode !== null) throw new Error(`rspamd exited (${proc.exitCode}): see ${dir}/log`);
        return (await fetch(`${url}/ping`).catch(() => null))?.ok;
      },
      'rspamd to answer /ping',
      120_000,
      200,
    );
  } catch (e) {
    proc.kill('SIGKILL');
    throw e;
  }
  let stopped = false;
  return {
    url,
    port,
    async stop() {
      if (stopped) return;
      stopped = true;
      proc.kill('SIGTERM');
      const exited = await Promise.race([proc.exited.then(() => true), Bun.sleep(10_000).then(() => false)]);
      if (!exited) proc.kill('SIGKILL');
      await proc.exited;
      // Its workers end with the main process; nobody may answer on the port any more.
      await until(async () => !(await fetch(`${url}/ping`).catch(() => null)), 'rspamd to stop answering', 10_000, 100);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
