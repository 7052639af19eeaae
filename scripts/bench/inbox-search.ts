#!/usr/bin/env bun
/**
 * Inbox search benchmark — `bun scripts/bench/inbox-search.ts [--messages 10000,100000] [--words 150]`.
 *
 * What the inbox search index (src/inboxes/search.ts, docs/api.md §25.9) costs per message, and
 * what a query costs against the scan it replaces, on synthetic support mail: a subject of 6
 * words and a body of --words words (about 1 KB of text at 150) drawn from a 20,000-word
 * vocabulary with a Zipf distribution (the frequent words of real text are very frequent), from
 * one of 2,000 customers to one inbox. For each size:
 *   index      µs per message added (the catch-up of an index made from nothing), and the heap
 *              it grew by per message (after a full GC), and the bytes per message on disk;
 *   load       µs per message to load the index written to disk again (a team's first search
 *              after a restart or an eviction);
 *   query      median and p95 of a search, by kind: a frequent word, a rare word, two words
 *              with the last a prefix, a misspelt word (fuzzy), a `from` address; and the same
 *              answers by a scan of every message held in memory (lowercased text and
 *              `includes`), the reference: the ratio says what the index saves.
 * Everything runs in this process; nothing leaves it. Numbers move with the machine's load:
 * compare the ratios, and state `uptime` beside them.
 */
import { parseArgs } from 'node:util';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { InboxSearch, type MessageSource, type SearchableMessage, type SearchQuery } from '../../src/inboxes/search';
import { fmt, machine, tempDir } from './lib';

const { values: opts } = parseArgs({
  args: process.argv.slice(2),
  options: { messages: { type: 'string', default: '10000,100000' }, words: { type: 'string', default: '150' } },
  strict: true,
});
const SIZES = opts.messages.split(',').map(Number);
const WORDS_PER_BODY = Number(opts.words);

// A deterministic generator: the same messages on every run.
let seed = 42;
const rand = () => {
  // 32-bit arithmetic (Math.imul): a float product would lose its low bits and cycle early.
  seed = (Math.imul(seed, 1_103_515_245) + 12_345) & 0x7fffffff;
  return seed / 0x7fffffff;
};
const VOCABULARY = Array.from({ length: 20_000 }, (_, i) => {
  let w = '';
  let n = i + 1;
  while (n > 0) {
    w += 'abcdefghijklmnopqrstuvwxyz'[n % 26];
    n = Math.floor(n / 26);
  }
  return `${w}${'aeiou'[i % 5]}${i % 7 === 0 ? 'tion' : i % 3 === 0 ? 'ing' : 'er'}`;
});
// Zipf (s = 1): word i drawn with weight 1/(i+1), by inverting the cumulative weights.
const CUMULATIVE = (() => {
  const c: number[] = [];
  let sum = 0;
  for (let i = 0; i < VOCABULARY.length; i++) {
    sum += 1 / (i + 1);
    c.push(sum);
  }
  return c.map((x) => x / sum);
})();
const word = () => {
  const r = rand();
  let lo = 0;
  let hi = CUMULATIVE.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (CUMULATIVE[mid]! < r) lo = mid + 1;
    else hi = mid;
  }
  return VOCABULARY[lo]!;
};
const words = (n: number) => Array.from({ length: n }, word).join(' ');

function messages(n: number): SearchableMessage[] {
  const start = Date.parse('2026-01-01T00:00:00Z');
  const out: SearchableMessage[] = [];
  for (let i = 0; i < n; i++) {
    const at = start + i * 60_000;
    const id = `${at
      .toString(16)
      .padStart(12, '0')
      .replace(/^(.{8})(.{4})$/, '$1-$2')}-7000-8000-${i.toString(16).padStart(12, '0')}`;
    const customer = Math.floor(rand() * 2000);
    out.push({
      id,
      thread_id: `thread-${Math.floor(i / 3)}`,
      inbox_id: 'inbox-1',
      subject: words(6),
      from: `Customer ${customer} <customer${customer}@client${customer % 50}.test>`,
      to: ['support@acme.test'],
      cc: [],
      bcc: [],
      text: words(WORDS_PER_BODY),
      created_at: new Date(at).toISOString(),
      has_attachments: i % 10 === 0,
    });
  }
  return out;
}

