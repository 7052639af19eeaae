// Exports at scale (docs/api.md §4.1): 100,000 emails (20,000 on PostgreSQL) exported as CSV by a
// `posthorn serve` child process, whose memory is read from /proc while the file streams: the
// server's own memory (RssAnon: its heap, not the database pages it maps) grows by a bounded
// amount however large the file, and every email is in the file exactly once.
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse';
import { startPosthorn } from '../helpers/posthorn';
import { serveChild, type ServeChild } from '../helpers/child';
import { startDnsServer, type TestDns } from '../helpers/dns';
import { postgres, testStore } from '../helpers/postgres';
import { newId } from '../../src/ids';
import type { EmailRec } from '../../src/store';

const COUNT = testStore() === 'pg' ? 20_000 : 100_000;
/**
 * The most the server's heap may grow, while it streams the export, beyond its peak during the
 * same walk with nothing to send. The file is ~86 MB at 100,000
 * emails; a server that held it grew by 189 MB, one streaming it by 30–56 MB (garbage awaiting the
 * collector, whatever the size: 25,000 to 200,000 emails).
 */
const GROWTH_BOUND_MB = 80;

let server: ServeChild;
let dns: TestDns;
let dataDir: string;
let databaseUrl: string | null = null;
const ids = new Set<string>();

/** A sent email as the sending core stores it; subjects hold what CSV must quote and what a spreadsheet would run. */
function email(team: string, i: number, at: string): EmailRec {
  const id = newId();
  ids.add(id);
  return {
    id,
    team_id: team,
    created_at: at,
    from: 'Acme Billing <billing@acme.test>',
    from_address: 'billing@acme.test',
    domain_id: newId(),
    domain: 'acme.test',
    // Eight recipients with their names: about 1 kB of CSV an email, a file of ~100 MB.
    to: Array.from({ length: 8 }, (_, r) => `"Customer ${r}, Account No. ${i}" <customer-${i}-${r}@recipients.dest.test>`),
    cc: i % 5 ? [] : ['audit@acme.test'],
    bcc: [],
    reply_to: ['support@acme.test'],
    subject: i % 7 ? `Invoice ${i}, "March" — ${'x'.repeat(i % 40)}` : `=HYPERLINK("http://evil.test/${i}")`,
    headers: {},
    tags: [{ name: 'kind', value: i % 2 ? 'invoice' : 'receipt' }],
    scheduled_at: null,
    last_event: 'delivered',
    message_id: `<${id}@acme.test>`,
    broadcast_id: null,
    attachments: [],
    recipients: {},
    sent_at: at,
    api_key_id: null,
  };
}

/** The server process's resident memory (kB): all of it, and its anonymous part (heap, not mapped files). */
function memory(pid: number): { rss: number; anon: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
  return { rss: kb('VmRSS'), anon: kb('RssAnon') };
}

beforeAll(async () => {
  // Written straight to the store, 1,000 to a unit of work, by a Posthorn in this process; then
  // served by a child process of its own, so that /proc shows the server's memory alone.
  dataDir = mkdtempSync(join(tmpdir(), 'posthorn-export-'));
  const p = await startPosthorn({ data_dir: dataDir });
  databaseUrl = p.svc.config.database.url;
  const team = p.creds.team_id;
  const at = new Date().toISOString();
  for (let done = 0; done < COUNT; done += 1000)
    await p.svc.store.write(async (tx) => {
      for (let i = done; i < Math.min(COUNT, done + 1000); i++) tx.emails.put(email(team, i, at));
    });
  await p.stop();
  dns = await startDnsServer();
  dns.failWith('REFUSED');
  server = await serveChild(
    dataDir,
    { POSTHORN_DNS_SERVERS: dns.address, ...(databaseUrl ? { POSTHORN_DATABASE_URL: databaseUrl } : {}) },
    { apiKey: p.apiKey },
  );
  await server.start();
}, 600_000);

afterAll(async () => {
  await server?.kill();
  await dns?.close();
  if (databaseUrl) await (await postgres()).drop(databaseUrl);
  rmSync(dataDir, { recursive: true, force: true });
});

test(`${COUNT.toLocaleString('en')} emails: the server's memory stays bounded and every email is exported exactly once`, async () => {
  const pid = server.process!.pid;
  const get = (path: string) => fetch(server.base + path, { headers: server.headers });
  // Warm up: the same walk over every email, with a filter that keeps none (nothing to send). Its
  // own peak is the baseline: the garbage of reading every email, which the collector takes in its
  // own time (18–80 MB under the PostgreSQL pass, run to run), is in both walks; what the export
  // adds beyond it is what it sends.
  let walked = memory(pid);
  const sampling = setInterval(() => {
    const m = memory(pid);
    if (m.anon > walked.anon) walked = m;
  }, 20);
  try {
    expect(await (await get('/emails/export?status=failed')).text()).toBe(
      '"id","created_at","from","to","cc","bcc","reply_to","subject","last_event","scheduled_at","message_id","tags"\r\n',
    );
  } finally {
    clearInterval(sampling);
  }
  const now = memory(pid);
  const before = now.anon > walked.anon ? now : walked;
  let peak = before;

  const res = await get('/emails/export');
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8; header=present');
  // Records are counted as csv-parse reads them off the stream; memory is sampled every 8 chunks.
  const parser = parse({ columns: true, relax_column_count: false });
  const seen = new Set<string>();
  let dupes = 0;
  let formulas = 0;
  const counted = (async () => {
    for await (const row of parser as AsyncIterable<Record<string, string>>) {
      if (seen.has(row.id!)) dupes++;
      seen.add(row.id!);
      if (row.subject!.startsWith("'=HYPERLINK(")) formulas++;
    }
  })();
  let chunks = 0;
  let bytes = 0;
  const reader = res.body!.getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    const chunk = read.value;
    bytes += chunk.byteLength;
    if (!parser.write(chunk)) await new Promise((resolve) => parser.once('drain', resolve));
    if (++chunks % 8 === 0) {
      const m = memory(pid);
      if (m.anon > peak.anon) peak = m;
    }
  }
  parser.end();
  await counted;

  expect(dupes).toBe(0);
  expect(seen.size).toBe(COUNT);
  expect([...ids].every((id) => seen.has(id))).toBe(true);
  expect(formulas).toBe(Math.ceil(COUNT / 7));
  const growthMb = (peak.anon - before.anon) / 1024;
  console.log(
    `export of ${COUNT} emails: ${(bytes / 1e6).toFixed(1)} MB in ${chunks} chunks; server RssAnon ${(before.anon / 1024).toFixed(0)} → peak ${(peak.anon / 1024).toFixed(0)} MB (+${growthMb.toFixed(1)}), VmRSS ${(before.rss / 1024).toFixed(0)} → ${(peak.rss / 1024).toFixed(0)} MB`,
  );
  expect(growthMb).toBeLessThan(GROWTH_BOUND_MB);
}, 600_000);
