/**
 * bench:compare's deliver part for one Posthorn server, with CPU per email for each thread (from
 * /proc) and, with --profile, a sampled CPU profile of every JS thread of the server (main/HTTP, back
 * office, signers: src/bench-profile.ts) during the measured emails, aggregated by area and by
 * function self time. Proportions survive a busy machine; rates do not.
 *
 *   bun scripts/bench/profile-deliver.ts --mode relay --load single --count 3000 --warm-up 3000 --profile
 *   bun scripts/bench/profile-deliver.ts --aggregate DIR [--top 30] [--count N]   (an earlier run's profiles again; µs per email of N)
 */
import { parseArgs } from 'node:util';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { DEST_TTL_S, fail, freePort, numberedEmails, processCpu, startChild, tempDir, threadCpu, verifiedSendingDomain, deliverLoads } from './lib';
import { startSmtpSink } from './postfix';
import { startDnsServer } from '../../test/helpers/dns';
import { setQuiet } from '../../src/log';

const { values: o } = parseArgs({
  args: process.argv.slice(2),
  options: {
    mode: { type: 'string', default: 'relay' },
    load: { type: 'string', default: 'single' },
    count: { type: 'string', default: '3000' },
    'warm-up': { type: 'string', default: '3000' },
    profile: { type: 'boolean', default: false },
    dir: { type: 'string', default: join(tmpdir(), 'posthorn-deliver-profile') },
    interval: { type: 'string', default: '1000' },
    aggregate: { type: 'string' },
    top: { type: 'string', default: '30' },
  },
  strict: true,
});

type Frame = { name: string; sourceURL?: string; line?: number };

