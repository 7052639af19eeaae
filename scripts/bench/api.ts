#!/usr/bin/env bun
/**
 * HTTP API benchmark — `npm run bench:api` (= `bun scripts/bench/api.ts`).
 *
 *   npm run bench:api                                   defaults: 5 s per run, concurrency 1,16,64
 *   npm run bench:api -- --seconds 2 --concurrency 1,32 --mode inprocess
 *
 * Measures requests/s and p50/p99 latency of one create endpoint (POST /segments {name}) and one
 * list endpoint (GET /segments?limit=20), each for a fixed time at several concurrency levels
 * (N workers, each sending its next request as soon as the previous answer is read, over Bun's
 * keep-alive fetch), plus the server's resident memory (RSS) after each run. Any non-2xx answer
 * aborts the benchmark with the status and body. If the segments routes answer 404 (not built
 * yet), the API keys routes stand in (POST /api-keys, GET /api-keys) and the header says so.
 *
 * Modes (--mode):
 *   child      (default) Posthorn runs as a child process, `bun src/main.ts serve`, configured by
 *              POSTHORN_* variables (HTTP on 127.0.0.1, a fresh temp data dir, SMTP listeners
 *              off, logs off, rate limit 1,000,000/s); its team comes from `init --json`. The load
 *              generator has its own process, as a real client would, and the RSS is the server's.
 *   inprocess  Posthorn runs inside this process exactly as the tests start it (createServices +
 *              startHttp on 127.0.0.1:0, createTeam). Client and server share one event loop, so
 *              the figures are lower and the RSS includes the client.
 *
 * Nothing leaves 127.0.0.1. The temp data dir is removed at the end.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { createServer } from 'node:net';
import { parseArgs } from 'node:util';

const ROOT = resolve(import.meta.dir, '..', '..');

// ---------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------

const { values: opts } = parseArgs({
  args: process.argv.slice(2),
  options: {
    seconds: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '1,16,64' },
    warmup: { type: 'string', default: '0.5' },
    mode: { type: 'string', default: 'child' },
    help: { type: 'boolean', short: 'h' },
  },
  strict: true,
});
if (opts.help) {
  console.log('usage: bun scripts/bench/api.ts [--seconds 5] [--concurrency 1,16,64] [--warmup 0.5] [--mode child|inprocess]');
  process.exit(0);
}
const SECONDS = Number(opts.seconds);
const WARMUP = Number(opts.warmup);
const LEVELS = opts.concurrency!.split(',').map((s) => Number(s.trim()));
const MODE = opts.mode as 'child' | 'inprocess';
if (!(SECONDS > 0 && SECONDS <= 600)) fail('--seconds must be between 0 and 600');
if (!(WARMUP >= 0 && WARMUP <= 60)) fail('--warmup must be between 0 and 60');
if (!LEVELS.length || LEVELS.some((n) => !Number.isInteger(n) || n < 1 || n > 1024)) fail('--concurrency must be a comma list of integers 1-1024');
if (MODE !== 'child' && MODE !== 'inprocess') fail('--mode must be child or inprocess');

function fail(message: string): never {
  console.error(`bench:api: ${message}`);
  process.exit(1);
}

// Whatever happens (including fail() above), leave no server process and no temp dir behind.
let tempDir: string | null = null;
let serverProcess: { kill(signal?: number | NodeJS.Signals): void; exitCode: number | null } | null = null;
process.on('exit', () => {
  if (serverProcess && serverProcess.exitCode === null) serverProcess.kill('SIGKILL');
  if (tempDir) rmSync(tempDir, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------
// The server under test
// ---------------------------------------------------------------------------------------------

interface Target {
  url: string;
  apiKey: string;
  version: string;
  /** Resident set size of the server process, in bytes. */
  rss(): number;
  stop(): Promise<void>;
}

const RATE_LIMIT = 1_000_000; // the highest limits.requests_per_second accepts

async function freePort(): Promise<number> {
  return await new Promise((ok, ko) => {
    const srv = createServer();
    srv.once('error', ko);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => ok(port));
    });
  });
}

