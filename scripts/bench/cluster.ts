#!/usr/bin/env bun
/**
 * Cluster benchmark — `npm run bench:cluster` (= `bun scripts/bench/cluster.ts`).
 *
 *   npm run bench:cluster                     5 s of sends per setup; LMDB, then 1, 2 and 3 nodes on PostgreSQL
 *   npm run bench:cluster -- --seconds 10 --concurrency 96 --nodes 1,3
 *
 * Emails accepted per second through POST /emails (each answered after its commit), spread
 * round-robin over the nodes, while the nodes deliver; then how fast everything accepted reaches
 * an MTA on loopback (delivered/s over the whole run, and while draining what was left). Setups:
 * the embedded LMDB default (one node), then 1, 2 and 3 `posthorn serve` nodes on one PostgreSQL
 * database — a private server started here (initdb in a temp dir, loopback only, fsync on), all on
 * this one machine: the nodes share its cores with the database, the sink and this load generator,
 * so the figures say what the shared database costs, not what three machines would do.
 */
import { parseArgs } from 'node:util';
import { verifiedSendingDomain, startChild, tempDir, call, closedLoop, fmt, machine, table, fail, type Target } from './lib';
import { startDnsServer } from '../../test/helpers/dns';
import { startSink } from '../../test/helpers/sink';
import { startPgServer } from '../../test/helpers/postgres';
import { setQuiet } from '../../src/log';

const { values: opts } = parseArgs({
  args: process.argv.slice(2),
  options: { seconds: { type: 'string', default: '5' }, concurrency: { type: 'string', default: '64' }, nodes: { type: 'string', default: '1,2,3' } },
  strict: true,
});
const SECONDS = Number(opts.seconds);
const CONCURRENCY = Number(opts.concurrency);
const NODES = opts.nodes!.split(',').map(Number);
if (!(SECONDS > 0 && SECONDS <= 600) || !(CONCURRENCY >= 1) || NODES.some((n) => !Number.isInteger(n) || n < 1 || n > 8))
  fail('usage: bun scripts/bench/cluster.ts [--seconds 5] [--concurrency 64] [--nodes 1,2,3]');
setQuiet(true);

const dns = await startDnsServer();
const sink = await startSink({ tls: 'none' });
const pg = await startPgServer();

console.log('Posthorn cluster benchmark');
console.log(`  command   bun scripts/bench/cluster.ts ${process.argv.slice(2).join(' ')}`);
console.log(`  machine   ${machine()}`);
console.log(`  database  PostgreSQL on 127.0.0.1:${pg.port} (private, fsync on, synchronous_commit on)`);
console.log(
  `  load      POST /emails, ${CONCURRENCY} in flight, round-robin over the nodes, ${SECONDS} s; delivery to smtp-server on 127.0.0.1:${sink.port}\n`,
);
const row = table([24, 6, 12, 10, 8, 12, 12]);
console.log(row(['setup', 'nodes', 'accepted/s', 'p50 ms', 'p99 ms', 'delivered/s', 'drain/s']));

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
    console.log(
      row([label, String(nodes), fmt(r.requests / r.seconds), fmt(r.p50, 2), fmt(r.p99, 2), fmt(r.requests / total), fmt((r.requests - atLoadEnd) / drain)]),
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
