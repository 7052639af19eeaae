#!/usr/bin/env bun
/**
 * CPU per accepted email — `bun scripts/bench/accept-cpu.ts [--requests 20000] [--batch 0] [--concurrency 64]`
 *
 * The accept path without sockets: Posthorn's HTTP handler (api/server.ts createHandler) is called
 * in this process with `Request` objects, `--concurrency` at a time, for `--requests` requests of
 * POST /emails (or POST /emails/batch with `--batch N` emails each), against a fresh LMDB with the
 * delivery engine off (its queue just grows). Reported: requests and emails per second of wall
 * time, and µs of this process's CPU (user + system, every thread: LMDB's writer included) per
 * email — a figure that moves little when the machine is busy, unlike wall time. Run with
 * `bun --cpu-prof-md scripts/bench/accept-cpu.ts` for a profile of exactly this path.
 */
import { parseArgs } from 'node:util';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config';
import { createServices, closeServices } from '../../src/services';
import { createHandler } from '../../src/api/server';
import { createTeam } from '../../src/accounts/bootstrap';
import { setQuiet } from '../../src/log';
import { fmt } from './lib';

const { values: opts } = parseArgs({
  args: process.argv.slice(2),
  options: { requests: { type: 'string', default: '20000' }, batch: { type: 'string', default: '0' }, concurrency: { type: 'string', default: '64' } },
  strict: true,
});
const REQUESTS = Number(opts.requests);
const BATCH = Number(opts.batch);
const CONCURRENCY = Number(opts.concurrency);
setQuiet(true);

const dir = mkdtempSync(join(tmpdir(), 'posthorn-accept-cpu-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
const config = loadConfig({ env: {}, overrides: { data_dir: dir, 'limits.requests_per_second': 1_000_000, 'smtp.starttls_ports': [], 'smtp.tls_ports': [] } });
const svc = await createServices(config);
const creds = await createTeam(svc.store);
const handle = createHandler(svc);
const auth = { authorization: `Bearer ${creds.api_key}`, 'content-type': 'application/json' };
const call = async (method: string, path: string, body?: unknown) => {
  const res = await handle(new Request(`http://127.0.0.1${path}`, { method, headers: auth, body: body === undefined ? undefined : JSON.stringify(body) }));
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<any>;
};
// A verified sending domain, marked so in the store (no DNS here).
const d = await call('POST', '/domains', { name: 'bench.test' });
const rec = (await svc.store.domains.get(creds.team_id, d.id))!;
await svc.store.write(async (tx) => tx.domains.put({ ...rec, status: 'verified', record_status: { ...rec.record_status, 'SPF:MX': 'verified', 'SPF:TXT': 'verified', DKIM: 'verified' }, verification: { ...rec.verification, checked_at: new Date().toISOString() } }));

let seq = 0;
const email = () => ({ from: 'Bench <bench@bench.test>', to: [`user${++seq}@dest.test`], subject: `Benchmark ${seq}`, html: `<p>Hello number ${seq}</p>`, text: `Hello number ${seq}` });
const path = BATCH ? '/emails/batch' : '/emails';
const body = () => JSON.stringify(BATCH ? Array.from({ length: BATCH }, email) : email());

async function run(n: number) {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < n) {
        next++;
        const res = await handle(new Request(`http://127.0.0.1${path}`, { method: 'POST', headers: auth, body: body() }));
        if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
        await res.arrayBuffer();
      }
    }),
  );
}

await run(Math.min(2000, REQUESTS)); // warm-up
const cpu0 = process.cpuUsage();
const t0 = performance.now();
await run(REQUESTS);
const wall = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
const emails = REQUESTS * (BATCH || 1);
console.log(`${path}${BATCH ? ` ×${BATCH}` : ''}, concurrency ${CONCURRENCY}: ${fmt(REQUESTS / wall)} req/s, ${fmt(emails / wall)} emails/s; CPU ${fmt((cpu.user + cpu.system) / emails, 1)} µs per email (user ${fmt(cpu.user / emails, 1)}, system ${fmt(cpu.system / emails, 1)})`);
await closeServices(svc);
process.exit(0);