async function startChild(dataDir: string): Promise<Target> {
  const port = await freePort();
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    POSTHORN_LOG: 'silent',
    POSTHORN_CONFIG: '',
    POSTHORN_DATA_DIR: dataDir,
    POSTHORN_HTTP_HOST: '127.0.0.1',
    POSTHORN_HTTP_PORT: String(port),
    POSTHORN_PUBLIC_URL: `http://127.0.0.1:${port}`,
    POSTHORN_SMTP_HOST: '127.0.0.1',
    POSTHORN_SMTP_HOSTNAME: 'mx.bench.test',
    POSTHORN_SMTP_STARTTLS_PORTS: '',
    POSTHORN_SMTP_TLS_PORTS: '',
    POSTHORN_LIMITS_REQUESTS_PER_SECOND: String(RATE_LIMIT),
  };
  const main = join(ROOT, 'src', 'main.ts');
  // Provision the team first, so `serve` finds a non-empty store and prints nothing.
  const init = Bun.spawnSync([process.execPath, main, 'init', '--json'], { cwd: dataDir, env, stderr: 'pipe' });
  if (init.exitCode !== 0) fail(`posthorn init failed (${init.exitCode}): ${init.stderr.toString()}`);
  const creds = JSON.parse(init.stdout.toString()) as { api_key: string };
  const version = Bun.spawnSync([process.execPath, main, 'version'], { env }).stdout.toString().trim();

  const child = Bun.spawn([process.execPath, main, 'serve'], { cwd: dataDir, env, stdout: 'inherit', stderr: 'inherit' });
  serverProcess = child;
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) fail(`posthorn serve exited with ${child.exitCode} before answering`);
    try {
      if ((await fetch(`${url}/health`)).ok) break;
    } catch {}
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      fail('posthorn serve did not answer /health within 30 s');
    }
    await Bun.sleep(50);
  }
  return {
    url,
    apiKey: creds.api_key,
    version,
    rss: () => {
      const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      return m ? Number(m[1]) * 1024 : NaN;
    },
    async stop() {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await child.exited;
      clearTimeout(timer);
    },
  };
}

