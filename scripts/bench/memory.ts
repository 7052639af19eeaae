#!/usr/bin/env bun
/**
 * Memory benchmark — `npm run bench:memory` (= `bun scripts/bench/memory.ts`).
 *
 *   npm run bench:memory                               2,000 emails with a 5 MB attachment each
 *   npm run bench:memory -- --count 300 --size 5 --hold 15
 *   npm run bench:memory -- --count 40 --size 13 --encoding buffer
 *
 * How much memory the server holds while large mail waits in the queue, and whether it stays
 * responsive: `--count` emails, each with one `--size` MB attachment, are sent through POST /emails
 * to a destination (the relay, an smtp-server on loopback) that answers every message `451 4.3.0`
 * after its DATA — so every attempt carries the whole message and every email stays queued,
 * retried every `--retry` (default 5 s, so attempts keep running). The server runs as a child
 * process (`bun src/main.ts serve`, fresh LMDB); its RSS is read from /proc and `GET /health` is
 * timed every 200 ms — on a thread of this process's own (health-probe.ts), so that building and
 * sending the bodies here does not count as the server's latency — while the emails are sent and
 * for `--hold` seconds after the last one.
 * Reported: peak and final RSS, /health latency percentiles, attempts the destination saw.
 * `--encoding buffer` sends each attachment as a Node Buffer in JSON, `{"type":"Buffer","data":[…]}`
 * (docs/api.md §2 item 16: the SDK before 6.37), about 3.6 characters of JSON per random byte, so
 * at most 13 MB fit in the 50 MB body; base64 (the default) is 1.33 characters per byte.
 * `--trace` has each thread of the server log its heap and its collections (src/limits/memory.ts,
 * POSTHORN_MEMORY_TRACE) and reports them per thread (0 the HTTP thread, 1 the back office, the
 * others signing threads).
 * The server runs with the allocator settings of the shipped unit (scripts/posthorn.service's
 * `Environment=MIMALLOC_…` lines: MIMALLOC_PURGE_DELAY=0, freed memory returned to the system at
 * once), as a VPS runs it; `--allocator default` leaves them out (or set one in this process's
 * environment to override it).
 * Needs about count × size × 2.4 of free disk (the stored attachment and the composed message).
 * Nothing leaves 127.0.0.1.
 */
import { parseArgs } from 'node:util';
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { SMTPServer } from 'smtp-server';
import { startChild, tempDir, call, fmt, mb, machine, fail, type DomainBody } from './lib';
import { startDnsServer } from '../../test/helpers/dns';
import { setQuiet } from '../../src/log';

const { values: opts } = parseArgs({
  args: process.argv.slice(2),
  options: {
    count: { type: 'string', default: '2000' },
    size: { type: 'string', default: '5' },
    hold: { type: 'string', default: '20' },
    retry: { type: 'string', default: '5s' },
    concurrency: { type: 'string', default: '4' },
    encoding: { type: 'string', default: 'base64' },
    trace: { type: 'boolean', default: false },
    allocator: { type: 'string', default: 'unit' },
  },
  strict: true,
});
const COUNT = Number(opts.count);
const SIZE_MB = Number(opts.size);
const HOLD = Number(opts.hold);
const CONCURRENCY = Number(opts.concurrency);
const BUFFER = opts.encoding === 'buffer';
if (
  !(
    Number.isInteger(COUNT) &&
    COUNT > 0 &&
    SIZE_MB > 0 &&
    SIZE_MB <= 30 &&
    HOLD >= 0 &&
    CONCURRENCY >= 1 &&
    (BUFFER || opts.encoding === 'base64') &&
    (opts.allocator === 'unit' || opts.allocator === 'default')
  )
)
  fail(
    'usage: bun scripts/bench/memory.ts [--count 2000] [--size 5] [--hold 20] [--retry 5s] [--concurrency 4] [--encoding base64|buffer] [--trace] [--allocator unit|default]',
  );

