#!/usr/bin/env bun
/**
 * Delivery benchmark — `bun scripts/bench/deliver.ts` (npx bun scripts/bench/deliver.ts).
 *
 *   bun scripts/bench/deliver.ts                               2,000 emails, direct MX, STARTTLS sink
 *   bun scripts/bench/deliver.ts --count 5000 --mode relay --tls off
 *   bun scripts/bench/deliver.ts --shaping off                 per-destination shaping off (its overhead)
 *   bun scripts/bench/deliver.ts --ips 4                       four sending IPs in one pool (127.0.0.10-13; 0: the kernel's choice)
 *
 * Measures messages delivered per second by the delivery engine to a local sink MTA, and the
 * resident memory (RSS) of the Posthorn process. Posthorn runs in this process exactly as the tests
 * start it (createServices, LMDB in a fresh temp dir, one team and one verified sending domain);
 * `--count` emails with one recipient each are written to the store and the queue first (not
 * timed), then the engine is started and the clock runs until every entry has left the queue.
 * Every recipient must end `delivered`, or the benchmark fails.
 *
 * Each message is DKIM-signed (RSA-2048) at its attempt and carries a VERP sender, as in
 * production. The sink (test/helpers/sink.ts: smtp-server on 127.0.0.1, self-signed STARTTLS,
 * recording every message) runs in a child process by default (`--sink child`), as a real MTA
 * would; `--sink inprocess` shares this process's event loop. Modes:
 *   direct  MX lookups through a test DNS server on 127.0.0.1 (test/helpers/dns.ts, in this
 *           process): dest.test MX → mx.dest.test A 127.0.0.1, `delivery.mx_port` = the sink.
 *           Nothing is cached, so each attempt asks for MX, A and AAAA.
 *   relay   every message to `delivery.relay_url` = smtp://127.0.0.1:<sink port>.
 *
 * Shaping (docs/mail.md §3.1) is on by default, with dest.test rolled up by its MX into a site of
 * the default limits (20 connections, 100 messages each — the pool's own defaults), so `--shaping
 * off` measures only what shaping costs: site lookups, room per claim, throttle checks per reply.
 *
 * Nothing leaves 127.0.0.1. The temp data dir is removed at the end.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const ROOT = resolve(import.meta.dir, '..', '..');

const { values: opts } = parseArgs({
  args: process.argv.slice(2),
  options: {
    count: { type: 'string', default: '2000' },
    mode: { type: 'string', default: 'direct' },
    tls: { type: 'string', default: 'on' },
    sink: { type: 'string', default: 'child' },
    shaping: { type: 'string', default: 'on' },
    ips: { type: 'string', default: '0' },
    thread: { type: 'string', default: 'own' },
    role: { type: 'string', default: 'bench' },
    help: { type: 'boolean', short: 'h' },
  },
  strict: true,
});

function fail(message: string): never {
  console.error(`bench:deliver: ${message}`);
  process.exit(1);
}

if (opts.help) {
  console.log(
    'usage: bun scripts/bench/deliver.ts [--count 2000] [--mode direct|relay] [--tls on|off] [--sink child|inprocess] [--shaping on|off] [--ips 0-8] [--thread own|main]',
  );
  process.exit(0);
}

const TLS = opts.tls === 'on';
if (opts.tls !== 'on' && opts.tls !== 'off') fail('--tls must be on or off');
if (opts.shaping !== 'on' && opts.shaping !== 'off') fail('--shaping must be on or off');
// Sending IPs (README.md, "Sending IPs and warm-up"): loopback addresses in one pool, each bound to.
const IPS = Number(opts.ips);
if (!Number.isInteger(IPS) || IPS < 0 || IPS > 8) fail('--ips must be an integer 0-8');
// `main`: the back office runs on this thread instead of its own, so that `bun --cpu-prof-md`
// (which sees only the main thread) profiles the delivery engine; signing stays on its threads.
if (opts.thread !== 'own' && opts.thread !== 'main') fail('--thread must be own or main');

// ---------------------------------------------------------------------------------------------
// Child role: the sink MTA alone. Prints its port, then counts until stdin closes.
// ---------------------------------------------------------------------------------------------
if (opts.role === 'sink') {
  const { startSink } = await import('../../test/helpers/sink');
  const sink = await startSink({ tls: TLS ? 'starttls' : 'none' });
  process.stdout.write(`${JSON.stringify({ port: sink.port })}\n`);
  for await (const _ of process.stdin) {
    // stdin closing is the signal to stop
  }
  await sink.close();
  process.exit(0);
}

const COUNT = Number(opts.count);
const MODE = opts.mode as 'direct' | 'relay';
const SINK = opts.sink as 'child' | 'inprocess';
if (!Number.isInteger(COUNT) || COUNT < 1 || COUNT > 1_000_000) fail('--count must be an integer 1-1000000');
if (MODE !== 'direct' && MODE !== 'relay') fail('--mode must be direct or relay');
if (SINK !== 'child' && SINK !== 'inprocess') fail('--sink must be child or inprocess');

let tempDir: string | null = null;
let child: ReturnType<typeof Bun.spawn> | null = null;
process.on('exit', () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  if (tempDir) rmSync(tempDir, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------
// Sink
// ---------------------------------------------------------------------------------------------
async function startSinkProcess(): Promise<{ port: number; stop(): Promise<void> }> {
  if (SINK === 'inprocess') {
    const { startSink } = await import('../../test/helpers/sink');
    const sink = await startSink({ tls: TLS ? 'starttls' : 'none' });
    return { port: sink.port, stop: () => sink.close() };
  }
  const proc = Bun.spawn([process.execPath, join(ROOT, 'scripts/bench/deliver.ts'), '--role', 'sink', '--tls', opts.tls!], {
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'inherit',
  });
  child = proc;
  const reader = proc.stdout.getReader();
  let text = '';
  while (!text.includes('\n')) {
    const { value, done } = await reader.read();
    if (done) fail('the sink process exited before printing its port');
    text += new TextDecoder().decode(value);
  }
  const { port } = JSON.parse(text.split('\n')[0]!) as { port: number };
  return {
    port,
    async stop() {
      proc.stdin.end();
      const timer = setTimeout(() => proc.kill('SIGKILL'), 5_000);
      await proc.exited;
      clearTimeout(timer);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Run
// ---------------------------------------------------------------------------------------------
const { loadConfig } = await import('../../src/config');
const { createServices, closeServices } = await import('../../src/services');
const { createBackOffice } = await import('../../src/backoffice/parts');
const { createTeam } = await import('../../src/accounts/bootstrap');
const { generateDkimKey } = await import('../../src/domains/dkim');
const { setQuiet } = await import('../../src/log');
const { newId, nowIso } = await import('../../src/ids');
const { startDnsServer } = await import('../../test/helpers/dns');
const { queueEmail } = await import('../../test/helpers/emails');
setQuiet(true);

const sink = await startSinkProcess();
const dns = MODE === 'direct' ? await startDnsServer() : null;
dns?.zone.set('dest.test', 'MX', [{ exchange: 'mx.dest.test', priority: 10 }]).set('mx.dest.test', 'A', ['127.0.0.1']);

tempDir = mkdtempSync(join(tmpdir(), 'posthorn-bench-deliver-'));
const config = loadConfig({
  env: {},
  overrides: {
    data_dir: tempDir,
    'smtp.hostname': 'mx.bench.test',
    'dns.servers': dns ? [dns.address] : ['127.0.0.1:9'],
    'delivery.mode': MODE,
    'delivery.relay_url': MODE === 'relay' ? `smtp://127.0.0.1:${sink.port}` : null,
    'delivery.mx_port': sink.port,
    // The sink is on loopback: MX hosts there are refused otherwise.
    'security.allow_private_networks': true,
    'delivery.shaping.enabled': opts.shaping === 'on',
    'delivery.shaping.sites': { bench: { mx: ['*.dest.test'] } },
    'delivery.ips': Array.from({ length: IPS }, (_, i) => ({ address: `127.0.0.${10 + i}`, ehlo: `mx${i}.bench.test` })),
  },
});
const svc = await createServices(config);
const team = (await createTeam(svc.store)).team_id;
const dkim = await generateDkimKey();
const domain = {
  id: newId(),
  team_id: team,
  created_at: nowIso(),
  name: 'bench.test',
  region: 'us-east-1',
  custom_return_path: 'send',
  open_tracking: false,
  click_tracking: false,
  tracking_subdomain: null,
  tls: 'opportunistic' as const,
  capabilities: { sending: 'enabled' as const, receiving: 'disabled' as const },
  status: 'verified' as const,
  dkim,
  record_status: { 'SPF:MX': 'verified', 'SPF:TXT': 'verified', DKIM: 'verified' } as const,
  verification: { requested_at: null, checked_at: null, verified_at: nowIso(), degraded_at: null },
};
await svc.store.write(async (tx) => tx.domains.put(domain));

// Queue everything first (not timed), in concurrent units of work that share commits. Their commits
// wake the delivery engine, which is not started yet: nothing is sent before the clock runs.
const queuedAt = performance.now();
const emails: Awaited<ReturnType<typeof queueEmail>>[] = [];
for (let i = 0; i < COUNT; i += 500) {
  const batch = Array.from({ length: Math.min(500, COUNT - i) }, (_, j) =>
    queueEmail(svc, domain, { to: [`user${i + j}@dest.test`], subject: `Bench ${i + j}`, text: 'A short benchmark message.\n'.repeat(20) }),
  );
  emails.push(...(await Promise.all(batch)));
}
const queueMs = performance.now() - queuedAt;

const rssBefore = process.memoryUsage().rss;
let rssPeak = rssBefore;
const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 50);
const t0 = performance.now();
const office = opts.thread === 'main' ? createBackOffice(config, svc.store) : svc.backOffice;
await office.start();
const deadline = Date.now() + 30 * 60_000;
// Counting the queue scans it (about 1 ms per 10,000 entries, on this thread), so not too often:
// polling every 5 ms took a fifth of the thread's time with --thread main.
while ((await svc.store.queue.size()) > 0) {
  if (Date.now() > deadline) fail(`queue not empty after 30 minutes (${await svc.store.queue.size()} entries left)`);
  await Bun.sleep(50);
}
const seconds = (performance.now() - t0) / 1000;
clearInterval(sampler);
rssPeak = Math.max(rssPeak, process.memoryUsage().rss);

const stored = await Promise.all(emails.map((e) => svc.store.emails.get(e.team_id, e.id)));
if (office !== svc.backOffice) await office.stop();
const delivered = stored.filter((e, i) => e!.recipients[emails[i]!.to[0]!] === 'delivered').length;
await closeServices(svc);
await dns?.close();
await sink.stop();
if (delivered !== COUNT) fail(`only ${delivered} of ${COUNT} recipients delivered`);

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MB`;
const cmd = `bun scripts/bench/deliver.ts --count ${COUNT} --mode ${MODE} --tls ${opts.tls} --sink ${SINK} --shaping ${opts.shaping} --ips ${IPS}`;
console.log(`posthorn delivery benchmark — bun ${Bun.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? 'unknown'})`);
console.log(`command:    ${cmd}`);
console.log(
  `setup:      ${MODE === 'direct' ? 'direct MX via test DNS on 127.0.0.1' : 'relay'}, sink ${SINK === 'child' ? 'in a child process' : 'in this process'}, STARTTLS ${TLS ? 'on' : 'off'}, DKIM rsa-sha256 per message, shaping ${opts.shaping}`,
);
console.log(`queued:     ${COUNT} emails x 1 recipient in ${(queueMs / 1000).toFixed(2)} s (not timed)`);
console.log(`delivered:  ${delivered} in ${seconds.toFixed(2)} s = ${(delivered / seconds).toFixed(0)} messages/s`);
console.log(
  `memory:     RSS ${mb(rssBefore)} before, peak ${mb(rssPeak)} during delivery (Posthorn${SINK === 'inprocess' ? ' + sink' : ''}${dns ? ' + test DNS' : ''})`,
);
process.exit(0);
