#!/usr/bin/env bun
/**
 * Webhook delivery benchmark — `npm run bench:webhooks` (= `bun scripts/bench/webhooks.ts`).
 *
 *   npm run bench:webhooks                                 defaults: 10,000 events, 4 endpoints (~15 s)
 *   npm run bench:webhooks -- --events 5000 --endpoints 2
 *
 * Posthorn's services run in this process (as the tests start them: createServices on a fresh
 * LMDB in a temp dir, `security.allow_private_networks` on); the receiver is a child process
 * (`bun scripts/bench/webhooks.ts --receiver`), a Bun.serve on 127.0.0.1 answering 200 and
 * counting requests and distinct svix-ids. One team gets `--endpoints` webhooks subscribed to
 * `contact.updated`, each at its own path of the receiver.
 *
 *   1. enqueue  `--events` events through the one event function (`Events.other`, 100 per
 *               unit of work, as concurrent writers would batch), each fanned out to every
 *               endpoint in the same commit → events × endpoints outbox entries. Dispatcher off.
 *   2. drain    the dispatcher starts (per-endpoint limit 4, global limit 64) and the clock runs
 *               until the outbox is empty; every webhook event must then be `success` and the
 *               receiver must have seen each svix-id exactly once.
 *
 * Prints deliveries/s, enqueue rate, and the RSS of this process (Posthorn without the receiver)
 * at start, peak during the drain, and end. Nothing leaves 127.0.0.1; the temp dir is removed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values: opts } = parseArgs({
  args: process.argv.slice(2),
  options: {
    events: { type: 'string', default: '10000' },
    endpoints: { type: 'string', default: '4' },
    receiver: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h' },
  },
  strict: true,
});

if (opts.receiver) runReceiver();
else {
  if (opts.help) {
    console.log('usage: bun scripts/bench/webhooks.ts [--events 10000] [--endpoints 4]');
    process.exit(0);
  }
  await main();
}

/** The receiver child: answers 200, counts; GET /stats → {requests, unique}. Prints its port. */
function runReceiver(): void {
  const ids = new Set<string>();
  let requests = 0;
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      if (req.method === 'GET') return Response.json({ requests, unique: ids.size });
      await req.arrayBuffer();
      requests++;
      ids.add(req.headers.get('svix-id') ?? '');
      return new Response('ok');
    },
  });
  console.log(server.port);
}

