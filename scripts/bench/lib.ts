// Shared pieces of the benchmarks: a Posthorn child process on loopback, a closed-loop load
// generator with latency percentiles, and number formatting. Nothing leaves 127.0.0.1.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { createServer } from 'node:net';
import type { PublishedRecord } from '../../test/helpers/dns';

export const ROOT = resolve(import.meta.dir, '..', '..');
/** The highest `limits.requests_per_second` accepts: the limiter must not be what is measured. */
export const RATE_LIMIT = 1_000_000;

export function fail(message: string): never {
  console.error(`bench: ${message}`);
  process.exit(1);
}

export async function freePort(): Promise<number> {
  return await new Promise((ok, ko) => {
    const srv = createServer();
    srv.once('error', ko);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => ok(port));
    });
  });
}

export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export interface Target {
  url: string;
  /** The server's process id. */
  pid: number;
  apiKey: string;
  version: string;
  /** Resident set size of the server process, in bytes. */
  rss(): number;
  /** The resident set split: anonymous memory (heap, buffers) and file pages (LMDB's map, code). */
  rssParts(): { anon: number; file: number };
  stop(): Promise<void>;
}

/**
 * `posthorn serve` as a child process (`bun src/main.ts serve`) on a fresh data dir,
 * configured by POSTHORN_* variables (`env` adds or overrides), with its team made by `init --json`
 * — or, given `apiKey` (another node of a cluster, on a database provisioned already), none.
 */
export async function startChild(dataDir: string, env: Record<string, string> = {}, opts: { apiKey?: string } = {}): Promise<Target> {
  const port = await freePort();
  const fullEnv: Record<string, string> = {
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
    // The sinks and receivers are on loopback: MX hosts and webhooks there are refused otherwise.
    POSTHORN_SECURITY_ALLOW_PRIVATE_NETWORKS: 'true',
    ...env,
  };
  const main = join(ROOT, 'src', 'main.ts');
  let creds = { api_key: opts.apiKey ?? '' };
  if (opts.apiKey === undefined) {
    const init = Bun.spawnSync([process.execPath, main, 'init', '--json'], { cwd: dataDir, env: fullEnv, stderr: 'pipe' });
    if (init.exitCode !== 0) fail(`posthorn init failed (${init.exitCode}): ${init.stderr.toString()}`);
    creds = JSON.parse(init.stdout.toString()) as { api_key: string };
  }
  const version = Bun.spawnSync([process.execPath, main, 'version'], { env: fullEnv }).stdout.toString().trim();
  // BENCH_SERVE_FLAGS: flags for bun before the script, e.g. `--cpu-prof-md --cpu-prof-dir=/tmp/p`
  // to profile the HTTP thread under a bench's load (the profile is written when the child stops).
  const flags = (process.env.BENCH_SERVE_FLAGS ?? '').split(' ').filter(Boolean);
  const child = Bun.spawn([process.execPath, ...flags, main, 'serve'], { cwd: dataDir, env: fullEnv, stdout: 'inherit', stderr: 'inherit' });
  process.on('exit', () => child.exitCode === null && child.kill('SIGKILL'));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) fail(`posthorn serve exited with ${child.exitCode} before answering`);
    if (
      await fetch(`${url}/health`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    if (Date.now() > deadline) fail('posthorn serve did not answer /health within 30 s');
    await Bun.sleep(50);
  }
  return {
    url,
    pid: child.pid,
    apiKey: creds.api_key,
    version,
    rss: () => {
      const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      return m ? Number(m[1]) * 1024 : NaN;
    },
    rssParts: () => {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
      return { anon: kb('RssAnon'), file: kb('RssFile') + kb('RssShmem') };
    },
    async stop() {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await child.exited;
      clearTimeout(timer);
    },
  };
}

/** A process's or thread's name and CPU seconds from its proc(5) stat file: utime and stime, in ticks of 10 ms. */
function procStat(path: string): { name: string; user: number; system: number } {
  const stat = readFileSync(path, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
  return { name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(') ')), user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 };
}

/** CPU seconds a process has used so far. */
export function processCpu(pid: number): { user: number; system: number; total: number } {
  const { user, system } = procStat(`/proc/${pid}/stat`);
  return { user, system, total: user + system };
}

/** CPU seconds used so far by each thread of a process (`self`: this one), by thread id. */
export function threadCpu(pid: number | 'self'): Map<number, { name: string; seconds: number }> {
  const out = new Map<number, { name: string; seconds: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const t = procStat(`/proc/${pid}/task/${tid}/stat`);
      out.set(Number(tid), { name: t.name, seconds: t.user + t.system });
    } catch {
      // The thread ended meanwhile.
    }
  }
  return out;
}

/**
 * CPU seconds used so far by every running postgres process: in all, by kind (a client's backend, the
 * WAL writer, autovacuum…, from the process title), and how many times they slept and were woken
 * (voluntary context switches: a backend's are mostly the messages it waited for).
 */
export function postgresCpu(): { total: number; kinds: Map<string, number>; wakes: number } {
  let total = 0;
  let wakes = 0;
  const kinds = new Map<string, number>();
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8');
      if (!cmd.startsWith('postgres')) continue;
      const s = processCpu(Number(p)).total;
      total += s;
      // "postgres: walwriter", "postgres: posthorn prof 127.0.0.1(…) idle": backends by their database.
      const title = cmd.replace(/\0/g, ' ').trim();
      const kind = /^postgres: \S+ \S+ /.test(title) ? 'backends' : title.replace(/^postgres: /, '').split(' ')[0]!;
      kinds.set(kind, (kinds.get(kind) ?? 0) + s);
      wakes += Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      // The process ended meanwhile.
    }
  }
  return { total, kinds, wakes };
}