class Held implements MessageSource {
  constructor(private readonly list: SearchableMessage[]) {}
  async after(_team: string, after: string | null, limit: number) {
    let lo = 0;
    if (after !== null) {
      let hi = this.list.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (this.list[mid]!.id <= after) lo = mid + 1;
        else hi = mid;
      }
    }
    return this.list.slice(lo, lo + limit);
  }
}

const heap = () => {
  Bun.gc(true);
  return process.memoryUsage().heapUsed;
};
const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;

/** The reference: every message read, its text lowercased once and matched with `includes`. */
function scan(list: { m: SearchableMessage; hay: string }[], q: SearchQuery): number {
  const terms = (q.query ?? '').toLowerCase().split(/\s+/).filter(Boolean);
  const from = q.from?.[0]?.toLowerCase();
  const threads = new Set<string>();
  for (const { m, hay } of list) {
    if (m.inbox_id !== q.inbox_id) continue;
    if (from && !m.from.toLowerCase().includes(from)) continue;
    if (terms.every((t) => hay.includes(t))) threads.add(m.thread_id);
  }
  return threads.size;
}

console.log(`inbox search — ${machine()}; ${WORDS_PER_BODY} words a body`);
for (const n of SIZES) {
  const list = messages(n);
  const textBytes = list.reduce((s, m) => s + m.subject.length + m.text.length + m.from.length, 0);
  const dir = tempDir('inbox-search-bench-');

  const before = heap();
  const search = new InboxSearch({ source: new Held(list), dir, maxDocs: n + 1 });
  let t = Bun.nanoseconds();
  await search.search('team', { inbox_id: 'inbox-1', query: 'x' });
  const indexUs = (Bun.nanoseconds() - t) / 1000 / n;
  const grown = heap() - before;
  await search.close();
  const fileBytes = statSync(join(dir, 'team.json')).size;

  t = Bun.nanoseconds();
  const again = new InboxSearch({ source: new Held(list), dir, maxDocs: n + 1 });
  await again.search('team', { inbox_id: 'inbox-1', query: 'x' });
  const loadUs = (Bun.nanoseconds() - t) / 1000 / n;

  const sample = list[Math.floor(n / 2)]!;
  const rare = VOCABULARY[15_000]!;
  const kinds: [string, SearchQuery][] = [
    ['frequent word', { inbox_id: 'inbox-1', query: VOCABULARY[3]! }],
    ['rare word', { inbox_id: 'inbox-1', query: rare }],
    ['two words, prefix', { inbox_id: 'inbox-1', query: `${VOCABULARY[40]} ${VOCABULARY[120]!.slice(0, 4)}` }],
    ['misspelt word', { inbox_id: 'inbox-1', query: `${VOCABULARY[900]!.slice(0, -1)}x` }],
    ['from address', { inbox_id: 'inbox-1', from: [sample.from.replace(/^.*<|>$/g, '')] }],
  ];
  const hay = list.map((m) => ({ m, hay: `${m.subject} ${m.from} ${m.text}`.toLowerCase() }));
  console.log(
    `\n${fmt(n)} messages (${fmt(textBytes / n)} B of text each): index ${fmt(indexUs, 1)} µs/message, heap +${fmt(grown / n)} B/message (${fmt(grown / 1024 / 1024, 1)} MB), file ${fmt(fileBytes / n)} B/message; load ${fmt(loadUs, 1)} µs/message (${fmt((loadUs * n) / 1000)} ms)`,
  );
  console.log('query                 hits    index p50    index p95     scan p50   scan/index');
  for (const [name, q] of kinds) {
    const idx: number[] = [];
    const ref: number[] = [];
    let hits = 0;
    for (let i = 0; i < 30; i++) {
      let s = Bun.nanoseconds();
      hits = (await again.search('team', q)).length;
      idx.push((Bun.nanoseconds() - s) / 1e6);
      if (i < 10) {
        s = Bun.nanoseconds();
        scan(hay, q);
        ref.push((Bun.nanoseconds() - s) / 1e6);
      }
    }
    const p50 = percentile(idx, 0.5);
    const s50 = percentile(ref, 0.5);
    console.log(
      `${name.padEnd(20)} ${String(hits).padStart(5)} ${`${fmt(p50, 2)} ms`.padStart(12)} ${`${fmt(percentile(idx, 0.95), 2)} ms`.padStart(12)} ${`${fmt(s50, 1)} ms`.padStart(12)} ${`${fmt(s50 / p50, 0)}×`.padStart(12)}`,
    );
  }
}
