#!/usr/bin/env bun
/**
 * Tracking benchmark — `npm run bench:tracking` (= `bun scripts/bench/tracking.ts`).
 *
 *   npm run bench:tracking                        3 s per run, concurrency 16,64
 *   npm run bench:tracking -- --seconds 5 --concurrency 1,16
 *
 * Open-pixel hits/s (GET /t/o/…) and click redirects/s (GET /t/c/…) of a real tracked email: a
 * domain with open and click tracking is verified through an in-process DNS server, one email is
 * delivered to a loopback MTA (smtp-server), and its pixel and link are read from the delivered
 * html. Every hit is recorded (an event, a webhook-free commit). The reference is a bare Bun.serve
 * in this process answering the same bytes (a GIF, a 302), so the figures read as a ratio on a
 * shared, noisy machine. Nothing leaves 127.0.0.1.
 */
import { parseArgs } from 'node:util';
import { simpleParser } from 'mailparser';
import { verifiedSendingDomain, startChild, tempDir, call, closedLoop, fmt, mb, machine, table, fail } from './lib';
import { startDnsServer } from '../../test/helpers/dns';
import { startSink } from '../../test/helpers/sink';
import { setQuiet } from '../../src/log';
import { PIXEL } from '../../src/api/resources/tracking';

const { values: opts } = parseArgs({
  args: process.argv.slice(2),
  options: { seconds: { type: 'string', default: '3' }, concurrency: { type: 'string', default: '16,64' } },
  strict: true,
});
const SECONDS = Number(opts.seconds);
const LEVELS = opts.concurrency!.split(',').map(Number);
if (!(SECONDS > 0 && SECONDS <= 600) || LEVELS.some((n) => !Number.isInteger(n) || n < 1))
  fail('usage: bun scripts/bench/tracking.ts [--seconds 3] [--concurrency 16,64]');
setQuiet(true);

const UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Thunderbird/128.5.0';
const dns = await startDnsServer();
const sink = await startSink({ tls: 'none' });
const target = await startChild(tempDir('posthorn-bench-tracking-'), {
  POSTHORN_DNS_SERVERS: dns.address,
  POSTHORN_DELIVERY_MX_PORT: String(sink.port),
  POSTHORN_SMTP_HOSTNAME: 'mx.posthorn.test',
  POSTHORN_TRACKING_PREFETCH_WINDOW: '0s',
});
await verifiedSendingDomain(target, dns.zone, 'bench.test');
const domains = await call<{ data: { id: string }[] }>(target, 'GET', '/domains');
await call(target, 'PATCH', `/domains/${domains.data[0].id}`, { open_tracking: true, click_tracking: true });
const sent = await call<{ id: string }>(target, 'POST', '/emails', {
  from: 'bench@bench.test',
  to: 'reader@dest.test',
  subject: 'Tracked',
  html: '<p><a href="https://shop.test/item?id=42&amp;ref=mail">Buy</a></p>',
});
await sink.waitFor(1, 30_000);
const html = String((await simpleParser(sink.messages[0].raw)).html);
const pixel = /<img src="([^"]+\/t\/o\/[^"]+)"/.exec(html)?.[1];
const link = /<a href="([^"]+\/t\/c\/[^"]+)"/.exec(html)?.[1];
if (!pixel || !link) fail('the delivered html has no tracking pixel or link');

const bare = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch: (req) =>
    new URL(req.url).pathname.startsWith('/t/o/')
      ? new Response(PIXEL, { headers: { 'content-type': 'image/gif', 'cache-control': 'no-store' } })
      : new Response(null, { status: 302, headers: { location: 'https://shop.test/item?id=42&ref=mail' } }),
});
const on = (base: string, url: string) => base + new URL(url).pathname;
const hit = async (url: string, status: number) => {
  const res = await fetch(url, { redirect: 'manual', headers: { 'user-agent': UA } });
  await res.arrayBuffer();
  if (res.status !== status) fail(`${url} answered ${res.status}`);
};

console.log('Posthorn tracking benchmark');
console.log(`  command   bun scripts/bench/tracking.ts ${process.argv.slice(2).join(' ')}`);
console.log(`  server    ${target.version}, child process, fresh LMDB, logs off; every hit recorded (event + counters, one commit)`);
console.log(`  reference bare Bun.serve in the bench process answering the same GIF / 302`);
console.log(`  machine   ${machine()}\n`);
const row = table([26, 5, 9, 10, 8, 8, 10, 9]);
console.log(row(['endpoint', 'conc', 'requests', 'req/s', 'p50 ms', 'p99 ms', 'RSS after', 'vs bare']));
for (const [name, url, status] of [
  ['GET /t/o (pixel)', pixel, 200],
  ['GET /t/c (click, 302)', link, 302],
] as const) {
  for (const n of LEVELS) {
    await closedLoop(n, 0.5, () => hit(on(bare.url.origin, url), status));
    const ref = await closedLoop(n, SECONDS, () => hit(on(bare.url.origin, url), status));
    await closedLoop(n, 0.5, () => hit(on(target.url, url), status));
    const r = await closedLoop(n, SECONDS, () => hit(on(target.url, url), status));
    const rps = r.requests / r.seconds;
    const refRps = ref.requests / ref.seconds;
    console.log(row([name, String(n), fmt(r.requests), fmt(rps), fmt(r.p50, 2), fmt(r.p99, 2), mb(target.rss()), `${fmt((rps / refRps) * 100)} %`]));
    console.log(row(['  bare Bun.serve', String(n), fmt(ref.requests), fmt(refRps), fmt(ref.p50, 2), fmt(ref.p99, 2), '', '']));
  }
}
// Every hit was recorded: the email's event log grew by one event per hit.
await Bun.sleep(500);
const events = await call<{ last_event: string }>(target, 'GET', `/emails/${sent.id}`);
console.log(`\nlast_event of the tracked email: ${events.last_event}`);
bare.stop(true);
await target.stop();
await sink.close();
await dns.close();
process.exit(0);
