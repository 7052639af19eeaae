#!/usr/bin/env bun
/**
 * SMTP submission benchmark — `npm run bench:smtp` (= `bun scripts/bench/smtp.ts`).
 *
 *   npm run bench:smtp                              3 s per run, concurrency 1,4,16
 *   npm run bench:smtp -- --seconds 5 --concurrency 1,8
 *
 * Messages accepted per second over authenticated submission (STARTTLS + AUTH PLAIN with an API
 * key, docs/api.md §17), each answered `250 2.0.0 OK <id>` only after its durable commit,
 * through a nodemailer pool with as many reused connections as the concurrency (N senders, one
 * message each in flight), then one run over implicit TLS at the highest concurrency; with p50/p99
 * per message and the server's RSS. Posthorn runs as a child process with its delivery engine on
 * (to a loopback sink, MX through a DNS server in this process, as in send.ts). Nothing leaves
 * 127.0.0.1.
 */
import { parseArgs } from 'node:util';
import nodemailer from 'nodemailer';
import { verifiedSendingDomain, startChild, tempDir, closedLoop, freePort, fmt, mb, machine, table, fail } from './lib';
import { startDnsServer } from '../../test/helpers/dns';
import { startSink } from '../../test/helpers/sink';
import { setQuiet } from '../../src/log';

const { values: opts } = parseArgs({
  args: process.argv.slice(2),
  options: { seconds: { type: 'string', default: '3' }, concurrency: { type: 'string', default: '1,4,16' }, warmup: { type: 'string', default: '0.5' } },
  strict: true,
});
const SECONDS = Number(opts.seconds);
const WARMUP = Number(opts.warmup);
const LEVELS = opts.concurrency!.split(',').map(Number);
if (!(SECONDS > 0 && SECONDS <= 600) || !(WARMUP >= 0) || LEVELS.some((n) => !Number.isInteger(n) || n < 1 || n > 100))
  fail('usage: bun scripts/bench/smtp.ts [--seconds 3] [--concurrency 1,4,16] [--warmup 0.5]   (concurrency ≤ 100, the per-listener connection limit)');
setQuiet(true);

const dns = await startDnsServer();
const sink = await startSink({ tls: 'none' });
const [starttlsPort, tlsPort] = [await freePort(), await freePort()];
const target = await startChild(tempDir('posthorn-bench-smtp-'), {
  POSTHORN_DNS_SERVERS: dns.address,
  POSTHORN_DELIVERY_MX_PORT: String(sink.port),
  POSTHORN_SMTP_HOSTNAME: 'mx.posthorn.test',
  POSTHORN_SMTP_STARTTLS_PORTS: String(starttlsPort),
  POSTHORN_SMTP_TLS_PORTS: String(tlsPort),
});

await verifiedSendingDomain(target, dns.zone, 'bench.test');

// The listeners bind after HTTP answers; wait for the first greeting.
for (let i = 0; ; i++) {
  const probe = nodemailer.createTransport({ host: '127.0.0.1', port: starttlsPort, secure: false, tls: { rejectUnauthorized: false } } as never);
  if (
    await probe.verify().then(
      () => true,
      () => false,
    )
  )
    break;
  if (i > 100) fail(`no SMTP listener on 127.0.0.1:${starttlsPort}`);
  await Bun.sleep(100);
}

const pool = (port: number, secure: boolean, connections: number) =>
  nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    secure,
    auth: { user: 'resend', pass: target.apiKey },
    tls: { rejectUnauthorized: false },
    pool: true,
    maxConnections: connections,
    maxMessages: Infinity,
  } as never);

let seq = 0;
const message = () => {
  const n = ++seq;
  return {
    from: 'Bench <bench@bench.test>',
    to: `user${n}@dest.test`,
    subject: `SMTP benchmark ${n}`,
    text: `Hello number ${n}.\nThis message is about one kilobyte with its headers and the html part.\n`,
    html: `<p>Hello number <strong>${n}</strong>.</p><p>This message is about one kilobyte with its headers and the text part.</p>`,
  };
};

async function run(port: number, secure: boolean, n: number) {
  const t = pool(port, secure, n);
  const send = async () => {
    const info = await t.sendMail(message());
    if (!/^250 2\.0\.0 OK [0-9a-f-]{36}$/.test(info.response)) throw new Error(`unexpected reply: ${info.response}`);
  };
  if (WARMUP > 0) await closedLoop(n, WARMUP, send); // opens and authenticates the pool's connections
  const r = await closedLoop(n, SECONDS, send);
  t.close();
  return r;
}

console.log('Posthorn SMTP submission benchmark');
console.log(`  command   bun scripts/bench/smtp.ts ${process.argv.slice(2).join(' ')}`.trimEnd());
console.log(`  server    ${target.version}, child process on 127.0.0.1, fresh LMDB, logs off; delivery engine running (sink on loopback)`);
console.log(`  machine   ${machine()}`);
console.log(`  client    nodemailer pool, AUTH PLAIN with an API key, N reused connections with one message each in flight,`);
console.log(`            ${SECONDS} s per run after ${WARMUP} s warm-up; ~1 KB text+html messages; every reply 250 2.0.0 OK <id>`);
console.log(`  RSS start ${mb(target.rss())}\n`);
const row = table([26, 5, 9, 11, 8, 8, 10]);
console.log(row(['listener', 'conc', 'messages', 'messages/s', 'p50 ms', 'p99 ms', 'RSS after']));
let accepted = 0;
for (const n of LEVELS) {
  const r = await run(starttlsPort, false, n);
  accepted += r.requests;
  console.log(row([`STARTTLS :${starttlsPort}`, String(n), fmt(r.requests), fmt(r.requests / r.seconds), fmt(r.p50, 2), fmt(r.p99, 2), mb(target.rss())]));
}
const top = Math.max(...LEVELS);
const implicit = await run(tlsPort, true, top);
accepted += implicit.requests;
console.log(
  row([
    `implicit TLS :${tlsPort}`,
    String(top),
    fmt(implicit.requests),
    fmt(implicit.requests / implicit.seconds),
    fmt(implicit.p50, 2),
    fmt(implicit.p99, 2),
    mb(target.rss()),
  ]),
);
console.log(`\n${fmt(accepted)} messages accepted in the measured runs (warm-ups not counted); ${fmt(sink.messages.length)} delivered to the sink so far`);

await target.stop();
await sink.close();
await dns.close();
process.exit(0);
