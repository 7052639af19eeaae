/**
 * What "one record per accepted email" would buy on the HTTP thread (issue 38): the records one
 * POST /emails writes today — email, content, queue entry and its `queue.by_destination` row,
 * each a put — against one put of the same data combined, one put of the request's text (stored
 * as received, to be expanded later) and one put of nothing, in the transactions the store uses
 * (lmdb-js `transaction` + `childTransaction`, the store's encoding). CPU of this thread (its
 * proc(5) stat: the writer thread's commits and fsyncs are not the HTTP thread's), and of the
 * process, per email, in transactions of `--per-tx` emails.
 *
 *   bun scripts/bench/put-shape.ts [--emails 20000] [--per-tx 1|100] [--rounds 5]
 */
import { open } from 'lmdb';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ENCODING } from '../../src/store/lmdb/env';

const { values: opts } = parseArgs({
  options: { emails: { type: 'string', default: '20000' }, 'per-tx': { type: 'string', default: '1' }, rounds: { type: 'string', default: '5' } },
});
const EMAILS = Number(opts.emails);
const PER_TX = Number(opts['per-tx']);
const ROUNDS = Number(opts.rounds);

const team = Bun.randomUUIDv7();
const domainId = Bun.randomUUIDv7();
function records() {
  const id = Bun.randomUUIDv7();
  const at = new Date().toISOString();
  const email = {
    created_at: at,
    from: 'Bench <bench@bench1.test>',
    from_address: 'bench@bench1.test',
    domain_id: domainId,
    domain: 'bench1.test',
    to: [`user${id.slice(-6)}@dest.test`],
    cc: [],
    bcc: [],
    reply_to: [],
    subject: 'Hello from the bench',
    headers: {},
    tags: [],
    scheduled_at: null,
    last_event: 'queued',
    message_id: `<${id}@bench1.test>`,
    broadcast_id: null,
    contact_id: null,
    topic_id: null,
    attachments: [],
    recipients: { [`user${id.slice(-6)}@dest.test`]: 'pending' },
    sent_at: null,
    api_key_id: team,
    queued_at: at,
  };
  const content = {
    html: '<p>Hello, this is a benchmark email with a short body.</p>',
    text: 'Hello, this is a benchmark email with a short body.',
    files: {},
    message: {
      from: { name: 'Bench', address: 'bench@bench1.test', domain: 'bench1.test' },
      to: [{ name: '', address: email.to[0], domain: 'dest.test' }],
      cc: [],
      reply_to: [],
      tracking: { opens: false, clicks: false },
    },
  };
  const entryId = Bun.randomUUIDv7();
  const entry = {
    email_id: id,
    domain: 'dest.test',
    recipients: [email.to[0]],
    attempts: 0,
    first_attempt_at: null,
    last_error: null,
    team_id: team,
    id: entryId,
  };
  // The request as received (what the durable reference stores): the body's JSON text, with the ids the answer named.
  const text = JSON.stringify({ from: email.from, to: email.to[0], subject: email.subject, html: content.html, text: content.text });
  return { id, email, content, entry, due: Date.now(), text };
}

const dir = mkdtempSync(join(tmpdir(), 'posthorn-put-shape-'));
const root = open({ path: join(dir, 'x.mdb'), mapSize: 2 ** 34, maxDbs: 8, ...ENCODING });
const db = (name: string) => root.openDB({ name, ...ENCODING });
const emails = db('emails');
const contents = db('email_content');
const queue = db('queue');
const byDest = db('queue_by_dest');
const accepted = db('accepted');

type R = ReturnType<typeof records>;
/**
 * The four puts issued as lmdb-js async writes (outside a transaction callback, as the request log
 * is appended): the calling thread only encodes; LMDB's own writer thread inserts and commits.
 */
const ASYNC = 'four puts, async (writer thread)';

const shapes: Record<string, (r: R) => void> = {
  'four puts': (r) => {
    emails.put([team, r.id], r.email);
    contents.put([team, r.id], r.content);
    queue.put([r.due, r.entry.domain, r.entry.id], r.entry);
    byDest.put([team, r.entry.domain, r.id, r.entry.id], r.due);
  },
  [ASYNC]: (r) => {
    void emails.put([team, r.id], r.email);
    void contents.put([team, r.id], r.content);
    void queue.put([r.due, r.entry.domain, r.entry.id], r.entry);
    void byDest.put([team, r.entry.domain, r.id, r.entry.id], r.due);
  },
  'one put, combined': (r) => {
    accepted.put([team, r.id], { email: r.email, content: r.content, entry: r.entry, due: r.due });
  },
  'one put of the request text': (r) => {
    // "Store the request, expand it later": the body's text and the ids, one string.
    accepted.put([team, r.id], `${r.entry.id} ${r.due} ${r.text}`);
  },
  'one put, nothing to encode': (r) => {
    // The floor: a put's own cost with nothing to encode.
    accepted.put([team, r.id], null);
  },
};

/** CPU seconds of this (the main) thread so far: utime + stime, in ticks of 10 ms. */
function threadCpu(): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

async function run(name: string, shape: (r: R) => void): Promise<{ thread: number; process: number }> {
  const recs = Array.from({ length: EMAILS }, records);
  Bun.gc(true);
  const c0 = process.cpuUsage();
  const t0 = threadCpu();
  const txs: Promise<unknown>[] = [];
  for (let i = 0; i < EMAILS; i += PER_TX) {
    const part = recs.slice(i, i + PER_TX);
    if (name === ASYNC) {
      part.forEach(shape);
      txs.push(root.committed);
    } else txs.push(root.transaction(() => root.childTransaction(async () => part.forEach(shape))));
    if (txs.length >= 64) await Promise.all(txs.splice(0));
  }
  await Promise.all(txs);
  const c = process.cpuUsage(c0);
  return { thread: ((threadCpu() - t0) * 1e6) / EMAILS, process: (c.user + c.system) / EMAILS };
}

console.log(`put shapes: ${EMAILS} emails, ${PER_TX} per transaction, ${ROUNDS} rounds alternating; µs CPU per email, median (rounds)`);
const results: Record<string, { thread: number; process: number }[]> = Object.fromEntries(Object.keys(shapes).map((name) => [name, []]));
for (let round = 0; round < ROUNDS; round++) for (const [name, shape] of Object.entries(shapes)) results[name]!.push(await run(name, shape));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const line = (xs: number[]) => `${median(xs).toFixed(1).padStart(6)} (${xs.map((x) => x.toFixed(1)).join(', ')})`;
for (const [name, rs] of Object.entries(results))
  console.log(`  ${name.padEnd(30)} this thread ${line(rs.map((r) => r.thread))}  process ${line(rs.map((r) => r.process))}`);
await root.close();
rmSync(dir, { recursive: true, force: true });
