/**
 * Where the memory of a queued backlog goes: bench:compare's `queued` part (emails held, then each
 * tried once against a closed port), with the LMDB databases' page counts and the server's
 * file-backed RSS of the map at each step — which databases grow, by how much, and how much of
 * them the process has read (RSS of the map is what was touched).
 *
 *   bun scripts/bench/queued-pages.ts [--queued 20000] [--settle 10] [--keep DIR]
 */
import { parseArgs } from 'node:util';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { open } from 'lmdb';
import { startChild, tempDir, call, sendInBatches, numberedEmails, fmt, mb, fail, verifiedSendingDomain, type Target, type MetricsBody } from './lib';
import { startDnsServer } from '../../test/helpers/dns';
import { setQuiet } from '../../src/log';
import { ENCODING } from '../../src/store/lmdb/env';

const { values: opts } = parseArgs({
  options: { queued: { type: 'string', default: '20000' }, settle: { type: 'string', default: '10' }, keep: { type: 'string' } },
});
const QUEUED = Number(opts.queued);
const SETTLE_S = Number(opts.settle);
setQuiet(true);

const dns = await startDnsServer();
// --keep DIR: the data directory is DIR, left in place for a look at its records.
const dataDir = opts.keep ?? tempDir('posthorn-bench-queued-');
const target = await startChild(dataDir, {
  POSTHORN_DNS_SERVERS: dns.address,
  POSTHORN_SMTP_HOSTNAME: 'mx.posthorn.test',
  POSTHORN_DELIVERY_MODE: 'relay',
  POSTHORN_DELIVERY_RELAY_URL: 'smtp://127.0.0.1:9',
  POSTHORN_DELIVERY_RETRY_SCHEDULE: '1h',
});
const sender = 'bench1.test';
await verifiedSendingDomain(target, dns.zone, sender);
const email = numberedEmails(() => sender);

/** Resident pages of the LMDB file's mapping in the server (smaps). */
function mapRss(t: Target): number {
  const smaps = readFileSync(`/proc/${t.pid}/smaps`, 'utf8');
  let rss = 0;
  let inMap = false;
  for (const line of smaps.split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) inMap = line.endsWith('posthorn.mdb');
    else if (inMap && line.startsWith('Rss:')) rss += Number(/(\d+)/.exec(line)![1]) * 1024;
  }
  return rss;
}

type Pages = Map<string, { pages: number; entries: number; depth: number }>;
/** Every named database's pages (branch + leaf + overflow) and entries, read from another handle. */
function pages(): Pages {
  const root = open({ path: join(dataDir, 'posthorn.mdb'), maxDbs: 128, ...ENCODING });
  const out: Pages = new Map();
  for (const name of root.getKeys({})) {
    if (typeof name !== 'string') continue;
    // biome-ignore lint/suspicious/noExplicitAny: lmdb-js's stats are untyped.
    const s = root.openDB({ name, ...ENCODING }).getStats() as any;
    out.set(name, { pages: s.treeBranchPageCount + s.treeLeafPageCount + s.overflowPages, entries: s.entryCount, depth: s.treeDepth });
  }
  // biome-ignore lint/suspicious/noExplicitAny: lmdb-js's stats are untyped.
  const env = root.getStats() as any;
  out.set('(env: last page)', { pages: env.lastPageNumber, entries: 0, depth: 0 });
  out.set('(env: free pages)', { pages: env.free?.pages ?? 0, entries: 0, depth: 0 });
  root.close();
  return out;
}

const settle = async () => {
  let low = target.rss();
  for (let i = 0, quiet = 0; i < 12 && quiet < 2; i++) {
    await Bun.sleep(SETTLE_S * 100);
    const now = target.rss();
    quiet = now < low - 2 * 1048576 ? 0 : quiet + 1;
    low = Math.min(low, now);
  }
};

let before = pages();
function show(step: string) {
  const parts = target.rssParts();
  console.log(`\n${step}: RSS ${mb(target.rss())} (anonymous ${mb(parts.anon)}, file-backed ${mb(parts.file)}; LMDB map ${mb(mapRss(target))})`);
  const now = pages();
  const rows = [...now].map(([name, p]) => ({ name, ...p, grew: p.pages - (before.get(name)?.pages ?? 0) })).sort((a, b) => b.pages - a.pages);
  let total = 0;
  for (const r of rows) {
    if (!r.name.startsWith('(')) total += r.pages;
    if (r.pages < 20 && !r.name.startsWith('(')) continue;
    console.log(
      `  ${r.name.padEnd(34)} ${fmt(r.pages).padStart(8)} pages ${mb(r.pages * 4096).padStart(9)}  +${fmt(r.grew).padStart(7)}  ${fmt(r.entries).padStart(8)} entries  ${fmt((r.grew * 4096) / QUEUED).padStart(5)} B/email  depth ${r.depth}`,
    );
  }
  console.log(`  ${'(all databases)'.padEnd(34)} ${fmt(total).padStart(8)} pages ${mb(total * 4096).padStart(9)}`);
  before = now;
}

await call(target, 'POST', '/queue/dest.test/hold');
await sendInBatches(target, QUEUED, email);
await settle();
show(`${fmt(QUEUED)} emails queued, held`);
await call(target, 'POST', '/queue/dest.test/release');
const t0 = performance.now();
for (;;) {
  const n = (await call<MetricsBody>(target, 'GET', '/emails/metrics?metrics=delivery_delayed')).totals.delivery_delayed;
  if (n >= QUEUED) break;
  if (performance.now() - t0 > 600_000) fail(`only ${n} attempted in 10 minutes`);
  await Bun.sleep(500);
}
console.log(`\n  attempted in ${fmt((performance.now() - t0) / 1000, 1)} s`);
await settle();
show('each tried once');
await target.stop();
await dns.close();
process.exit(0);
