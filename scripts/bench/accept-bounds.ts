#!/usr/bin/env bun
/**
 * What durable single sends could reach here — `bun scripts/bench/accept-bounds.ts [--seconds 8] [--warm-up-seconds 3]`
 *
 * bench:compare's http part (wrk, 64 connections, POST /emails with one recipient, against a bare
 * `Bun.serve` parsing the same body) shows Posthorn at about a sixth of the bare server. This
 * script measures, in one run, how much of the gap storing the email is, and so what any way of
 * storing it could at best reach on this machine. Rows:
 *   bare Bun.serve                the reference: parses the JSON body, answers an id
 *   posthorn serve                the real server, as bench:compare runs it (destination held)
 *   API in-process                Posthorn's HTTP handler and services in a process of their own,
 *                                 without the back office (delivery, webhooks): as `serve`, less
 *                                 the delivery thread noting each held entry
 *   two acceptor processes        two such processes on one store, both listening on the port
 *                                 (SO_REUSEPORT): the HTTP work on two threads, two commit streams
 *   sending core on a thread      the sending core (parse, validate, prepare, commit) on a Worker
 *                                 with its own services on the store (accept-bounds-sender.ts),
 *                                 fed each body's bytes; this thread keeps HTTP, authentication,
 *                                 the rate limit, the request log and the answer
 *   …LMDB writes dropped          the same, with every put and delete of the store dropped (and
 *                                 no write transaction) except the request log's: the API's
 *                                 whole path — auth, limits, validation, the unit of work's reads
 *                                 and logic, the response — without storing the email
 *   …request log dropped too      nothing written at all
 * The last two are not Posthorn (they accept without storing): they bound what the accept path
 * could do if storing cost nothing; the two before are ways of storing that use both cores. Each
 * row gives req/s, its ratio to the bare server, the CPU per request of all the server's threads
 * and of its HTTP thread, and how busy that thread was.
 */
import { parseArgs } from 'node:util';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChild, tempDir, call, verifiedSendingDomain, fmt, machine, table, fail, freePort } from './lib';
import { wrk, cpuOf, startBare } from './wrk';
import { inProcessServices, teamWithDomain } from './in-process';
import type { Services } from '../../src/services';
import { createHandler } from '../../src/api/server';
import { LmdbStore } from '../../src/store/lmdb';
import { authenticate } from '../../src/accounts/keys';
import { RequestLog } from '../../src/api/platform/requestlog';
import { startDnsServer } from '../../test/helpers/dns';
import { setQuiet } from '../../src/log';

const VARIANTS = ['store', 'two-processes', 'sending-thread', 'no-writes-but-log', 'no-writes'] as const;
type Variant = (typeof VARIANTS)[number];

const { values: opts } = parseArgs({
  args: process.argv.slice(2),
  options: {
    seconds: { type: 'string', default: '8' },
    'warm-up-seconds': { type: 'string', default: '3' },
    child: { type: 'string' },
    port: { type: 'string' },
    dir: { type: 'string' },
  },
  strict: true,
});
setQuiet(true);
const body = JSON.stringify({
  from: 'Bench <bench@bench.test>',
  to: ['user1@dest.test'],
  subject: 'Benchmark 1',
  html: '<p>Hello number 1</p>',
  text: 'Hello number 1',
});

if (opts.child) {
  await serveVariant(opts.child as Variant, Number(opts.port), opts.dir);
} else {
  await main();
}

/**
 * The child: Posthorn's API on `port`, arranged as `variant` says. Given `dir`, a second acceptor
 * on the store of another child (two-processes); otherwise a fresh store, with its team and a
 * verified sending domain, whose API key and directory are printed as the first line.
 */
