#!/usr/bin/env bun
/**
 * Side-by-side benchmark — `npm run bench:compare` (= `bun scripts/bench/compare.ts`).
 *
 *   npm run bench:compare                         every part, 5 s per wrk run (after 3 s unmeasured)
 *   npm run bench:compare -- --only http,smtp     some parts: http batch large smtp submission deliver start queued
 *   npm run bench:compare -- --queued 100000      also the RSS with 100,000 emails waiting (part `queued`)
 *   npm run bench:compare -- --rounds 5           five alternating rounds of the Postfix parts (default 3)
 *   npm run bench:compare -- --warm-up 1000       a shorter warm-up of the smtp and deliver parts (default 15,000)
 *   npm run bench:compare -- --only pg --rounds 5  PostgreSQL vs LMDB, one node, five rounds
 *
 * Each Posthorn figure is printed beside a reference measured in the same run, on the same
 * machine, with the same client, so the ratio means something on a shared, noisy machine:
 *   http        durable single POST /emails (one recipient) vs two references: a durable one — a bare
 *               `Bun.serve` that parses the same JSON body and answers after one lmdb-js `put` of it
 *               is committed (the least a durable accept can do) — and a bare `Bun.serve` that
 *               parses it and answers an id — Debian's `wrk`, 64 connections, 2 threads, after 3 s
 *               of the same load unmeasured (WRK_WARM_UP_SECONDS). The
 *               destination is held meanwhile (below), so this is the accept path's cost alone.
 *   batch       POST /emails/batch with 100 emails, wrk with 8 connections: emails/s accepted, and
 *               written as emails (docs/ARCHITECTURE.md §4), vs the durable reference given the same
 *               body — once putting it whole (accepted), once putting each email (written).
 *   large       POST /emails with one 5 MB and one 20 MB attachment: median answer time of 10.
 *   smtp        SMTP ingest to a receiving domain with Postfix's `smtp-source -s 16 -m 4000
 *               -l 2048` (plain SMTP, a new connection per message) vs a private Postfix as the
 *               MX of the same domain (virtual(8) into a Maildir): msg/s answered 250 (both
 *               answer once the message is durably queued), and msg/s until all are stored
 *               (Posthorn: processed into received emails; Postfix: delivered into the Maildir),
 *               each after --warm-up unmeasured messages of the same kind (WARM_UP).
 *   submission  authenticated STARTTLS submission (AUTH PLAIN with an API key), nodemailer pool
 *               of 16 reused connections: msg/s (Posthorn only; Postfix submission needs SASL).
 *   deliver     N emails accepted while the delivery engine delivers them, DKIM-signed, to
 *               Postfix's `smtp-sink` — relay mode and direct MX (through a DNS server in this
 *               process) — with two loads, each on a fresh instance: 16 clients sending single
 *               POST /emails, and 4 clients sending POST /emails/batch with 100 emails each; vs
 *               Postfix relaying N messages injected by smtp-source to the same sink: msg/s from
 *               the first accept to the last delivery, each after --warm-up messages accepted
 *               (with the same load) and delivered, unmeasured.
 *   start       `dist/posthorn serve` (when built) from exec to its first `/health` answer.
 *   pg          one node on PostgreSQL (cluster mode; a private server started here like the tests'
 *               — initdb in a temp dir, loopback only, fsync and synchronous_commit on) vs the same
 *               node on LMDB: POST /emails with 64 in flight for --seconds while the node delivers
 *               to an SMTP sink on loopback (the issue's "one node"), then until all are delivered:
 *               accepted/s over the load, delivered/s from its start to the last delivery; each
 *               after --warm-up-pg emails accepted and delivered the same way, unmeasured; --rounds
 *               rounds, LMDB then PostgreSQL, medians and every round printed.
 *   queued      RSS with `--queued` emails waiting in the queue, once it has settled: first with
 *               their destination held (queued, not tried), then released — the destination
 *               refuses connections, so each is tried once and waits for its retry.
 * The parts with Postfix as the reference (smtp, deliver) run `--rounds` rounds, Posthorn then
 * Postfix, each on a fresh instance, and print the median of each side and the ratio of the
 * medians, with every round's figure below: Postfix's own rate moves by up to half from one
 * run to the next on a shared machine, so one pair of runs says little.
 * Postfix parts need Debian's `postfix` package and root, and are skipped otherwise. Posthorn
 * runs as a child process (`bun src/main.ts serve`) on a fresh data dir with logs off. Nothing
 * leaves 127.0.0.1.
 */