/** The allocator's settings the shipped systemd unit gives the server (`Environment=MIMALLOC_…=…`), unless set here already. */
function unitAllocatorEnv(): Record<string, string> {
  const unit = readFileSync(new URL('../posthorn.service', import.meta.url), 'utf8');
  const env: Record<string, string> = {};
  for (const m of unit.matchAll(/^Environment=(MIMALLOC_[A-Z_]+)=(\S*)$/gm)) if (process.env[m[1]!] === undefined) env[m[1]!] = m[2]!;
  return env;
}
const allocatorEnv = opts.allocator === 'unit' ? unitAllocatorEnv() : {};
setQuiet(true);

// The destination: takes every message in full, then refuses it for now.
let attempts = 0;
const destination = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS'],
  size: 60 * 1024 * 1024,
  logger: false,
  onData(stream, _session, callback) {
    stream.on('data', () => {});
    stream.on('end', () => {
      attempts++;
      callback(Object.assign(new Error('4.3.0 try again later'), { responseCode: 451 }));
    });
  },
});
const destPort = await new Promise<number>((resolve) =>
  destination.listen(0, '127.0.0.1', () => resolve((destination.server.address() as { port: number }).port)),
);

const dns = await startDnsServer();
const traceFile = opts.trace ? `${tempDir('posthorn-bench-memory-trace-')}/trace.txt` : null;
const target = await startChild(tempDir('posthorn-bench-memory-'), {
  ...allocatorEnv,
  ...(traceFile ? { POSTHORN_MEMORY_TRACE: traceFile } : {}),
  POSTHORN_DNS_SERVERS: dns.address,
  POSTHORN_DELIVERY_MODE: 'relay',
  POSTHORN_DELIVERY_RELAY_URL: `smtp://127.0.0.1:${destPort}`,
  POSTHORN_DELIVERY_RETRY_SCHEDULE: opts.retry!,
  POSTHORN_SMTP_HOSTNAME: 'mx.posthorn.test',
});
// A sending domain, verified through the DNS server in this process.
const domain = await call<DomainBody>(target, 'POST', '/domains', { name: 'bench.test' });
dns.zone.publish('bench.test', domain.records);
await call(target, 'POST', `/domains/${domain.id}/verify`);
for (let i = 0; (await call<DomainBody>(target, 'GET', `/domains/${domain.id}`)).status !== 'verified'; i++) {
  if (i > 100) fail('bench.test did not verify');
  await Bun.sleep(100);
}

// Samples: RSS and /health latency every 200 ms, taken on a thread of their own (health-probe.ts).
const rss: number[] = [];
const anon: number[] = [];
const health: number[] = [];
const probe = new Worker(new URL('./health-probe.ts', import.meta.url).href);
const probed = Promise.withResolvers<void>();
probe.onmessage = (e: MessageEvent<'done' | { rss: number; anon: number; health: number }>) => {
  if (e.data === 'done') return probed.resolve();
  rss.push(e.data.rss);
  anon.push(e.data.anon);
  health.push(e.data.health);
};
probe.postMessage({ url: target.url, pid: target.pid });

console.log('Posthorn memory benchmark');
console.log(`  command   bun scripts/bench/memory.ts ${process.argv.slice(2).join(' ')}`);
console.log(`  server    ${target.version}, child process, fresh LMDB, logs off, relay mode, retry every ${opts.retry}`);
console.log(`  machine   ${machine()}`);
const allocatorSet = Object.entries({ ...allocatorEnv, ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('MIMALLOC_'))) });
console.log(
  `  allocator ${allocatorSet.length ? allocatorSet.map(([k, v]) => `${k}=${v}`).join(' ') : "mimalloc's defaults"}${opts.allocator === 'unit' ? ' (scripts/posthorn.service)' : ''}`,
);
console.log(
  `  load      ${fmt(COUNT)} emails × one ${SIZE_MB} MB attachment (${BUFFER ? 'a Buffer in JSON' : 'base64'}), ${CONCURRENCY} senders; the destination answers 451 after DATA\n`,
);