async function serveVariant(variant: Variant, port: number, shared?: string): Promise<void> {
  if (!VARIANTS.includes(variant)) fail(`unknown variant ${variant}`);
  process.on('SIGTERM', () => process.exit(0));
  const dir = shared ?? mkdtempSync(join(tmpdir(), 'posthorn-accept-bounds-'));
  if (!shared) process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  const svc = await inProcessServices(dir, port);
  const apiKey = shared ? '' : (await teamWithDomain(svc, 'bench.test')).apiKey;
  if (variant === 'no-writes' || variant === 'no-writes-but-log') {
    if (!(svc.store instanceof LmdbStore)) fail('the embedded store is needed');
    // The environment's private parts, reached around TypeScript: this is a measurement, not Posthorn.
    const env = svc.store.env as unknown as { dbs: Map<string, { put: unknown; remove: unknown }>; writing: number; transaction: unknown };
    const kept = variant === 'no-writes-but-log' ? ['logs'] : [];
    const done = Promise.resolve(true);
    for (const [name, db] of env.dbs) if (!kept.includes(name)) db.put = db.remove = () => done;
    env.transaction = async (fn: () => unknown) => {
      env.writing++;
      try {
        return await fn();
      } finally {
        env.writing--;
      }
    };
  }
  const fetch = variant === 'sending-thread' ? await sendingThread(svc, dir, port) : createHandler(svc);
  // reusePort: a second process may listen on the port too (two-processes); the kernel spreads connections.
  Bun.serve({ hostname: '127.0.0.1', port, reusePort: true, fetch });
  console.log(JSON.stringify({ apiKey, dir }));
}

/**
 * The sending core (validation, prepare, commit) on a thread of its own, which opens the store
 * too; this thread keeps HTTP, authentication, the rate limit, the request log and the answer,
 * and hands the sending thread the body's bytes. Optimistic for the split: Elysia's routing and
 * its body handling are left out of this thread's share.
 */
async function sendingThread(svc: Services, dir: string, port: number) {
  const worker = new Worker(new URL('./accept-bounds-sender.ts', import.meta.url).href);
  const pending = new Map<number, (id: string) => void>();
  await new Promise<void>((resolve) => {
    worker.onmessage = () => resolve();
    worker.postMessage({ dir, port });
  });
  worker.onmessage = (e: MessageEvent<{ n: number; id: string }>) => {
    pending.get(e.data.n)!(e.data.id);
    pending.delete(e.data.n);
  };
  const requestLog = new RequestLog(svc.store);
  let n = 0;
  return async (req: Request): Promise<Response> => {
    const startedAt = performance.now();
    const key = await authenticate(svc.store, req.headers.get('authorization'));
    const rl = svc.limiter.take(key.team_id);
    const bytes = await req.arrayBuffer();
    const id = await new Promise<string>((resolve) => {
      pending.set(++n, resolve);
      worker.postMessage({ n, team: key.team_id, key, bytes }, [bytes]);
    });
    const text = JSON.stringify({ id });
    requestLog.record({
      key,
      method: 'POST',
      path: '/emails',
      status: 200,
      userAgent: req.headers.get('user-agent'),
      startedAt,
      requestJson: undefined,
      responseJson: text,
    });
    return new Response(text, { headers: { 'content-type': 'application/json; charset=utf-8', ...rl.headers } });
  };
}