import { parseArgs } from 'node:util';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { cpus } from 'node:os';
import nodemailer from 'nodemailer';
import { wrk as runWrk, cpuOf, startBare, startDurable, type CpuProbe } from './wrk';
import {
  startChild,
  tempDir,
  call,
  sendInBatches,
  numberedEmails,
  closedLoop,
  freePort,
  fmt,
  mb,
  machine,
  table,
  fail,
  verifiedSendingDomain,
  DEST_TTL_S,
  ROOT,
  type Target,
  inParallel,
  deliverLoads,
} from './lib';
import type { MetricsBody } from './lib';
import { postfixAvailable, postfixVersion, startPostfix, startSmtpSink, runSmtpSource } from './postfix';
import { startDnsServer } from '../../test/helpers/dns';
import { startSink } from '../../test/helpers/sink';
import { startPgServer } from '../../test/helpers/postgres';
import { setQuiet } from '../../src/log';

const PARTS = ['http', 'batch', 'large', 'smtp', 'submission', 'deliver', 'pg', 'start', 'queued'] as const;
type Part = (typeof PARTS)[number];

const { values: opts } = parseArgs({
  args: process.argv.slice(2),
  options: {
    seconds: { type: 'string', default: '5' },
    only: { type: 'string', default: 'http,batch,large,smtp,submission,deliver,pg,start' },
    count: { type: 'string', default: '4000' },
    queued: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '3' },
    'warm-up': { type: 'string', default: '15000' },
    'warm-up-seconds': { type: 'string', default: '3' },
    'warm-up-pg': { type: 'string', default: '2000' },
  },
  strict: true,
});
const SECONDS = Number(opts.seconds);
const COUNT = Number(opts.count);
const QUEUED = Number(opts.queued);
const ROUNDS = Number(opts.rounds);
/**
 * Messages each server gets, unmeasured, before its measured run of the smtp and deliver parts (and
 * stores or delivers, before that starts): a server's steady state is what is compared, not its
 * first seconds — for Posthorn, the JIT compiling its hot code on a fresh process; for Postfix, its
 * processes being forked. JSC keeps moving functions of these paths to its top tier (FTL) for about
 * 15,000 SMTP messages and 9,000 delivered ones (`BUN_JSC_reportFTLCompileTimes=1`): 200–400 ms of
 * compiling a second until then, a fifth of a core. After 1,000, the JIT's thread still took
 * 257 µs per SMTP message (profile-smtp.ts, README.md, "Past experiments"), after 20,000, 50 µs.
 */
const WARM_UP = Number(opts['warm-up']);
/**
 * Seconds of unmeasured load each server gets first, with the same request: its steady state is
 * compared (as WARM_UP above for SMTP and delivery), not a fresh process whose JIT is still
 * compiling its hot code — which took a sixth of the two cores during the first 5 s of POST
 * /emails; JSC's FTL compiling of this path settles within 3 s.
 */
const WRK_WARM_UP_SECONDS = Number(opts['warm-up-seconds']);
/** Emails each node of the pg part accepts and delivers, unmeasured, first (fewer than WARM_UP: PostgreSQL delivers a few hundred a second here). */
const WARM_UP_PG = Number(opts['warm-up-pg']);
const ONLY = new Set(opts.only!.split(',').map((s) => s.trim()) as Part[]);
for (const p of ONLY) if (!PARTS.includes(p)) fail(`unknown part ${p}; parts: ${PARTS.join(' ')}`);
if (
  !(SECONDS > 0) ||
  !(COUNT > 0) ||
  !(QUEUED > 0) ||
  !(Number.isInteger(ROUNDS) && ROUNDS > 0) ||
  !(Number.isInteger(WARM_UP) && WARM_UP > 0) ||
  !(WRK_WARM_UP_SECONDS > 0) ||
  !(Number.isInteger(WARM_UP_PG) && WARM_UP_PG >= 0)
)
  fail(
    'usage: bun scripts/bench/compare.ts [--seconds 5] [--only parts] [--count 4000] [--queued 100000] [--rounds 3] [--warm-up 15000] [--warm-up-seconds 3] [--warm-up-pg 2000]',
  );
