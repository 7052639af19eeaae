#!/usr/bin/env bun
/**
 * Cluster benchmark — `npm run bench:cluster` (= `bun scripts/bench/cluster.ts`).
 *
 *   npm run bench:cluster                     5 s of sends per setup; LMDB, then 1, 2 and 3 nodes on PostgreSQL
 *   npm run bench:cluster -- --seconds 10 --concurrency 96 --nodes 1,3
 *   npm run bench:cluster -- --db-cpus 1      the database on CPU 1, everything else on the others
 *
 * Emails accepted per second through POST /emails (each answered after its commit), spread
 * round-robin over the nodes, while the nodes deliver; then how fast everything accepted reaches
 * an MTA on loopback (delivered/s over the whole run, and while draining what was left). Setups:
 * the embedded LMDB default (one node), then 1, 2 and 3 `posthorn serve` nodes on one PostgreSQL
 * database — a private server started here (initdb in a temp dir, loopback only, fsync on), all on
 * this one machine: the nodes share its cores with the database, the sink and this load generator,
 * so the figures say what the shared database costs, not what three machines would do.
 *
 * `--db-cpus` (a taskset(1) CPU list) pins the database server — its postmaster and every backend
 * it forks — to those CPUs, and this process with the nodes, the sink and the load to the others:
 * the database on cores of its own, as on a machine of its own, so the rows say what one node
 * costs the database (its CPU per email) and how many nodes one database carries.
 */
import { parseArgs } from 'node:util';
import { readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { verifiedSendingDomain, startChild, tempDir, call, closedLoop, fmt, machine, table, fail, processCpu, type Target } from './lib';
import { startDnsServer } from '../../test/helpers/dns';
import { startSink } from '../../test/helpers/sink';
import { startPgServer } from '../../test/helpers/postgres';
import { setQuiet } from '../../src/log';

const { values: opts } = parseArgs({
  args: process.argv.slice(2),
  options: {
    seconds: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '64' },
    nodes: { type: 'string', default: '1,2,3' },
    'db-cpus': { type: 'string' },
  },
  strict: true,
});
const SECONDS = Number(opts.seconds);
const CONCURRENCY = Number(opts.concurrency);
const NODES = opts.nodes!.split(',').map(Number);
if (!(SECONDS > 0 && SECONDS <= 600) || !(CONCURRENCY >= 1) || NODES.some((n) => !Number.isInteger(n) || n < 1 || n > 8))
  fail('usage: bun scripts/bench/cluster.ts [--seconds 5] [--concurrency 64] [--nodes 1,2,3] [--db-cpus 1]');
setQuiet(true);
const DB_CPUS = opts['db-cpus'] ?? null;
/** The CPUs `--db-cpus` leaves to everything else (a taskset list). */
function otherCpus(list: string): string {
  const taken = new Set<number>();
  for (const part of list.split(',')) {
    const [a, b] = part.split('-').map(Number);
    for (let c = a!; c <= (b ?? a!); c++) taken.add(c);
  }
  const rest = cpus()
    .map((_, i) => i)
    .filter((i) => !taken.has(i));
  if (!rest.length || taken.size === 0 || [...taken].some((c) => !(c >= 0 && c < cpus().length)))
    fail(`--db-cpus ${list}: name some of the CPUs 0-${cpus().length - 1}, not all`);
  return rest.join(',');
}
/** taskset(1) on a process and all its threads. */
function pin(pid: number, list: string): void {
  const r = Bun.spawnSync(['taskset', '-a', '-p', '-c', list, String(pid)], { stdout: 'ignore', stderr: 'pipe' });
  if (r.exitCode !== 0) fail(`taskset ${list} ${pid}: ${r.stderr.toString()}`);
}
/** The processes of the PostgreSQL server listening on `port`: its postmaster and what it forked. */
function pgProcesses(port: number): number[] {
  const procs = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  const cmd = (p: string) => {
    try {
      return readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
    } catch {
      return [];
    }
  };
  const master = procs.find((p) => {
    const c = cmd(p);
    return c[0]?.endsWith('/postgres') && c.includes('-p') && c[c.indexOf('-p') + 1] === String(port);
  });
  if (!master) fail(`no postgres process listens on port ${port}`);
  const parent = (p: string) => {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(') ') + 2).split(' ')[1];
    } catch {
      return null;
    }
  };
  return [Number(master), ...procs.filter((p) => parent(p) === master).map(Number)];
}

