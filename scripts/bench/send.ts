#!/usr/bin/env bun
/**
 * Sending benchmark — `npm run bench:send` (= `bun scripts/bench/send.ts`).
 *
 *   npm run bench:send                       3 s per run; single sends at concurrency 1,16,64; batches of 100
 *   npm run bench:send -- --seconds 5
 *
 * Emails accepted per second through POST /emails (each a durable, flushed commit) and through
 * POST /emails/batch (100 per request), then how fast the delivery engine drains what was accepted
 * to an MTA on loopback (messages delivered per second, DKIM-signed, direct MX delivery resolved
 * through a DNS server in this process), with the server's RSS. Posthorn runs as a child process;
 * the DNS server and the sink (smtp-server, no TLS) run here. Nothing leaves 127.0.0.1.
 */
import { parseArgs } from 'node:util';
import { verifiedSendingDomain, startChild, tempDir, call, closedLoop, fmt, mb, machine, table, fail } from './lib';
import { startDnsServer } from '../../test/helpers/dns';
import { startSink } from '../../test/helpers/sink';
import { setQuiet } from '../../src/log';

const { values: opts } = parseArgs({
  args: process.argv.slice(2),
  options: { seconds: { type: 'string', default: '3' }, concurrency: { type: 'string', default: '1,16,64' } },
  strict: true,
});
const SECONDS = Number(opts.seconds);
const LEVELS = opts.concurrency!.split(',').map(Number);
if (!(SECONDS > 0 && SECONDS <= 600) || LEVELS.some((n) => !Number.isInteger(n) || n < 1))
  fail('usage: bun scripts/bench/send.ts [--seconds 3] [--concurrency 1,16,64]');
setQuiet(true);

const dns = await startDnsServer();
const sink = await startSink({ tls: 'none' });
const target = await startChild(tempDir('posthorn-bench-send-'), {
  POSTHORN_DNS_SERVERS: dns.address,
  POSTHORN_DELIVERY_MX_PORT: String(sink.port),
  POSTHORN_SMTP_HOSTNAME: 'mx.posthorn.test',
});

await verifiedSendingDomain(target, dns.zone, 'bench.test');

let seq = 0;
const email = () => ({ from: 'Bench <bench@bench.test>', to: `user${++seq}@dest.test`, subject: `Benchmark ${seq}`, html: `<p>Hello number ${seq}</p>` });

console.log('Posthorn sending benchmark');
console.log(`  command   bun scripts/bench/send.ts ${process.argv.slice(2).join(' ')}`);
console.log(`  server    ${target.version}, child process, fresh LMDB, logs off; delivery engine running`);
console.log(`  machine   ${machine()}`);
console.log(`  sink      smtp-server on 127.0.0.1:${sink.port} (no TLS), MX via the in-process DNS server\n`);
const row = table([28, 5, 9, 11, 8, 8, 10]);
console.log(row(['accepted through', 'conc', 'requests', 'emails/s', 'p50 ms', 'p99 ms', 'RSS after']));
let accepted = 0;
const started = performance.now();
for (const n of LEVELS) {
  const r = await closedLoop(n, SECONDS, () => call(target, 'POST', '/emails', email()));
  accepted += r.requests;
  console.log(row(['POST /emails', String(n), fmt(r.requests), fmt(r.requests / r.seconds), fmt(r.p50, 2), fmt(r.p99, 2), mb(target.rss())]));
}
const batch = await closedLoop(4, SECONDS, () => call(target, 'POST', '/emails/batch', Array.from({ length: 100 }, email)));
accepted += batch.requests * 100;
console.log(
  row([
    'POST /emails/batch (×100)',
    '4',
    fmt(batch.requests),
    fmt((batch.requests * 100) / batch.seconds),
    fmt(batch.p50, 2),
    fmt(batch.p99, 2),
    mb(target.rss()),
  ]),
);

// Delivery: everything accepted above, drained to the sink.
const atLoadEnd = sink.messages.length;
const drainStart = performance.now();
let peak = target.rss();
while (sink.messages.length < accepted) {
  if (performance.now() - drainStart > 300_000) fail(`only ${sink.messages.length} of ${accepted} delivered after 5 minutes`);
  await Bun.sleep(200);
  peak = Math.max(peak, target.rss());
}
const total = (performance.now() - started) / 1000;
const drain = (performance.now() - drainStart) / 1000;
console.log(`\ndelivered ${fmt(accepted)} emails to the sink: ${fmt(accepted / total)} msg/s over the whole run (${fmt(atLoadEnd)} during the load phases),`);
console.log(`${fmt((accepted - atLoadEnd) / drain)} msg/s while draining the remaining ${fmt(accepted - atLoadEnd)}; server RSS peak ${mb(peak)}`);
await target.stop();
await sink.close();
await dns.close();
process.exit(0);