export class Non2xx extends Error {}

/** What the benches read of a domain (docs/api.md, the domain object). */
export interface DomainBody {
  id: string;
  status: string;
  records: PublishedRecord[];
}

/** What the benches read of GET /emails/metrics. */
export interface MetricsBody {
  totals: Record<string, number>;
}

/** One authenticated JSON call; throws Non2xx on any other answer. Returns the parsed body, of the shape the caller names. */
export async function call<T = unknown>(target: Target, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
  const res = await fetch(target.url + path, {
    method,
    headers: { authorization: `Bearer ${target.apiKey}`, 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : typeof body === 'string' || body instanceof Uint8Array ? (body as BodyInit) : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status < 200 || res.status > 299) throw new Non2xx(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
  return (text ? JSON.parse(text) : null) as T;
}

/** A maker of numbered test emails from `sender()` (read at each call: a bench may change domain between runs). */
export function numberedEmails(sender: () => string): () => { from: string; to: string[]; subject: string; html: string; text: string } {
  let seq = 0;
  return () => ({
    from: `Bench <bench@${sender()}>`,
    to: [`user${++seq}@dest.test`],
    subject: `Benchmark ${seq}`,
    html: `<p>Hello number ${seq}</p>`,
    text: `Hello number ${seq}`,
  });
}

/** `count` emails made by `email` sent through POST /emails/batch, 100 a request, 4 requests in flight. */
export async function sendInBatches(target: Target, count: number, email: () => unknown): Promise<void> {
  let sent = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (sent < count) {
        const n = Math.min(100, count - sent);
        sent += n;
        await call(target, 'POST', '/emails/batch', Array.from({ length: n }, email));
      }
    }),
  );
}

export interface LoadResult {
  requests: number;
  seconds: number;
  p50: number;
  p99: number;
  max: number;
}

/** `workers` loops, each with one `op` in flight, for `seconds`; the first failure stops them all. */
export async function closedLoop(workers: number, seconds: number, op: () => Promise<unknown>): Promise<LoadResult> {
  const latencies: number[] = [];
  const started = performance.now();
  const deadline = started + seconds * 1000;
  let failure: unknown = null;
  const worker = async () => {
    while (failure === null && performance.now() < deadline) {
      const t0 = performance.now();
      try {
        await op();
      } catch (e) {
        failure ??= e;
        return;
      }
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: workers }, worker));
  if (failure !== null) throw failure;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? NaN;
  return { requests: latencies.length, seconds: (performance.now() - started) / 1000, p50: pct(50), p99: pct(99), max: latencies.at(-1) ?? NaN };
}

export const fmt = (n: number, digits = 0) =>
  Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : '-';
export const mb = (bytes: number) => `${fmt(bytes / 1024 / 1024, 1)} MB`;

export function machine(): string {
  const cpu = cpus();
  return `${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown CPU'}, ${mb(totalmem())} RAM, ${process.platform}/${process.arch}`;
}

/** A fixed-width table printer. */
export function table(widths: number[]) {
  return (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
}

/**
 * A sending domain verified the real way: publish its records in the bench's DNS server, ask for
 * verification, wait. Also points `dest.test`'s MX at 127.0.0.1 (the sink), with a TTL of minutes
 * as real zones have: a caching resolver asks for it once (the test server's default TTL is 0,
 * which would make every attempt ask).
 */
export const DEST_TTL_S = 300;

export async function verifiedSendingDomain(
  target: Target,
  zone: { publish(d: string, r: unknown[]): unknown; set(n: string, t: string, v: unknown[], opts?: { ttl?: number }): unknown; clear(n: string): unknown },
  name: string,
) {
  const domain = await call<DomainBody>(target, 'POST', '/domains', { name });
  // A previous part's Posthorn published other keys for the same names: replace, not add.
  for (const r of domain.records) zone.clear(r.name === '@' ? name : `${r.name}.${name}`);
  zone.publish(name, domain.records);
  zone.set('dest.test', 'MX', [{ exchange: 'mx.dest.test', priority: 10 }], { ttl: DEST_TTL_S });
  zone.set('mx.dest.test', 'A', ['127.0.0.1'], { ttl: DEST_TTL_S });
  await call(target, 'POST', `/domains/${domain.id}/verify`);
  for (let i = 0; (await call<DomainBody>(target, 'GET', `/domains/${domain.id}`)).status !== 'verified'; i++) {
    if (i > 100) fail(`${name} did not verify`);
    await Bun.sleep(100);
  }
}

/** `n` calls of `op`, `workers` at a time (each worker starts the next call when its last one ends). */
export async function inParallel(workers: number, n: number, op: () => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (next < n) {
        next++;
        await op();
      }
    }),
  );
}

/** bench:compare's deliver loads (profile-deliver.ts too): how `n` emails are accepted (n a multiple of 100 for the batch load). */
export function deliverLoads(email: () => unknown) {
  return {
    single: { name: '16 × single', send: (target: Target, n: number) => inParallel(16, n, () => call(target, 'POST', '/emails', email())) },
    batch: {
      name: '4 × batch ×100',
      send: (target: Target, n: number) => inParallel(4, Math.ceil(n / 100), () => call(target, 'POST', '/emails/batch', Array.from({ length: 100 }, email))),
    },
  } as const;
}