async function main(): Promise<void> {
  const EVENTS = Number(opts.events);
  const ENDPOINTS = Number(opts.endpoints);
  if (!Number.isInteger(EVENTS) || EVENTS < 1 || EVENTS > 1_000_000) fail('--events must be an integer 1-1000000');
  if (!Number.isInteger(ENDPOINTS) || ENDPOINTS < 1 || ENDPOINTS > 100) fail('--endpoints must be an integer 1-100');

  const { loadConfig } = await import('../../src/config');
  const { createServices, closeServices } = await import('../../src/services');
  const { createTeam } = await import('../../src/accounts/bootstrap');
  const { createWebhook } = await import('../../src/events/webhooks');
  const { setQuiet } = await import('../../src/log');
  setQuiet(true);

  const dataDir = mkdtempSync(join(tmpdir(), 'posthorn-bench-webhooks-'));
  const child = Bun.spawn([process.execPath, import.meta.path, '--receiver'], { stdout: 'pipe', stderr: 'inherit' });
  process.on('exit', () => {
    child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });
  const reader = child.stdout.getReader();
  const port = Number(new TextDecoder().decode((await reader.read()).value).trim());
  if (!port) fail('the receiver did not start');
  const receiverUrl = `http://127.0.0.1:${port}`;

  const config = loadConfig({ env: {}, overrides: { data_dir: dataDir, 'security.allow_private_networks': true, 'dns.servers': ['127.0.0.1:9'] } });
  const svc = await createServices(config);
  const { team_id: team } = await createTeam(svc.store);
  for (let i = 0; i < ENDPOINTS; i++) await createWebhook(svc.store, team, { endpoint: `${receiverUrl}/hook/${i}`, events: ['contact.updated'] }, true);
  const rssStart = process.memoryUsage().rss;

  // 1. Enqueue through the event function, 100 events per commit, commits issued concurrently.
  const t0 = performance.now();
  const commits: Promise<unknown>[] = [];
  for (let i = 0; i < EVENTS; i += 100) {
    const n = Math.min(100, EVENTS - i);
    commits.push(
      svc.store.write(async (tx) => {
        for (let j = 0; j < n; j++) {
          const at = new Date().toISOString();
          await svc.events.other(tx, team, 'contact.updated', crypto.randomUUID(), {
            id: crypto.randomUUID(),
            audience_id: null,
            segment_ids: [],
            created_at: at,
            updated_at: at,
            email: `user${i + j}@bench.test`,
            first_name: 'Bench',
            last_name: null,
            unsubscribed: false,
          });
        }
      }),
    );
  }
  await Promise.all(commits);
  const enqueueSeconds = (performance.now() - t0) / 1000;
  const total = EVENTS * ENDPOINTS;
  const queued = await svc.store.outbox.size();
  if (queued !== total) fail(`outbox holds ${queued} entries, expected ${total}`);

  // 2. Drain.
  let rssPeak = process.memoryUsage().rss;
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 100);
  const t1 = performance.now();
  await svc.backOffice.start();
  while ((await svc.store.outbox.size()) > 0) await Bun.sleep(20);
  await svc.backOffice.idle('webhooks');
  const drainSeconds = (performance.now() - t1) / 1000;
  clearInterval(sampler);
  const rssEnd = process.memoryUsage().rss;

  let success = 0;
  for (const e of await svc.store.webhookEvents.all(team)) if (e.status === 'success') success++;
  const stats = (await (await fetch(`${receiverUrl}/stats`)).json()) as { requests: number; unique: number };
  await closeServices(svc);
  if (success !== total || stats.unique !== total)
    fail(`delivered ${success} of ${total} (receiver saw ${stats.unique} distinct ids in ${stats.requests} requests)`);

  const cpu = cpus();
  const mb = (b: number) => `${(b / 2 ** 20).toFixed(0)} MB`;
  const rate = (n: number, s: number) => Math.round(n / s).toLocaleString('en-US');
  const args = process.argv.slice(2).join(' ');
  console.log('Posthorn webhook delivery benchmark');
  console.log(`  command     npx bun scripts/bench/webhooks.ts${args ? ` ${args}` : ''}   (npm run bench:webhooks${args ? ` -- ${args}` : ''})`);
  console.log(`  machine     ${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown CPU'}, ${mb(totalmem())} RAM, Bun ${Bun.version}`);
  console.log(
    `  setup       ${EVENTS.toLocaleString('en-US')} contact.updated events × ${ENDPOINTS} endpoints = ${total.toLocaleString('en-US')} deliveries; receiver in a child process on 127.0.0.1`,
  );
  console.log(`  enqueue     ${rate(EVENTS, enqueueSeconds)} events/s (${rate(total, enqueueSeconds)} outbox entries/s), ${enqueueSeconds.toFixed(2)} s`);
  console.log(`  deliveries  ${rate(total, drainSeconds)} deliveries/s (signed POST + attempt log + status, each durable), ${drainSeconds.toFixed(2)} s`);
  console.log(`  receiver    ${stats.requests.toLocaleString('en-US')} requests, ${stats.unique.toLocaleString('en-US')} distinct svix-ids`);
  console.log(`  RSS         start ${mb(rssStart)}, peak ${mb(rssPeak)} during the drain, end ${mb(rssEnd)} (Posthorn process, receiver excluded)`);
  process.exit(0);
}

function fail(message: string): never {
  console.error(`bench:webhooks: ${message}`);
  process.exit(1);
}