async function main(): Promise<void> {
  if (!Bun.which('wrk')) fail('wrk is not installed (apt-get install wrk)');
  const run = { warmUpSeconds: Number(opts['warm-up-seconds']), seconds: Number(opts.seconds), connections: 64 };
  if (!(run.seconds >= 2) || !(run.warmUpSeconds > 0)) fail('usage: bun scripts/bench/accept-bounds.ts [--seconds 8] [--warm-up-seconds 3]');
  console.log('What durable single sends could reach: POST /emails, wrk 64 connections, one run');
  console.log(`  command   bun scripts/bench/accept-bounds.ts ${process.argv.slice(2).join(' ')}`.trimEnd());
  console.log(`  machine   ${machine()}\n`);
  const row = table([30, 10, 8, 14, 14, 10]);
  console.log(row(['', 'req/s', 'ratio', 'CPU µs, all', 'HTTP thread', 'its busy']));
  const bare = await startBare();
  const ref = await wrk(bare.url, body, { 'content-type': 'application/json' }, { ...run, cpu: cpuOf(bare.pid) });
  bare.stop();
  const show = (name: string, r: Awaited<ReturnType<typeof wrk>>, threads = 1) => {
    if (r.non2xx) fail(`${name}: ${r.non2xx} answers were not 2xx`);
    const c = r.cpu!;
    console.log(row([name, fmt(r.rps), fmt(r.rps / ref.rps, 2), fmt(c.server, 1), fmt(c.main, 1), `${fmt((c.main * r.rps) / 1e4 / threads)} %`]));
  };
  show('bare Bun.serve', ref);

  const dns = await startDnsServer();
  const target = await startChild(tempDir('posthorn-accept-bounds-serve-'), {
    POSTHORN_DNS_SERVERS: dns.address,
    POSTHORN_DELIVERY_MODE: 'relay',
    POSTHORN_DELIVERY_RELAY_URL: 'smtp://127.0.0.1:9',
    POSTHORN_DELIVERY_RETRY_SCHEDULE: '1h',
  });
  await verifiedSendingDomain(target, dns.zone, 'bench.test');
  await call(target, 'POST', '/queue/dest.test/hold');
  show(
    'posthorn serve',
    await wrk(
      `${target.url}/emails`,
      body,
      { authorization: `Bearer ${target.apiKey}`, 'content-type': 'application/json' },
      { ...run, cpu: cpuOf(target.pid) },
    ),
  );
  await target.stop();
  await dns.close();

  const names: Record<Variant, string> = {
    store: 'API in-process',
    'two-processes': 'two acceptor processes',
    'sending-thread': 'sending core on a thread',
    'no-writes-but-log': '…LMDB writes dropped',
    'no-writes': '…request log dropped too',
  };
  const rates: Partial<Record<Variant, number>> = {};
  for (const variant of VARIANTS) {
    const port = await freePort();
    const spawn = async (dir?: string) => {
      const child = Bun.spawn([process.execPath, import.meta.path, '--child', variant, '--port', String(port), ...(dir ? ['--dir', dir] : [])], {
        stdout: 'pipe',
        stderr: 'inherit',
      });
      process.on('exit', () => child.kill('SIGKILL'));
      const first = new TextDecoder().decode((await child.stdout.getReader().read()).value);
      return { child, ...(JSON.parse(first) as { apiKey: string; dir: string }) };
    };
    const first = await spawn();
    const children = [first.child];
    if (variant === 'two-processes') children.push((await spawn(first.dir)).child);
    // Every process's CPU, and every HTTP thread's.
    const probes = children.map((c) => cpuOf(c.pid));
    const cpu = () => probes.map((p) => p()).reduce((a, b) => ({ total: a.total + b.total, main: a.main + b.main }));
    const r = await wrk(
      `http://127.0.0.1:${port}/emails`,
      body,
      { authorization: `Bearer ${first.apiKey}`, 'content-type': 'application/json' },
      { ...run, cpu },
    );
    show(names[variant], r, children.length);
    rates[variant] = r.rps;
    for (const c of children.reverse()) {
      c.kill('SIGTERM');
      await c.exited;
    }
  }
  // What 0.3 of the bare server asks of one HTTP thread, and what is left of it for storing.
  const goal = 0.3 * ref.rps;
  const budget = 1e6 / goal;
  const without = 1e6 / rates['no-writes-but-log']!;
  console.log(`\n0.3 of the bare server is ${fmt(goal)} req/s: ${fmt(budget, 1)} µs of wall time per request on the HTTP thread.`);
  console.log(`Without storing the email the API takes ${fmt(without, 1)} µs per request (its rate above): storing it may add ${fmt(budget - without, 1)} µs.`);
}