const dns = await startDnsServer();
const sink = await startSink({ tls: 'none' });
const pg = await startPgServer();
if (DB_CPUS) {
  // Backends forked later inherit the postmaster's CPUs; the nodes started later inherit ours.
  for (const pid of pgProcesses(pg.port)) pin(pid, DB_CPUS);
  pin(process.pid, otherCpus(DB_CPUS));
}

console.log('Posthorn cluster benchmark');
console.log(`  command   bun scripts/bench/cluster.ts ${process.argv.slice(2).join(' ')}`);
console.log(`  machine   ${machine()}`);
console.log(
  `  database  PostgreSQL on 127.0.0.1:${pg.port} (private, fsync on, synchronous_commit on)${DB_CPUS ? `, on CPUs ${DB_CPUS}; the nodes, sink and load on ${otherCpus(DB_CPUS)}` : ''}`,
);
console.log(
  `  load      POST /emails, ${CONCURRENCY} in flight, round-robin over the nodes, ${SECONDS} s; delivery to smtp-server on 127.0.0.1:${sink.port}\n`,
);
const row = table([24, 6, 12, 10, 8, 12, 12, 14, 10]);
console.log(row(['setup', 'nodes', 'accepted/s', 'p50 ms', 'p99 ms', 'delivered/s', 'drain/s', 'db µs/email', 'db cores']));

/** CPU seconds of each process of the database server now, by pid. */
function dbCpu(): Map<number, number> {
  const out = new Map<number, number>();
  for (const pid of pgProcesses(pg.port))
    try {
      out.set(pid, processCpu(pid).total);
    } catch {
      // Gone meanwhile.
    }
  return out;
}

async function setup(label: string, nodes: number, databaseUrl: string | null): Promise<void> {
  const env = {
    POSTHORN_DNS_SERVERS: dns.address,
    POSTHORN_DELIVERY_MX_PORT: String(sink.port),
    POSTHORN_SMTP_HOSTNAME: 'mx.posthorn.test',
    ...(databaseUrl ? { POSTHORN_DATABASE_URL: databaseUrl } : {}),
  };
  const first = await startChild(tempDir('posthorn-bench-cluster-'), env);
  const targets: Target[] = [first];
  for (let i = 1; i < nodes; i++) targets.push(await startChild(tempDir('posthorn-bench-cluster-'), env, { apiKey: first.apiKey }));
  try {
    await verifiedSendingDomain(first, dns.zone, 'bench.test');
    const base = sink.messages.length;
    let seq = 0;
    const cpu0 = databaseUrl ? dbCpu() : null;
    const started = performance.now();
    const r = await closedLoop(CONCURRENCY, SECONDS, () => {
      const n = ++seq;
      return call(targets[n % targets.length]!, 'POST', '/emails', {
        from: 'Bench <bench@bench.test>',
        to: `user${n}@dest.test`,
        subject: `Benchmark ${n}`,
        html: `<p>Hello number ${n}</p>`,
      });
    });
    const atLoadEnd = sink.messages.length - base;
    const drainStart = performance.now();
    while (sink.messages.length - base < r.requests) {
      if (performance.now() - drainStart > 600_000) fail(`${label}: only ${sink.messages.length - base} of ${r.requests} delivered after 10 minutes`);
      await Bun.sleep(100);
    }
    const total = (performance.now() - started) / 1000;
    const drain = (performance.now() - drainStart) / 1000;
    // The database's CPU over the run (accepting and delivering every email once), per email and in cores.
    let db = 0;
    if (cpu0) for (const [pid, seconds] of dbCpu()) db += seconds - (cpu0.get(pid) ?? 0);
    console.log(
      row([
        label,
        String(nodes),
        fmt(r.requests / r.seconds),
        fmt(r.p50, 2),
        fmt(r.p99, 2),
        fmt(r.requests / total),
        fmt((r.requests - atLoadEnd) / drain),
        cpu0 ? fmt((db / r.requests) * 1e6) : '',
        cpu0 ? fmt(db / total, 2) : '',
      ]),
    );
  } finally {
    await Promise.all(targets.map((t) => t.stop()));
  }
}

await setup('LMDB (embedded default)', 1, null);
for (const n of NODES) await setup('PostgreSQL', n, await pg.database('bench'));

await sink.close();
await dns.close();
pg.destroy();
process.exit(0);
