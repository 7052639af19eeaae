#!/usr/bin/env bun
/**
 * Where a node's PostgreSQL time goes — `bun scripts/bench/pg-statements.ts [--count 2000] [--top 25] [--lmdb] [--set name=value]…`.
 *
 * One node on a private PostgreSQL server (test/helpers/postgres.ts, with pg_stat_statements
 * loaded) accepts `--count` emails through POST /emails, 16 at a time, with their destination held,
 * then delivers them (and 200 warm-up emails) to an SMTP sink on loopback once it is released. For
 * each phase it prints the statements per email (calls, mean execution time, how often and how long
 * each was planned, the SQL), commits per email, and the CPU per email of the node (by thread), of
 * the postgres processes (by kind) and of this process, with the postgres processes' wake-ups per
 * email (voluntary context switches: a backend's are mostly the messages it waited for).
 * `--lmdb`: the same node on LMDB, for its rates and CPU beside. `--set name=value`: a server
 * setting to try (`--set fsync=off`). Nothing leaves 127.0.0.1.
 */
import { parseArgs } from 'node:util';
import { SQL } from 'bun';
import { verifiedSendingDomain, startChild, tempDir, call, fmt, processCpu, threadCpu, inParallel, postgresCpu } from './lib';
import { startDnsServer } from '../../test/helpers/dns';
import { startSink } from '../../test/helpers/sink';
import { startPgServer } from '../../test/helpers/postgres';
import { setQuiet } from '../../src/log';