async function startInProcess(dataDir: string): Promise<Target> {
  const { loadConfig } = await import('../../src/config');
  const { createServices, closeServices } = await import('../../src/services');
  const { startHttp } = await import('../../src/api/server');
  const { createTeam } = await import('../../src/accounts/bootstrap');
  const { setQuiet } = await import('../../src/log');
  const { VERSION } = await import('../../src/version');
  setQuiet(true);
  const config = loadConfig({
    env: {},
    overrides: {
      data_dir: dataDir,
      'http.host': '127.0.0.1',
      'http.port': 0,
      'smtp.host': '127.0.0.1',
      'smtp.hostname': 'mx.bench.test',
      'smtp.starttls_ports': [],
      'smtp.tls_ports': [],
      'limits.requests_per_second': RATE_LIMIT,
    },
  });
  const svc = createServices(config);
  const creds = await createTeam(svc.store);
  const server = startHttp(svc);
  return {
    url: `http://127.0.0.1:${server.port}`,
    apiKey: creds.api_key,
    version: `posthorn ${VERSION} (bun ${Bun.version})`,
    rss: () => process.memoryUsage().rss,
    async stop() {
      await server.stop(true);
      await svc.domains.idle?.();
      await closeServices(svc);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Load generation
// ---------------------------------------------------------------------------------------------

interface Endpoint {
  label: string;
  method: 'GET' | 'POST';
  path: string;
  body?: () => string;
}

class Non2xx extends Error {}

async function call(target: Target, ep: Endpoint): Promise<void> {
  const res = await fetch(target.url + ep.path, {
    method: ep.method,
    headers: { authorization: `Bearer ${target.apiKey}`, 'content-type': 'application/json' },
    body: ep.body?.(),
  });
  const text = await res.text();
  if (res.status < 200 || res.status > 299) throw new Non2xx(`${ep.method} ${ep.path} answered ${res.status}: ${text.slice(0, 300)}`);
}

interface Result {
  requests: number;
  seconds: number;
  p50: number;
  p99: number;
  max: number;
  rss: number;
}

async function run(target: Target, ep: Endpoint, workers: number, seconds: number): Promise<Result> {
  const latencies: number[] = [];
  const started = performance.now();
  const deadline = started + seconds * 1000;
  let failure: unknown = null;
  const worker = async () => {
    while (failure === null && performance.now() < deadline) {
      const t0 = performance.now();
      try {
        await call(target, ep);
      } catch (e) {
        failure ??= e; // stop every worker, report the first failure
        return;
      }
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: workers }, worker));
  if (failure !== null) throw failure;
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? NaN;
  return { requests: latencies.length, seconds: elapsed, p50: pct(50), p99: pct(99), max: latencies.at(-1) ?? NaN, rss: target.rss() };
}

/** The first endpoint that answers 2xx (and why earlier ones were passed over); none is fatal. */
async function pick(target: Target, candidates: Endpoint[]): Promise<{ ep: Endpoint; skipped: string[] }> {
  const errors: string[] = [];
  for (const ep of candidates) {
    try {
      await call(target, ep);
      return { ep, skipped: errors };
    } catch (e) {
      if (!(e instanceof Non2xx)) throw e;
      errors.push(e.message);
    }
  }
  fail(`no candidate endpoint answered 2xx:\n  ${errors.join('\n  ')}`);
}

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------

const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : '-');
const mb = (bytes: number) => `${fmt(bytes / 1024 / 1024, 1)} MB`;

async function main() {
  const dataDir = mkdtempSync(join(tmpdir(), 'posthorn-bench-'));
  tempDir = dataDir;
  const target = MODE === 'child' ? await startChild(dataDir) : await startInProcess(dataDir);
  let seq = 0;
  const { ep: create, skipped: createSkipped } = await pick(target, [
    { label: 'create', method: 'POST', path: '/segments', body: () => JSON.stringify({ name: `Bench segment ${++seq}` }) },
    { label: 'create', method: 'POST', path: '/api-keys', body: () => JSON.stringify({ name: `bench ${++seq}` }) },
  ]);
  const { ep: list, skipped: listSkipped } = await pick(target, [
    { label: 'list', method: 'GET', path: '/segments?limit=20' },
    { label: 'list', method: 'GET', path: '/api-keys?limit=20' },
  ]);

  const cpu = cpus();
  const command = `bun scripts/bench/api.ts ${process.argv.slice(2).join(' ')}`.trim();
  console.log('Posthorn HTTP API benchmark');
  console.log(`  command      ${command}   (npm run bench:api${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''})`);
  console.log(`  server       ${target.version}`);
  console.log(
    `  mode         ${MODE === 'child' ? 'child process `bun src/main.ts serve` (server RSS); load from this process' : 'in-process (createServices + startHttp, as test/helpers/posthorn.ts); client and server share one event loop, RSS includes the client'}`,
  );
  console.log(`  machine      ${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown CPU'}, ${mb(totalmem())} RAM, ${process.platform}/${process.arch}`);
  console.log(`  load         fetch with keep-alive, N workers each with one request in flight; ${SECONDS} s per run after ${WARMUP} s warm-up`);
  console.log(`  server setup 127.0.0.1, fresh LMDB in ${dataDir}, rate limit ${fmt(RATE_LIMIT)}/s, logs off`);
  console.log(`  endpoints    ${create.method} ${create.path} (create), ${list.method} ${list.path} (list)`);
  for (const why of [...createSkipped, ...listSkipped]) console.log(`  fallback     ${why}`);
  console.log(`  RSS at start ${mb(target.rss())}`);
  console.log('');

  const header = ['endpoint', 'conc', 'requests', 'req/s', 'p50 ms', 'p99 ms', 'max ms', 'RSS after'];
  const widths = [26, 5, 9, 9, 8, 8, 8, 10];
  const row = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(row(header));
  console.log(row(widths.map((w) => '-'.repeat(w))));
  try {
    for (const ep of [create, list]) {
      for (const n of LEVELS) {
        if (WARMUP > 0) await run(target, ep, n, WARMUP);
        const r = await run(target, ep, n, SECONDS);
        console.log(
          row([
            `${ep.method} ${ep.path}`,
            String(n),
            fmt(r.requests),
            fmt(r.requests / r.seconds),
            fmt(r.p50, 2),
            fmt(r.p99, 2),
            fmt(r.max, 1),
            mb(r.rss),
          ]),
        );
      }
    }
  } catch (e) {
    if (e instanceof Non2xx) console.error(`\nbench:api: FAILED — ${e.message}`);
    await target.stop();
    rmSync(dataDir, { recursive: true, force: true });
    throw e instanceof Non2xx ? Object.assign(new Error('non-2xx answer'), { silent: true }) : e;
  }
  console.log('');
  console.log(`(${seq.toLocaleString('en-US')} records created; latency = time from fetch() to the body read, on the client)`);
  await target.stop();
  rmSync(dataDir, { recursive: true, force: true });
}

main().then(
  () => process.exit(0),
  (e) => {
    if (!(e as { silent?: boolean }).silent) console.error(`bench:api: ${(e as Error)?.stack ?? e}`);
    process.exit(1);
  },
);