/** The area of issue 38's breakdown a sample belongs to: its innermost frame in src/ that names one, else its innermost library frame. */
function area(frames: Frame[]): string {
  for (const f of frames) {
    const u = f.sourceURL ?? '';
    const m = /\/src\/(.*)$/.exec(u);
    if (!m || u.includes('node_modules')) continue;
    const p = m[1]!;
    if (/^delivery\/(claim|scan|engine|in-flight|shaping|controls)\.ts/.test(p)) return 'claim/engine';
    if (/^delivery\/(settle|incidents)\.ts/.test(p) || /^(events|telemetry|webhooks|suppressions)\//.test(p)) return 'settle/events';
    if (/^delivery\/(attempt|smtp-client|pool|route|relay|mx|ips|mta-sts)\.ts/.test(p)) return 'smtp client';
    if (/^delivery\/signer|^mail\/(dkim|openssl)/.test(p)) return 'dkim';
    if (/^sending\/(message|mime|tracking)\.ts/.test(p)) return 'composition';
    if (/^store\//.test(p)) return `store:${p.replace(/^store\//, '').replace(/\.ts$/, '')}`;
    if (/^work\//.test(p)) return 'work loop';
    if (/^(api|schemas|sending)\//.test(p)) return `accept:${p.split('/')[0]}`;
    return `src:${p}`;
  }
  // No src/ frame (a stream or socket callback, a commit's): the library says what it is.
  for (const f of frames) {
    const u = f.sourceURL ?? '';
    if (/nodemailer\/.*(mime-node|mail-composer|mime-funcs|qp|base64|punycode|addressparser)/.test(u)) return 'composition';
    if (/nodemailer\/.*smtp-connection/.test(u)) return 'smtp client';
    if (/node_modules\/(lmdb|msgpackr|ordered-binary)\//.test(u)) return 'store:lmdb (library)';
    if (/node_modules\/mailauth\//.test(u)) return 'dkim';
    const m = /node_modules\/([^/]+)\//.exec(u);
    if (m) return `pkg:${m[1]}`;
    if (/^node:(net|events|stream)|^internal:streams/.test(u)) return 'sockets/streams (node:net, events)';
    if (u.startsWith('node:') || u.startsWith('bun:') || u.startsWith('internal:')) return `builtin:${u}`;
  }
  const top = frames[0]?.name;
  if (top === 'gc') return 'gc (Bun.gc)';
  return frames.length ? `other:${top || '(anon)'}` : '(no JS frame: native, GC, idle)';
}

/** Prints each thread's profile in `dir` by area and by function self time; with `perEmail`, µs per email besides. */
function aggregate(dir: string, top: number, perEmail?: { count: number; intervalUs: number }): void {
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
    const d = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    const traces: { frames: Frame[] }[] = d.stackTraces.traces;
    const n = traces.length;
    if (!n) continue;
    const byArea = new Map<string, number>();
    const bySelf = new Map<string, number>();
    for (const t of traces) {
      const a = area(t.frames);
      byArea.set(a, (byArea.get(a) ?? 0) + 1);
      const f = t.frames[0];
      const k = f ? `${f.name || '(anon)'} ${(f.sourceURL ?? '').replace(/.*\/(node_modules|src)\//, '$1/')}:${f.line ?? ''}` : '(no JS frame)';
      bySelf.set(k, (bySelf.get(k) ?? 0) + 1);
    }
    const name = file.replace(/\.json$/, '');
    // A sample stands for about `interval` µs of the thread's CPU: per email, samples × interval / emails.
    const pct = (x: number) =>
      `${((100 * x) / n).toFixed(1).padStart(5)}%${perEmail ? ` ${String(Math.round((x * perEmail.intervalUs) / perEmail.count)).padStart(5)} µs` : ''}`;
    console.log(
      `\n=== ${name}: ${n} samples over ${(d.wallMs / 1000).toFixed(1)} s${perEmail ? ` (≈ ${Math.round((n * perEmail.intervalUs) / perEmail.count)} µs per email)` : ''}`,
    );
    console.log('-- by area (innermost src/ frame)');
    for (const [k, v] of [...byArea].sort((a, b) => b[1] - a[1])) if (v / n >= 0.003) console.log(`  ${pct(v)}  ${k}`);
    console.log('-- by function (self)');
    for (const [k, v] of [...bySelf].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(v)}  ${k}`);
  }
}

if (o.aggregate) {
  aggregate(o.aggregate, Number(o.top), o.count && o.aggregate ? { count: Number(o.count), intervalUs: Number(o.interval) } : undefined);
  process.exit(0);
}

setQuiet(true);
const COUNT = Number(o.count);
const WARM = Number(o['warm-up']);
if (COUNT % 100 || WARM % 100) fail('--count and --warm-up must be multiples of 100 (the batch load sends 100 a request)');
const dns = await startDnsServer();
dns.zone.setNegativeTtl(DEST_TTL_S);
const sink = startSmtpSink(await freePort());
const env: Record<string, string> = {
  POSTHORN_DNS_SERVERS: dns.address,
  ...(o.mode === 'relay'
    ? { POSTHORN_DELIVERY_MODE: 'relay', POSTHORN_DELIVERY_RELAY_URL: `smtp://127.0.0.1:${sink.port}` }
    : { POSTHORN_DELIVERY_MX_PORT: String(sink.port) }),
};
if (o.profile) {
  rmSync(o.dir, { recursive: true, force: true });
  mkdirSync(o.dir, { recursive: true });
  env.POSTHORN_BENCH_PROFILE_DIR = o.dir;
  env.POSTHORN_BENCH_PROFILE_INTERVAL_US = o.interval;
}
const target = await startChild(tempDir('posthorn-profile-deliver-'), env);
await verifiedSendingDomain(target, dns.zone, 'bench1.test');
const email = numberedEmails(() => 'bench1.test');
// bench:compare's deliver loads: 16 clients sending single emails, 4 sending batches of 100.
const load = deliverLoads(email)[o.load === 'single' ? 'single' : 'batch'];
const send = (n: number) => load.send(target, n);
async function until(n: number) {
  const deadline = performance.now() + 600_000;
  while (sink.count() < n) {
    if (performance.now() > deadline) fail(`only ${sink.count()} of ${n} delivered`);
    await Bun.sleep(20);
  }
}
await send(WARM);
await until(WARM);
await Bun.sleep(300);
const th0 = threadCpu(target.pid);
const sink0 = processCpu(sink.pid).total;
if (o.profile) {
  writeFileSync(join(o.dir, 'start'), '');
  await Bun.sleep(200);
}
const t0 = performance.now();
await send(COUNT);
const accepted = (performance.now() - t0) / 1000;
await until(WARM + COUNT);
const secs = (performance.now() - t0) / 1000;
const th1 = threadCpu(target.pid);
const sink1 = processCpu(sink.pid).total;
if (o.profile) {
  writeFileSync(join(o.dir, 'stop'), '');
  await Bun.sleep(1500);
}
await target.stop();
sink.stop();
await dns.close();
const per = (s: number) => Math.round((s / COUNT) * 1e6);
const mainTid = Math.min(...th1.keys());
const rows = [...th1]
  .map(([tid, t]) => ({ tid, name: tid === mainTid ? 'main' : t.name, s: t.seconds - (th0.get(tid)?.seconds ?? 0) }))
  .filter((t) => t.s > 0)
  .sort((a, b) => b.s - a.s);
const server = rows.reduce((n, t) => n + t.s, 0);
console.log(`${o.mode} ${o.load}: ${Math.round(COUNT / secs)} emails/s (accepted in ${accepted.toFixed(1)} s, delivered in ${secs.toFixed(1)} s)`);
console.log(`CPU µs per email: server ${per(server)} (${rows.map((t) => `${t.name}[${t.tid}] ${per(t.s)}`).join(', ')}); sink ${per(sink1 - sink0)}`);
if (o.profile) aggregate(o.dir, Number(o.top), { count: COUNT, intervalUs: Number(o.interval) });
process.exit(0);