const { values: opts } = parseArgs({
  args: process.argv.slice(2),
  options: {
    lmdb: { type: 'boolean', default: false },
    count: { type: 'string', default: '2000' },
    top: { type: 'string', default: '25' },
    set: { type: 'string', multiple: true },
  },
});
const N = Number(opts.count);
setQuiet(true);
const dns = await startDnsServer();
const sink = await startSink({ tls: 'none' });
const pg = await startPgServer();
const admin = new SQL({ url: pg.url('postgres'), max: 1 });
await admin.unsafe(`ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'`);
// `--set name=value` (repeatable): server settings to try (`ALTER SYSTEM`, applied by the restart below).
for (const kv of opts.set ?? []) {
  const [name, value] = kv.split('=');
  if (!name || value === undefined || !/^[a-z_.]+$/.test(name)) throw new Error(`--set name=value, not ${kv}`);
  await admin.unsafe(`ALTER SYSTEM SET ${name} = '${value.replace(/'/g, "''")}'`);
}
await admin.close();
pg.stop();
await pg.start();
const url = await pg.database('prof');
const db = new SQL({ url, max: 1 });
await db.unsafe('CREATE EXTENSION pg_stat_statements');
// Planning time too: a statement planned again at each call (a custom plan) costs that at each call.
await db.unsafe('ALTER SYSTEM SET pg_stat_statements.track_planning = on');
await db.unsafe('SELECT pg_reload_conf()');
const target = await startChild(tempDir('posthorn-pgprof-'), {
  POSTHORN_DNS_SERVERS: dns.address,
  POSTHORN_DELIVERY_MX_PORT: String(sink.port),
  POSTHORN_SMTP_HOSTNAME: 'mx.posthorn.test',
  ...(opts.lmdb ? {} : { POSTHORN_DATABASE_URL: url }),
});
await verifiedSendingDomain(target, dns.zone, 'bench.test');
await call(target, 'POST', '/queue/dest.test/hold');
let seq = 0;
const send = () => {
  const n = ++seq;
  return call(target, 'POST', '/emails', {
    from: 'Bench <bench@bench.test>',
    to: `user${n}@dest.test`,
    subject: `Benchmark ${n}`,
    html: `<p>Hello number ${n}</p>`,
  });
};
await inParallel(16, 200, send); // warm-up, accepted only
await Bun.sleep(1000);
const threads = () => {
  const m = new Map<string, number>();
  for (const t of threadCpu(target.pid).values()) m.set(t.name, (m.get(t.name) ?? 0) + t.seconds);
  return m;
};
let cpu0 = { ph: processCpu(target.pid).total, pg: postgresCpu(), self: process.cpuUsage(), th: threads() };
const cpuReport = (per: number) => {
  const ph = processCpu(target.pid).total,
    pg = postgresCpu(),
    self = process.cpuUsage(cpu0.self),
    th = threads();
  const parts = [...th]
    .map(([n, s]) => [n, s - (cpu0.th.get(n) ?? 0)] as const)
    .filter(([, s]) => s > 0.05)
    .map(([n, s]) => `${n} ${fmt((s / per) * 1e6)}`);
  const pgParts = [...pg.kinds]
    .map(([n, s]) => [n, s - (cpu0.pg.kinds.get(n) ?? 0)] as const)
    .filter(([, s]) => s > 0.01)
    .map(([n, s]) => `${n} ${fmt((s / per) * 1e6)}`);
  console.log(
    `CPU per email: posthorn ${fmt(((ph - cpu0.ph) / per) * 1e6)} µs (${parts.join(', ')}), postgres ${fmt(((pg.total - cpu0.pg.total) / per) * 1e6)} µs (${pgParts.join(', ')}; ${fmt((pg.wakes - cpu0.pg.wakes) / per, 1)} wake-ups), bench ${fmt((self.user + self.system) / per)} µs`,
  );
  cpu0 = { ph, pg, self: process.cpuUsage(), th };
};
const report = async (label: string, per: number) => {
  cpuReport(per);
  const rows = await db.unsafe(
    `SELECT calls, total_exec_time AS ms, total_plan_time AS plan, plans, rows, regexp_replace(query, '\\s+', ' ', 'g') AS q FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) ORDER BY calls DESC LIMIT ${Number(opts.top)}`,
  );
  const [tot] = await db.unsafe(
    `SELECT sum(calls)::bigint AS calls, sum(total_exec_time) AS ms, sum(total_plan_time) AS plan, sum(plans)::bigint AS plans FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
  );
  const [xact] = await db.unsafe(`SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()`);
  // Row writes per table since the start (updates in place on the page, HOT, write no index entry).
  const tables = await db.unsafe(
    `SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del FROM pg_stat_user_tables WHERE n_tup_ins + n_tup_upd + n_tup_del > 0 ORDER BY n_tup_ins + n_tup_upd DESC LIMIT 8`,
  );
  console.log(
    `rows written so far (inserted/updated (HOT)/deleted): ${tables.map((t: Record<string, string>) => `${t.relname} ${t.n_tup_ins}/${t.n_tup_upd} (${t.n_tup_hot_upd})/${t.n_tup_del}`).join(', ')}`,
  );
  console.log(
    `\n== ${label}: ${fmt(Number(tot.calls) / per, 2)} statements per email, ${fmt(Number(tot.ms) / per, 3)} ms exec per email, ${fmt(Number(tot.plan) / per, 3)} ms planning (${fmt(Number(tot.plans) / per, 2)} plans) per email`,
  );
  for (const r of rows)
    console.log(
      `${fmt(Number(r.calls) / per, 2).padStart(7)}  ${fmt((Number(r.ms) / Number(r.calls)) * 1000, 0).padStart(6)}µs  ${fmt((Number(r.plans) / Number(r.calls)) * 100, 0).padStart(4)}% planned ${fmt((Number(r.plan) / Math.max(1, Number(r.plans))) * 1000, 0).padStart(4)}µs  ${String(r.q).slice(0, 150)}`,
    );
  return Number(xact.xact_commit);
};
await db.unsafe('SELECT pg_stat_statements_reset()');
cpu0 = { ph: processCpu(target.pid).total, pg: postgresCpu(), self: process.cpuUsage(), th: threads() };
let x0 = Number((await db.unsafe(`SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()`))[0].xact_commit);
let t0 = performance.now();
await inParallel(16, N, send);
const acc = N / ((performance.now() - t0) / 1000);
await Bun.sleep(500);
let x1 = await report(`accept ${N} (held), ${fmt(acc)}/s`, N);
console.log(`commits per email ${fmt((x1 - x0) / N, 2)}`);
await db.unsafe('SELECT pg_stat_statements_reset()');
cpu0 = { ph: processCpu(target.pid).total, pg: postgresCpu(), self: process.cpuUsage(), th: threads() };
x0 = x1;
const base = sink.messages.length;
t0 = performance.now();
await call(target, 'POST', '/queue/dest.test/release');
while (sink.messages.length - base < N + 200) await Bun.sleep(50);
const del = (N + 200) / ((performance.now() - t0) / 1000);
await Bun.sleep(1000);
x1 = await report(`deliver ${N + 200}, ${fmt(del)}/s`, N + 200);
console.log(`commits per email ${fmt((x1 - x0) / (N + 200), 2)}`);
await target.stop();
await db.close();
await sink.close();
await dns.close();
pg.destroy();
process.exit(0);
