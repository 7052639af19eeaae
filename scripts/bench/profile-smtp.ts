#!/usr/bin/env bun
/**
 * CPU profile of SMTP ingest — `bun scripts/bench/profile-smtp.ts [--part smtp|submission] [--count 4000] [--warm-up 1000] [--out DIR] [--no-profile] [--negative-ttl S]`.
 *
 * Runs `posthorn serve` under `bun --cpu-prof-md` with the load of bench:compare's part (smtp:
 * Postfix's smtp-source -s 16 -l 2048 to a receiving domain, plain SMTP, a new connection per
 * message; submission: STARTTLS + AUTH, a nodemailer pool of 16), stops it with SIGTERM and
 * prints the server's CPU time per message and where the Markdown profile was written (DIR, default
 * a temp dir; --no-profile: the CPU time without the profiler's own cost). The sender's domain has
 * no records: its SPF and DMARC lookups get negative answers, cached for --negative-ttl seconds
 * (the SOA's TTL and MINIMUM; default 0, never cached; bench:compare's zone keeps them 300 s, as
 * real zones do). Part smtp first sends --warm-up messages, unmeasured, as bench:compare does.
 * Also printed: the CPU per message of each thread (main: the listeners; Worker: the back office
 * and the signers; JITWorker: the JIT compiler; Bun Pool: LMDB's writes and flushes).
 */
import { parseArgs } from 'node:util';
import { join } from 'node:path';
import { readdirSync } from 'node:fs';
import nodemailer from 'nodemailer';
import { startChild, tempDir, call, freePort, fail, verifiedSendingDomain, type MetricsBody } from './lib';
import { runSmtpSource, startSmtpSink } from './postfix';
import { startDnsServer } from '../../test/helpers/dns';
import { setQuiet } from '../../src/log';

const { values: opts } = parseArgs({
  args: process.argv.slice(2),
  options: {
    part: { type: 'string', default: 'smtp' },
    count: { type: 'string', default: '4000' },
    out: { type: 'string' },
    'no-profile': { type: 'boolean', default: false },
    'negative-ttl': { type: 'string', default: '0' },
    'warm-up': { type: 'string', default: '1000' },
  },
  strict: true,
});
setQuiet(true);
const out = opts.out ?? tempDir('posthorn-profile-');
const count = Number(opts.count);
const dns = await startDnsServer();
// The test zone answers "no such name" with an SOA of TTL 0 (nothing cached); a real zone's is minutes.
dns.zone.setNegativeTtl(Number(opts['negative-ttl']));
const port = await freePort();
const sink = startSmtpSink(await freePort());
const target = await startChild(
  tempDir('posthorn-profile-data-'),
  {
    POSTHORN_DNS_SERVERS: dns.address,
    POSTHORN_SMTP_HOSTNAME: 'mx.posthorn.test',
    POSTHORN_SMTP_STARTTLS_PORTS: String(port),
    POSTHORN_DELIVERY_MODE: 'relay',
    POSTHORN_DELIVERY_RELAY_URL: `smtp://127.0.0.1:${sink.port}`,
  },
  opts['no-profile'] ? [] : ['--cpu-prof-md', `--cpu-prof-dir=${out}`],
);
const warmUp = Number(opts['warm-up']);
const received = async () => (await call<MetricsBody>(target, 'GET', '/emails/metrics?metrics=received')).totals.received;
const smtpSource = (n: number) => runSmtpSource(port, 'inbox@recv.test', n).catch((e: Error) => fail(e.message));
if (opts.part === 'smtp') {
  await call(target, 'POST', '/domains', { name: 'recv.test', capabilities: { sending: 'disabled', receiving: 'enabled' } });
  // Unmeasured, as bench:compare does: the JIT's work on a fresh process is not what ingest costs.
  if (warmUp > 0) {
    await smtpSource(warmUp);
    while ((await received()) < warmUp) await Bun.sleep(20);
  }
}
const t0 = performance.now();
const cpu0 = target.cpuSeconds();
const threads0 = target.threadCpu();
if (opts.part === 'smtp') {
  await smtpSource(count);
} else {
  await verifiedSendingDomain(target, dns.zone, 'bench.test');
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    secure: false,
    auth: { user: 'resend', pass: target.apiKey },
    tls: { rejectUnauthorized: false },
    pool: true,
    maxConnections: 16,
    maxMessages: Infinity,
  } as never);
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next++ < count)
        await transport.sendMail({ from: 'bench@bench.test', to: `user${next}@dest.test`, subject: `Benchmark ${next}`, text: 'Hello', html: '<p>Hello</p>' });
    }),
  );
  transport.close();
}
const wall = (performance.now() - t0) / 1000;
const cpuAnswered = target.cpuSeconds();
if (opts.part === 'smtp') {
  while ((await received()) < count + warmUp) await Bun.sleep(20);
}
const cpu1 = target.cpuSeconds();
const threads1 = target.threadCpu();
const per = (s: number) => `${((s / count) * 1e6).toFixed(0)} µs`;
console.log(
  `${opts.part}: ${Math.round(count / wall)} msg/s answered; server CPU per message until ${opts.part === 'smtp' ? 'all stored' : 'all answered'}: ` +
    `${per(cpu1.total - cpu0.total)} (user ${per(cpu1.user - cpu0.user)}, system ${per(cpu1.system - cpu0.system)}; ` +
    `until the last 250: ${per(cpuAnswered.total - cpu0.total)}, ${Math.round(((performance.now() - t0) / 1000 - wall) * 1000)} ms more to store)`,
);
// Per thread (the main thread is the one whose id is the process's; the back office and the signers are Workers).
const [mainTid] = [...threads1.keys()].sort((a, b) => a - b);
const perThread = [...threads1]
  .map(([tid, t]) => ({ tid, name: tid === mainTid ? 'main' : t.name, seconds: t.seconds - (threads0.get(tid)?.seconds ?? 0) }))
  .filter((t) => t.seconds > 0)
  .sort((a, b) => b.seconds - a.seconds);
console.log(`CPU per message by thread: ${perThread.map((t) => `${t.name} ${per(t.seconds)}`).join(', ')}`);
const asked = new Map<string, number>();
for (const q of dns.queries) asked.set(`${q.type} ${q.name}`, (asked.get(`${q.type} ${q.name}`) ?? 0) + 1);
console.log(`DNS queries: ${dns.queries.length} (${[...asked].map(([k, n]) => `${k} ×${n}`).join(', ')})`);
await target.stop();
sink.stop();
await dns.close();
console.log(
  readdirSync(out)
    .map((f) => join(out, f))
    .join('\n'),
);