if (!Bun.which('wrk') && (ONLY.has('http') || ONLY.has('batch'))) fail('wrk is not installed (apt-get install wrk)');
setQuiet(true);
const noPostfix = postfixAvailable();

console.log('Posthorn vs references, one run');
console.log(`  command   bun scripts/bench/compare.ts ${process.argv.slice(2).join(' ')}`.trimEnd());
console.log(`  machine   ${machine()}`);
console.log(`  postfix   ${noPostfix ? `skipped: ${noPostfix}` : postfixVersion()}`);
const row = table([48, 14, 14, 8]);
console.log(`\n${row(['', 'Posthorn', 'reference', 'ratio'])}`);
const results: string[][] = [];
function report(name: string, ours: string, ref: string, ratio: number | null) {
  const r = [name, ours, ref, ratio === null ? '' : fmt(ratio, 2)];
  results.push(r);
  console.log(row(r));
}

const dns = await startDnsServer();
// TTLs of minutes, as real zones have (the test server's default is 0, so that tests see every
// change at once): what a long-running MTA's caching resolver sees. Posthorn's (src/dns/cache.ts)
// then asks once for the destination's MX and addresses, and once for the SMTP part's sender
// domain, which has no records (a negative answer, kept for its SOA's TTL: RFC 2308 §5).
// (dest.test's MX and address are published with the sending domain, by verifiedSendingDomain.)
dns.zone.setNegativeTtl(DEST_TTL_S);

/** wrk with this run's --seconds and warm-up. */
const wrk = (url: string, body: string, headers: Record<string, string>, connections: number, cpu?: CpuProbe) =>
  runWrk(url, body, headers, { warmUpSeconds: WRK_WARM_UP_SECONDS, seconds: SECONDS, connections, cpu });

/** wrk against a reference server (wrk.ts), the same body as Posthorn is given; the server is stopped after. */
async function onReference(started: ReturnType<typeof startBare>, body: string, connections: number) {
  const server = await started;
  try {
    return await wrk(server.url, body, { 'content-type': 'application/json' }, connections, cpuOf(server.pid));
  } finally {
    server.stop();
  }
}

/** The sending domain of the Posthorn running now (each has its own: a fresh DKIM key in the zone). */
let sender = 'bench.test';
const email = numberedEmails(() => sender);

/** The token of GET /metrics for the accept part's Posthorn. */
const METRICS_TOKEN = randomBytes(16).toString('hex');

