#!/usr/bin/env bun
/**
 * Where the CPU of accepting and delivering goes — `bun scripts/bench/profile-deliver.ts [--mode relay|direct] [--count 6000] [--warm-up 10000]`.
 *
 * bench:compare's deliver part, one round, with the CPU counted: `posthorn serve` in a child
 * process accepts `--count` emails through POST /emails (16 at a time) while its delivery engine
 * delivers them, DKIM-signed, to Postfix's `smtp-sink` — through `delivery.relay_url` (relay) or
 * dest.test's MX in the bench's DNS server (direct, TTL 300 s as a real zone has). `--warm-up`
 * emails go the same way first, unmeasured (the JIT's work on a fresh process is not what a
 * delivery costs). Printed: messages per second from the first accept to the last delivery, and
 * the CPU per message of each thread of the server (main: HTTP; the back office and the signing
 * thread are both `Worker`, the busier one is the back office; Bun Pool: LMDB's commits;
 * JITWorker: the JIT compiler), of this process (the load generator and the DNS server) and of
 * the sink, from /proc. On two cores the sum is what bounds the rate.
 */
import { parseArgs } from 'node:util';
import { startChild, tempDir, call, freePort, fail, verifiedSendingDomain, processCpu, DEST_TTL_S } from './lib';
import { startSmtpSink } from './postfix';
import { startDnsServer } from '../../test/helpers/dns';
import { setQuiet } from '../../src/log';

const { values: opts } = parseArgs({
  args: process.argv.slice(2),
  options: { mode: { type: 'string', default: 'relay' }, count: { type: 'string', default: '6000' }, 'warm-up': { type: 'string', default: '10000' } },
  strict: true,
});
const COUNT = Number(opts.count);
const WARM_UP = Number(opts['warm-up']);
if (opts.mode !== 'relay' && opts.mode !== 'direct') fail('--mode must be relay or direct');
if (!(Number.isInteger(COUNT) && COUNT > 0) || !(Number.isInteger(WARM_UP) && WARM_UP >= 0)) fail('--count and --warm-up must be whole numbers');
setQuiet(true);

const dns = await startDnsServer();
dns.zone.setNegativeTtl(DEST_TTL_S);
const sink = startSmtpSink(await freePort());
const target = await startChild(tempDir('posthorn-profile-deliver-'), {
  POSTHORN_DNS_SERVERS: dns.address,
  POSTHORN_SMTP_HOSTNAME: 'mx.posthorn.test',
  ...(opts.mode === 'relay'
    ? { POSTHORN_DELIVERY_MODE: 'relay', POSTHORN_DELIVERY_RELAY_URL: `smtp://127.0.0.1:${sink.port}` }
    : { POSTHORN_DELIVERY_MX_PORT: String(sink.port) }),
});
await verifiedSendingDomain(target, dns.zone, 'bench.test');

let seq = 0;
const email = () => ({
  from: 'Bench <bench@bench.test>',
  to: [`user${++seq}@dest.test`],
  subject: `Benchmark ${seq}`,
  html: `<p>Hello number ${seq}</p>`,
  text: `Hello number ${seq}`,
});
async function accept(n: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next++ < n) await call(target, 'POST', '/emails', email());
    }),
  );
}
async function delivered(n: number): Promise<void> {
  const deadline = performance.now() + 600_000;
  while (sink.count() < n) {
    if (performance.now() > deadline) fail(`only ${sink.count()} of ${n} messages arrived within 10 minutes`);
    await Bun.sleep(20);
  }
}
const ownCpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

await accept(WARM_UP);
await delivered(WARM_UP);
const t0 = performance.now();
const before = { io: target.io(), threads: target.threadCpu(), own: ownCpu(), sink: processCpu(sink.pid).total };
await accept(COUNT);
const acceptedIn = (performance.now() - t0) / 1000;
await delivered(WARM_UP + COUNT);
const seconds = (performance.now() - t0) / 1000;
const after = { io: target.io(), threads: target.threadCpu(), own: ownCpu(), sink: processCpu(sink.pid).total };
await target.stop();
sink.stop();
await dns.close();

const per = (s: number) => `${Math.round((s / COUNT) * 1e6)} µs`;
const [mainTid] = [...after.threads.keys()].sort((a, b) => a - b);
const threads = [...after.threads]
  .map(([tid, t]) => ({ name: tid === mainTid ? 'main' : t.name, seconds: t.seconds - (before.threads.get(tid)?.seconds ?? 0) }))
  .filter((t) => t.seconds > 0)
  .sort((a, b) => b.seconds - a.seconds);
const server = threads.reduce((n, t) => n + t.seconds, 0);
const own = after.own - before.own;
const sinkCpu = after.sink - before.sink;
console.log(
  `${opts.mode}: ${Math.round(COUNT / seconds)} msg/s (${COUNT} emails accepted in ${acceptedIn.toFixed(1)} s, delivered in ${seconds.toFixed(1)} s; ${WARM_UP} before, unmeasured)`,
);
console.log(
  `Disk per message: ${Math.round((after.io.writeBytes - before.io.writeBytes) / COUNT)} bytes written, ${((after.io.writeCalls - before.io.writeCalls) / COUNT).toFixed(1)} write calls`,
);
console.log(`CPU per message: server ${per(server)} (${threads.map((t) => `${t.name} ${per(t.seconds)}`).join(', ')})`);
console.log(`                 load generator and DNS ${per(own)}, smtp-sink ${per(sinkCpu)}; all ${per(server + own + sinkCpu)}`);
const asked = new Map<string, number>();
for (const q of dns.queries) asked.set(`${q.type} ${q.name}`, (asked.get(`${q.type} ${q.name}`) ?? 0) + 1);
console.log(`DNS queries: ${dns.queries.length} (${[...asked].map(([k, n]) => `${k} ×${n}`).join(', ')})`);
