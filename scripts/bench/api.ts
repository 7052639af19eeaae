#!/usr/bin/env bun
/**
 * HTTP API benchmark — `npm run bench:api` (= `bun scripts/bench/api.ts`).
 *
 *   npm run bench:api                                   5 s per run, concurrency 1,16,64
 *   npm run bench:api -- --seconds 2 --concurrency 1,32
 *
 * Requests/s and p50/p99 latency of a create endpoint (POST /segments {name}) and a list endpoint
 * (GET /segments?limit=20) at several concurrency levels (N workers over keep-alive fetch, each
 * with one request in flight), and the server's RSS after each run. Posthorn runs as a child
 * process (`bun src/main.ts serve`, fresh data dir, rate limit out of the way, logs off), so the
 * load generator has its own process as a real client would. Any non-2xx answer aborts the run.
 */
import { parseArgs } from 'node:util';
import { startChild, tempDir, call, closedLoop, fmt, mb, machine, table, fail, RATE_LIMIT } from './lib';

const { values: opts } = parseArgs({
  args: process.argv.slice(2),
  options: { seconds: { type: 'string', default: '5' }, concurrency: { type: 'string', default: '1,16,64' }, warmup: { type: 'string', default: '0.5' } },
  strict: true,
});
const SECONDS = Number(opts.seconds);
const WARMUP = Number(opts.warmup);
const LEVELS = opts.concurrency!.split(',').map(Number);
if (!(SECONDS > 0 && SECONDS <= 600) || !(WARMUP >= 0) || LEVELS.some((n) => !Number.isInteger(n) || n < 1 || n > 1024))
  fail('usage: bun scripts/bench/api.ts [--seconds 5] [--concurrency 1,16,64] [--warmup 0.5]');

const dataDir = tempDir('posthorn-bench-api-');
const target = await startChild(dataDir);
let seq = 0;
const endpoints = [
  { name: 'POST /segments', op: () => call(target, 'POST', '/segments', { name: `Bench segment ${++seq}` }) },
  { name: 'GET /segments?limit=20', op: () => call(target, 'GET', '/segments?limit=20') },
];

console.log('Posthorn HTTP API benchmark');
console.log(`  command   bun scripts/bench/api.ts ${process.argv.slice(2).join(' ')}`);
console.log(`  server    ${target.version}, child process on 127.0.0.1, fresh LMDB, rate limit ${fmt(RATE_LIMIT)}/s, logs off`);
console.log(`  machine   ${machine()}`);
console.log(`  load      keep-alive fetch, N workers with one request each in flight, ${SECONDS} s per run after ${WARMUP} s warm-up`);
console.log(`  RSS start ${mb(target.rss())}\n`);
const row = table([24, 5, 9, 9, 8, 8, 8, 10]);
console.log(row(['endpoint', 'conc', 'requests', 'req/s', 'p50 ms', 'p99 ms', 'max ms', 'RSS after']));
for (const ep of endpoints) {
  for (const n of LEVELS) {
    if (WARMUP > 0) await closedLoop(n, WARMUP, ep.op);
    const r = await closedLoop(n, SECONDS, ep.op);
    console.log(row([ep.name, String(n), fmt(r.requests), fmt(r.requests / r.seconds), fmt(r.p50, 2), fmt(r.p99, 2), fmt(r.max, 1), mb(target.rss())]));
  }
}
await target.stop();
process.exit(0);
