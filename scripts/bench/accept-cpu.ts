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
import { closeServices } from '../../src/services';
import { createHandler } from '../../src/api/server';
import { inProcessServices, teamWithDomain } from './in-process';
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
const svc = await inProcessServices(dir);
const creds = await teamWithDomain(svc, 'bench.test');
const handle = createHandler(svc);
const auth = { authorization: `Bearer ${creds.apiKey}`, 'content-type': 'application/json' };

let seq = 0;
const email = () => ({
  from: 'Bench <bench@bench.test>',
  to: [`user${++seq}@dest.test`],
  subject: `Benchmark ${seq}`,
  html: `<p>Hello number ${seq}</p>`,
  text: `Hello number ${seq}`,
});
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
console.log(
  `${path}${BATCH ? ` ×${BATCH}` : ''}, concurrency ${CONCURRENCY}: ${fmt(REQUESTS / wall)} req/s, ${fmt(emails / wall)} emails/s; CPU ${fmt((cpu.user + cpu.system) / emails, 1)} µs per email (user ${fmt(cpu.user / emails, 1)}, system ${fmt(cpu.system / emails, 1)})`,
);
await closeServices(svc);
process.exit(0);