/** Batches accepted and not yet written as their emails (`posthorn_incoming_requests`, GET /metrics). */
async function incomingRequests(target: Target): Promise<number> {
  const text = await (await fetch(`${target.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  const line = text.split('\n').find((l) => l.startsWith('posthorn_incoming_requests '));
  if (!line) fail('GET /metrics has no posthorn_incoming_requests');
  return Number(line!.split(' ')[1]);
}

/** Posthorn on a fresh data dir with a verified sending domain; delivery to `env`'s destination. */
let instances = 0;
async function posthorn(env: Record<string, string>): Promise<Target> {
  const target = await startChild(tempDir('posthorn-bench-compare-'), {
    POSTHORN_DNS_SERVERS: dns.address,
    POSTHORN_SMTP_HOSTNAME: 'mx.posthorn.test',
    ...env,
  });
  sender = `bench${++instances}.test`;
  await verifiedSendingDomain(target, dns.zone, sender);
  return target;
}

// ---------------------------------------------------------------------------------------------
// http, batch, large: what accepting costs. The destination is held (POST /queue/dest.test/hold,
// docs/api.md §19.7): each accepted email is queued due now as always, and the delivery thread only
// moves it out of the due range — no attempt runs beside the accept path. (Letting it attempt a
// closed port instead costs two commits and about fifteen writes per email on the other thread,
// the price of a real attempt's bookkeeping: a fifth of the batch rate on two cores. `deliver`
// below measures accepting and delivering together.)
// ---------------------------------------------------------------------------------------------
if (ONLY.has('http') || ONLY.has('batch') || ONLY.has('large')) {
  const target = await posthorn({
    POSTHORN_DELIVERY_MODE: 'relay',
    POSTHORN_DELIVERY_RELAY_URL: 'smtp://127.0.0.1:9',
    POSTHORN_DELIVERY_RETRY_SCHEDULE: '1h',
    POSTHORN_METRICS_TOKEN: METRICS_TOKEN,
  });
  const auth = { authorization: `Bearer ${target.apiKey}`, 'content-type': 'application/json' };
  await call(target, 'POST', '/queue/dest.test/hold');
  if (ONLY.has('http')) {
    const body = JSON.stringify(email());
    const ref = await onReference(startBare(), body, 64);
    const dref = await onReference(startDurable(), body, 64);
    const ours = await wrk(`${target.url}/emails`, body, auth, 64, cpuOf(target.pid));
    if (ours.non2xx) fail(`POST /emails: ${ours.non2xx} answers were not 2xx`);
    report('POST /emails, 64 conn (req/s) vs durable ref', fmt(ours.rps), fmt(dref.rps), ours.rps / dref.rps);
    report('POST /emails, 64 conn (req/s) vs bare', fmt(ours.rps), fmt(ref.rps), ours.rps / ref.rps);
    if (ours.cpu && ref.cpu) {
      // The most the machine could do at this CPU per request, every core busy with Posthorn and wrk.
      const cores = cpus().length;
      const ceiling = (cores * 1e6) / (ours.cpu.server + ours.cpu.wrk);
      console.log(
        `    (CPU per request: Posthorn ${fmt(ours.cpu.server, 1)} µs on all its threads, ${fmt(ours.cpu.main, 1)} on the HTTP thread; bare server ${fmt(ref.cpu.server, 1)} µs; durable reference ${fmt(dref.cpu?.server ?? NaN, 1)} µs, ${fmt(dref.cpu?.main ?? NaN, 1)} on its main thread; wrk ${fmt(ours.cpu.wrk, 1)} µs with Posthorn, ${fmt(ref.cpu.wrk, 1)} with the bare server.`,
      );
      console.log(`     ${cores} cores all busy at that cost would answer at most ${fmt(ceiling)} req/s: ${fmt(ceiling / ref.rps, 2)} of the bare server.)`);
    }
  }
  if (ONLY.has('batch')) {
    const body = JSON.stringify(Array.from({ length: 100 }, email));
    const ours = await wrk(`${target.url}/emails/batch`, body, auth, 8, cpuOf(target.pid));
    if (ours.non2xx) fail(`POST /emails/batch: ${ours.non2xx} answers were not 2xx`);
    // A batch is accepted as one record of the incoming queue and written as its emails by the back
    // office (docs/ARCHITECTURE.md §4): how long after the run the queue took to empty, read from
    // GET /metrics (every team route would write what waits itself). The emails of the run over
    // the run and that time: a floor, since what the warm-up left waiting is written in it too.
    const d0 = performance.now();
    while ((await incomingRequests(target)) > 0) await Bun.sleep(20);
    const drainS = (performance.now() - d0) / 1000;
    const written = (ours.rps * 100 * SECONDS) / (SECONDS + drainS);
    // The same body to two durable references, same client: one lmdb-js put of the request (what
    // Posthorn's accept writes), and one put per email (the least a store that keeps each email a
    // record of its own can write) — the floor of accepting, and the floor of writing the emails.
    const refs = { request: await onReference(startDurable('request'), body, 8), email: await onReference(startDurable('email'), body, 8) };
    report('POST /emails/batch ×100, 8 conn (emails/s)', fmt(ours.rps * 100), 'goal 50,000', (ours.rps * 100) / 50_000);
    report('  accepted vs durable ref, one put a request', fmt(ours.rps * 100), fmt(refs.request.rps * 100), ours.rps / refs.request.rps);
    report('  written vs durable ref, one put an email', fmt(written), fmt(refs.email.rps * 100), written / (refs.email.rps * 100));
    console.log(`    (written as emails: the queue emptied ${fmt(drainS, 1)} s after the run; ${fmt(written)} emails/s from the run's start until then.)`);
    // Per email: 50,000 emails/s on two cores leaves all threads together 40 µs of a core.
    if (ours.cpu)
      console.log(
        `    (CPU per email: Posthorn ${fmt(ours.cpu.server / 100, 1)} µs on all its threads, ${fmt(ours.cpu.main / 100, 1)} on the HTTP thread; durable refs ${fmt((refs.request.cpu?.server ?? NaN) / 100, 1)} µs (a request) and ${fmt((refs.email.cpu?.server ?? NaN) / 100, 1)} µs (an email) on all their threads; ${cpus().length} cores all busy give ${fmt((cpus().length * 1e6) / 50_000, 0)} µs an email at 50,000/s.)`,
      );
  }
  if (ONLY.has('large')) {
    for (const size of [5, 20]) {
      const content = randomBytes(size * 1024 * 1024).toString('base64');
      const times: number[] = [];
      for (let i = 0; i < 10; i++) {
        const body = JSON.stringify({ ...email(), attachments: [{ filename: 'big.bin', content }] });
        const t0 = performance.now();
        await call(target, 'POST', '/emails', body);
        times.push(performance.now() - t0);
      }
      times.sort((a, b) => a - b);
      report(`POST /emails, one ${size} MB attachment (ms)`, fmt(times[5]!), size === 5 ? 'goal 100' : '', size === 5 ? times[5]! / 100 : null);
    }
  }
  await target.stop();
}

// ---------------------------------------------------------------------------------------------
// smtp: inbound ingest with smtp-source, vs Postfix as the MX
// ---------------------------------------------------------------------------------------------
/** msg/s of `count` messages from `t0` until `done()` holds (polled). */
async function rateUntil(done: () => Promise<boolean> | boolean, count: number, t0: number): Promise<number> {
  const deadline = performance.now() + 600_000;
  while (!(await done())) {
    if (performance.now() > deadline) fail('not all messages were processed within 10 minutes');
    await Bun.sleep(20);
  }
  return count / ((performance.now() - t0) / 1000);
}

async function smtpSource(port: number, to: string, count: number, t0 = performance.now()): Promise<number> {
  await runSmtpSource(port, to, count).catch((e: Error) => fail(e.message));
  return count / ((performance.now() - t0) / 1000);
}

if (ONLY.has('smtp')) {
  // Accepted = answered 250 (spooled, for Posthorn; queued, for Postfix); stored = each message
  // processed into a received email (Posthorn) or delivered into the Maildir (Postfix).
  const ours = async () => {
    const port = await freePort();
    const target = await posthorn({
      POSTHORN_SMTP_STARTTLS_PORTS: String(port),
      POSTHORN_DELIVERY_MODE: 'relay',
      POSTHORN_DELIVERY_RELAY_URL: 'smtp://127.0.0.1:9',
    });
    await call(target, 'POST', '/domains', { name: 'recv.test', capabilities: { sending: 'disabled', receiving: 'enabled' } });
    await waitForGreeting(port);
    const received = async () => (await call<MetricsBody>(target, 'GET', '/emails/metrics?metrics=received')).totals.received;
    await smtpSource(port, 'inbox@recv.test', WARM_UP);
    await rateUntil(async () => (await received()) >= WARM_UP, WARM_UP, performance.now());
    const t0 = performance.now();
    const accepted = await smtpSource(port, 'inbox@recv.test', COUNT, t0);
    const stored = await rateUntil(async () => (await received()) >= WARM_UP + COUNT, COUNT, t0);
    await target.stop();
    return [accepted, stored];
  };
  const reference = async () => {
    const pfPort = await freePort();
    const pf = startPostfix(tempDir('posthorn-bench-postfix-'), pfPort, { kind: 'mx', domain: 'recv.test' });
    await waitForGreeting(pfPort);
    await smtpSource(pfPort, 'inbox@recv.test', WARM_UP);
    await rateUntil(() => pf.delivered() >= WARM_UP, WARM_UP, performance.now());
    const p0 = performance.now();
    const accepted = await smtpSource(pfPort, 'inbox@recv.test', COUNT, p0);
    const stored = await rateUntil(() => pf.delivered() >= WARM_UP + COUNT, COUNT, p0);
    pf.stop();
    return [accepted, stored];
  };
  const { ours: o, ref: r } = await rounds(ours, noPostfix ? null : reference);
  reportRounds(
    'SMTP ingest, smtp-source -s 16 (msg/s)',
    o.map((x) => x[0]!),
    r?.map((x) => x[0]!) ?? null,
  );
  reportRounds(
    '  … until stored (msg/s)',
    o.map((x) => x[1]!),
    r?.map((x) => x[1]!) ?? null,
  );
}

/** `ROUNDS` rounds of Posthorn then the reference (null: none), each figure set kept. */
async function rounds<T>(ours: () => Promise<T>, ref: (() => Promise<T>) | null): Promise<{ ours: T[]; ref: T[] | null }> {
  const out: { ours: T[]; ref: T[] | null } = { ours: [], ref: ref ? [] : null };
  for (let i = 0; i < ROUNDS; i++) {
    out.ours.push(await ours());
    if (ref) out.ref!.push(await ref());
  }
  return out;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

/** The medians and their ratio, and every round's figures (and ratios) on a line of their own. */
function reportRounds(name: string, ours: number[], ref: number[] | null, names = ['Posthorn', 'Postfix']) {
  report(name, fmt(median(ours)), ref ? fmt(median(ref)) : 'n/a', ref ? median(ours) / median(ref) : null);
  if (ours.length > 1)
    console.log(
      `    (rounds: ${names[0]} ${ours.map((x) => fmt(x)).join(' / ')}${ref ? `; ${names[1]} ${ref.map((x) => fmt(x)).join(' / ')}; ratios ${ours.map((x, i) => fmt(x / ref[i]!, 2)).join(' / ')}` : ''})`,
    );
}

async function waitForGreeting(port: number) {
  for (let i = 0; ; i++) {
    const ok = await new Promise<boolean>((resolve) => {
      Bun.connect({
        hostname: '127.0.0.1',
        port,
        socket: {
          data(s, d) {
            resolve(d.toString().startsWith('220'));
            s.end();
          },
          error: () => resolve(false),
          connectError: () => resolve(false),
          close: () => resolve(false),
        },
      }).catch(() => resolve(false));
    });
    if (ok) return;
    if (i > 300) fail(`nothing greets on port ${port}`);
    await Bun.sleep(50);
  }
}

// ---------------------------------------------------------------------------------------------
// submission: authenticated STARTTLS
// ---------------------------------------------------------------------------------------------
if (ONLY.has('submission')) {
  const port = await freePort();
  const sink = startSmtpSink(await freePort());
  const target = await posthorn({
    POSTHORN_SMTP_STARTTLS_PORTS: String(port),
    POSTHORN_DELIVERY_MODE: 'relay',
    POSTHORN_DELIVERY_RELAY_URL: `smtp://127.0.0.1:${sink.port}`,
  });
  await waitForGreeting(port);
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
  const n = Math.min(COUNT, 2000);
  const t0 = performance.now();
  await inParallel(16, n, async () => {
    const e = email();
    await transport.sendMail({ from: e.from, to: e.to, subject: e.subject, text: e.text, html: e.html });
  });
  const rate = n / ((performance.now() - t0) / 1000);
  transport.close();
  await target.stop();
  sink.stop();
  report('SMTP submission, STARTTLS + AUTH, 16 conn (msg/s)', fmt(rate), '', null);
}

// ---------------------------------------------------------------------------------------------
// deliver: accept and deliver at once, vs Postfix relaying
// ---------------------------------------------------------------------------------------------
/** msg/s of `n` messages from `t0` until `count()` reaches `target`. */
async function untilCount(count: () => number, target: number, n: number, t0: number): Promise<number> {
  const deadline = performance.now() + 600_000;
  while (count() < target) {
    if (performance.now() > deadline) fail(`only ${count()} of ${target} messages arrived within 10 minutes`);
    await Bun.sleep(20);
  }
  return n / ((performance.now() - t0) / 1000);
}

const DELIVER_LOADS = deliverLoads(email);
type DeliverLoad = keyof typeof DELIVER_LOADS;

if (ONLY.has('deliver')) {
  if (COUNT % 100 || WARM_UP % 100) fail('the deliver part sends batches of 100: --count and --warm-up must be multiples of 100');
  const ours = async () => {
    const rates: Record<string, number> = {};
    for (const load of Object.keys(DELIVER_LOADS) as DeliverLoad[])
      for (const mode of ['relay', 'direct'] as const) {
        const sink = startSmtpSink(await freePort());
        const env: Record<string, string> =
          mode === 'relay'
            ? { POSTHORN_DELIVERY_MODE: 'relay', POSTHORN_DELIVERY_RELAY_URL: `smtp://127.0.0.1:${sink.port}` }
            : { POSTHORN_DELIVERY_MX_PORT: String(sink.port) };
        const target = await posthorn(env);
        await DELIVER_LOADS[load].send(target, WARM_UP);
        await untilCount(sink.count, WARM_UP, WARM_UP, performance.now());
        const t0 = performance.now();
        await DELIVER_LOADS[load].send(target, COUNT);
        rates[`${load} ${mode}`] = await untilCount(sink.count, WARM_UP + COUNT, COUNT, t0);
        await target.stop();
        sink.stop();
      }
    return rates;
  };
  const reference = async () => {
    const sink = startSmtpSink(await freePort());
    const pfPort = await freePort();
    const pf = startPostfix(tempDir('posthorn-bench-postfix-'), pfPort, { kind: 'relay', relayhost: `[127.0.0.1]:${sink.port}` });
    await waitForGreeting(pfPort);
    await smtpSource(pfPort, 'user@dest.test', WARM_UP);
    await untilCount(sink.count, WARM_UP, WARM_UP, performance.now());
    const t0 = performance.now();
    await smtpSource(pfPort, 'user@dest.test', COUNT);
    const rate = await untilCount(sink.count, WARM_UP + COUNT, COUNT, t0);
    pf.stop();
    sink.stop();
    return { postfix: rate } as Record<string, number>;
  };
  const { ours: o, ref: r } = await rounds(ours, noPostfix ? null : reference);
  // Postfix relays the same number of messages once a round: the reference of all four rows.
  for (const load of Object.keys(DELIVER_LOADS) as DeliverLoad[])
    for (const mode of ['relay', 'direct'] as const)
      reportRounds(
        `accept + deliver, ${mode}, ${DELIVER_LOADS[load].name} (msg/s)`,
        o.map((x) => x[`${load} ${mode}`]!),
        r?.map((x) => x.postfix!) ?? null,
      );
}

// ---------------------------------------------------------------------------------------------
// pg: one node on PostgreSQL vs the same on LMDB, accepting while it delivers
// ---------------------------------------------------------------------------------------------
if (ONLY.has('pg')) {
  const pg = await startPgServer();
  const sink = await startSink({ tls: 'none' });
  /** accepted/s and delivered/s of one node on `databaseUrl` (null: LMDB). */
  const node = async (databaseUrl: string | null) => {
    const target = await posthorn({ POSTHORN_DELIVERY_MX_PORT: String(sink.port), ...(databaseUrl ? { POSTHORN_DATABASE_URL: databaseUrl } : {}) });
    const send = () => call(target, 'POST', '/emails', email());
    const delivered = (base: number) => () => sink.messages.length - base;
    let base = sink.messages.length;
    await inParallel(64, WARM_UP_PG, send);
    await untilCount(delivered(base), WARM_UP_PG, WARM_UP_PG, performance.now());
    base = sink.messages.length;
    const t0 = performance.now();
    const load = await closedLoop(64, SECONDS, send);
    const rates = { accepted: load.requests / load.seconds, delivered: await untilCount(delivered(base), load.requests, load.requests, t0) };
    await target.stop();
    return rates;
  };
  const o: { accepted: number; delivered: number }[] = [];
  const r: { accepted: number; delivered: number }[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    r.push(await node(null));
    const url = await pg.database('bench');
    o.push(await node(url));
    await pg.drop(url);
  }
  const names = ['PostgreSQL', 'LMDB'];
  reportRounds(
    'one node on PostgreSQL vs LMDB: accepted/s',
    o.map((x) => x.accepted),
    r.map((x) => x.accepted),
    names,
  );
  reportRounds(
    '  … delivered/s (first accept to last delivery)',
    o.map((x) => x.delivered),
    r.map((x) => x.delivered),
    names,
  );
  await sink.close();
  pg.destroy();
}

// ---------------------------------------------------------------------------------------------
// start: the binary to its first /health
// ---------------------------------------------------------------------------------------------
if (ONLY.has('start')) {
  const binary = join(ROOT, 'dist', 'posthorn');
  if (!existsSync(binary)) report('binary start to /health (ms)', 'not built', 'goal 300', null);
  else {
    const times: number[] = [];
    for (let i = 0; i < 7; i++) {
      const dir = tempDir('posthorn-bench-start-');
      const port = await freePort();
      const env = {
        ...(process.env as Record<string, string>),
        POSTHORN_LOG: 'silent',
        POSTHORN_DATA_DIR: dir,
        POSTHORN_HTTP_HOST: '127.0.0.1',
        POSTHORN_HTTP_PORT: String(port),
        POSTHORN_SMTP_STARTTLS_PORTS: '',
        POSTHORN_SMTP_TLS_PORTS: '',
      };
      // The first start bootstraps (creates keys, hashes a password): not what a restart costs.
      Bun.spawnSync([binary, 'init', '--json'], { cwd: dir, env });
      const t0 = performance.now();
      const proc = Bun.spawn([binary, 'serve'], { cwd: dir, env, stdout: 'ignore', stderr: 'ignore' });
      while (
        !(await fetch(`http://127.0.0.1:${port}/health`).then(
          (r) => r.ok,
          () => false,
        ))
      )
        await Bun.sleep(5);
      times.push(performance.now() - t0);
      proc.kill('SIGKILL');
      await proc.exited;
    }
    times.sort((a, b) => a - b);
    report('binary start to /health, median of 7 (ms)', fmt(times[3]!), 'goal 300', times[3]! / 300);
  }
}

// ---------------------------------------------------------------------------------------------
// queued: RSS with many emails waiting
// ---------------------------------------------------------------------------------------------
if (ONLY.has('queued')) {
  // Port 9 (discard) is closed on loopback: an attempt fails to connect and waits an hour to retry.
  const target = await posthorn({ POSTHORN_DELIVERY_MODE: 'relay', POSTHORN_DELIVERY_RELAY_URL: 'smtp://127.0.0.1:9', POSTHORN_DELIVERY_RETRY_SCHEDULE: '1h' });
  /**
   * RSS once it has stopped falling — the heap's garbage collected and freed pages returned, which
   * the collector's own timers do some seconds after the load: no new low for 15 s (at most a
   * minute) — reported with its parts.
   */
  const settled = async (name: string) => {
    let low = target.rss();
    for (let i = 0, quiet = 0; i < 12 && quiet < 3; i++) {
      await Bun.sleep(5000);
      const now = target.rss();
      quiet = now < low - 2 * 1048576 ? 0 : quiet + 1;
      low = Math.min(low, now);
    }
    const parts = target.rssParts();
    report(name, fmt(target.rss() / 1048576), 'goal 300', target.rss() / 1048576 / 300);
    console.log(`    (anonymous ${mb(parts.anon)}, file-backed ${mb(parts.file)})`);
  };
  // First they wait held (docs/api.md §19.7): queued, and not tried.
  await call(target, 'POST', '/queue/dest.test/hold');
  await sendInBatches(target, QUEUED, email);
  await settled(`RSS, ${fmt(QUEUED)} emails queued, held (MB)`);
  // Then each is tried once and waits for its retry, its attempt and its events (sent,
  // delivery_delayed) stored: what a destination that is down leaves behind.
  await call(target, 'POST', '/queue/dest.test/release');
  const attempted = async () => (await call<MetricsBody>(target, 'GET', '/emails/metrics?metrics=delivery_delayed')).totals.delivery_delayed;
  await rateUntil(async () => (await attempted()) >= QUEUED, QUEUED, performance.now());
  await settled(`RSS, ${fmt(QUEUED)} emails queued, each tried once (MB)`);
  await target.stop();
}

await dns.close();
process.exit(0);