const rssBefore = target.rss();
// One random attachment, encoded once: the server decodes and stores each copy separately. Each
// body is put together as bytes (a copy), not as a string to encode again for every request.
const bytes = randomBytes(Math.round(SIZE_MB * 1024 * 1024));
const content = Buffer.from(JSON.stringify(BUFFER ? bytes : bytes.toString('base64')));
let next = 0;
const sendStart = performance.now();
await Promise.all(
  Array.from({ length: CONCURRENCY }, async () => {
    for (let i = next++; i < COUNT; i = next++) {
      const fields = JSON.stringify({ from: 'Bench <bench@bench.test>', to: `user${i}@dest.test`, subject: `Large ${i}`, text: 'See the attachment.' });
      const body = Buffer.concat([Buffer.from(`${fields.slice(0, -1)},"attachments":[{"filename":"file-${i}.bin","content":`), content, Buffer.from('}]}')]);
      if (i === 0) console.log(`  body      ${mb(body.byteLength)} of JSON per request`);
      await call(target, 'POST', '/emails', body);
      if ((i + 1) % 250 === 0) console.log(`  sent ${fmt(i + 1)} — RSS ${mb(target.rss())}`);
    }
  }),
);
const sendSeconds = (performance.now() - sendStart) / 1000;
const rssSent = rss.length;
const healthSent = health.length;
await Bun.sleep(HOLD * 1000);
probe.postMessage('stop');
await probed.promise;
probe.terminate();

const pct = (list: number[], p: number) => {
  const s = [...list].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};
const peak = (list: number[]) => list.reduce((a, b) => Math.max(a, b), 0);
const queued = await call<{ data: { queued: number; retrying: number }[] }>(target, 'GET', '/queue');
console.log(`\nsent ${fmt(COUNT)} emails in ${fmt(sendSeconds, 1)} s (${fmt(COUNT / sendSeconds, 1)}/s); destination saw ${fmt(attempts)} full attempts`);
console.log(
  `queue: ${fmt(queued.data.reduce((n, d) => n + d.queued, 0))} emails waiting, ${fmt(queued.data.reduce((n, d) => n + d.retrying, 0))} of them retried at least once`,
);
const parts = target.rssParts();
console.log(
  `RSS     anonymous (heap, buffers): peak ${mb(peak(anon))}, at the end ${mb(parts.anon)}; file pages (LMDB map, code) at the end ${mb(parts.file)}`,
);
console.log(
  `RSS     before ${mb(rssBefore)}  peak while sending ${mb(peak(rss.slice(0, rssSent)))}  peak after ${mb(peak(rss.slice(rssSent)))}  at the end ${mb(rss.at(-1)!)}`,
);
console.log(
  `/health while sending p50 ${fmt(pct(health.slice(0, healthSent), 50), 1)} ms  p99 ${fmt(pct(health.slice(0, healthSent), 99), 1)} ms  max ${fmt(peak(health.slice(0, healthSent)), 1)} ms;` +
    `  after p50 ${fmt(pct(health.slice(healthSent), 50), 1)} ms  max ${fmt(peak(health.slice(healthSent)), 1)} ms`,
);
if (traceFile) {
  // Per thread: its heap at its highest, and its collections (how often, from how much to how much, how long).
  const threads = new Map<string, { peak: number; gcs: { before: number; after: number; ms: number }[] }>();
  for (const line of (await Bun.file(traceFile).text()).split('\n')) {
    const f = line.split(' ');
    if (f.length < 4) continue;
    const t = threads.get(f[1]!) ?? { peak: 0, gcs: [] };
    threads.set(f[1]!, t);
    if (f[2] === 'gc') t.gcs.push({ before: Number(f[3]), after: Number(f[5]), ms: Number.parseFloat(f[6]!) });
    else t.peak = Math.max(t.peak, Number(f[3]));
  }
  for (const [id, t] of [...threads].sort()) {
    const med = (k: 'before' | 'after' | 'ms') =>
      pct(
        t.gcs.map((g) => g[k]),
        50,
      );
    const gcs = t.gcs.length
      ? `${t.gcs.length} collections, median ${mb(med('before'))} → ${mb(med('after'))}, ${fmt(med('ms'), 0)} ms (max ${fmt(peak(t.gcs.map((g) => g.ms)), 0)} ms)`
      : 'no collection forced';
    console.log(`thread ${id}  heap peak ${mb(t.peak)}; ${gcs}`);
  }
}
await target.stop();
destination.close();
await dns.close();
process.exit(0);
