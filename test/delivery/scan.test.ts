// The scan of a delivery claim (src/delivery/scan.ts), situation → decision: which scan a claim
// makes (from the start, or going on from the last one), how a scan ended, what the next claim
// remembers of it, and — over an in-memory queue with the store's scan contract (Queue.due, its
// QUEUE_SCAN_LIMIT, `after` and 'stop') — which keys are read. No sockets, no store.
import { describe, expect, test } from 'bun:test';
import {
  FULL_SCAN_MS,
  type Found,
  goOnFrom,
  memoryAfter,
  type QueueKey,
  type ScanClaim,
  type ScanMemory,
  scanDue,
  scanEnd,
  seenBefore,
} from '../../src/delivery/scan';
import { QUEUE_SCAN_LIMIT, type Queue, type QueuePass, type QueueEntry } from '../../src/store';

const NOW = 1_000_000;
const key = (due: number, domain: string, id: string): QueueKey => ({ due, domain, id });
const memory = (m: Partial<ScanMemory> = {}): ScanMemory => ({ upTo: NOW - 100, fullAt: NOW - 100, sites: new Set(), ...m });

describe('which scan a claim makes', () => {
  const rows: [string, ScanMemory | null, boolean, 'start' | 'go on'][] = [
    ['no scan before', null, true, 'start'],
    ['a scan from the start 100 ms ago', memory({ fullAt: NOW - 100 }), true, 'go on'],
    [`one FULL_SCAN_MS (${FULL_SCAN_MS} ms) ago`, memory({ fullAt: NOW - FULL_SCAN_MS }), true, 'start'],
    ['long ago, but the scan limit cut the last short', memory({ fullAt: NOW - 60_000, resume: key(NOW - 5, 'a.test', 'e1') }), true, 'go on'],
    ['cluster mode: other nodes change the queue beside ours', memory({ fullAt: NOW - 100 }), false, 'start'],
  ];
  test.each(rows)('%s → %s', (_situation, last, exclusive, expected) => {
    const from = goOnFrom(last, NOW, exclusive);
    expect(from === null ? 'start' : 'go on').toBe(expected);
    if (from) expect(from).toBe(last as ScanMemory);
  });
});

describe('how a scan ended', () => {
  const last = key(NOW - 1, 'a.test', 'e9');
  const rows: [string, number, number, number, { whole: boolean; resume: QueueKey | null }][] = [
    ['fewer found than slots, few keys looked at: saw everything due', 3, 5, 10, { whole: true, resume: null }],
    ['every slot filled: saw only part of what is due', 5, 5, 10, { whole: false, resume: null }],
    ['the scan limit reached before the slots filled: resumes after its last key', 0, 5, QUEUE_SCAN_LIMIT, { whole: false, resume: last }],
    ['one key short of the limit', 0, 5, QUEUE_SCAN_LIMIT - 1, { whole: true, resume: null }],
  ];
  test.each(rows)('%s', (_situation, found, max, looked, expected) => {
    expect(scanEnd(found, max, looked, last)).toEqual(expected);
  });
});

describe('what the next claim remembers', () => {
  const sites = new Set(['busy']);
  const resume = key(NOW - 40, 'a.test', 'e1');
  const rows: [string, { whole: boolean; resume: QueueKey | null }, ScanMemory | null, ScanMemory | null][] = [
    ['a whole scan from the start', { whole: true, resume: null }, null, { upTo: NOW, fullAt: NOW, sites }],
    [
      'a whole scan going on: the last full scan’s time stays',
      { whole: true, resume: null },
      memory({ fullAt: NOW - 300 }),
      { upTo: NOW, fullAt: NOW - 300, sites },
    ],
    ['cut short by the limit: everything before the resume key’s due time', { whole: false, resume }, null, { upTo: NOW - 41, fullAt: NOW, sites, resume }],
    ['cut short by the slots: nothing', { whole: false, resume: null }, memory(), null],
  ];
  test.each(rows)('%s', (_situation, end, last, expected) => {
    const next = memoryAfter(end, NOW, last, sites);
    expect(next).toEqual(expected);
    // The claim's own set: sites it passes over after the scan count for the next claim too.
    if (next) expect(next.sites).toBe(sites);
  });
});

test('keys at or before the resume key, at its due time, were seen', () => {
  const r = key(50, 'm.test', 'e5');
  const rows: [QueueKey, boolean][] = [
    [key(50, 'a.test', 'e9'), true],
    [key(50, 'm.test', 'e1'), true],
    [key(50, 'm.test', 'e5'), true],
    [key(50, 'm.test', 'e6'), false],
    [key(50, 'z.test', 'e1'), false],
    [key(51, 'a.test', 'e1'), false],
  ];
  expect(rows.map(([k]) => seenBefore(r, k.domain, k.id, k.due))).toEqual(rows.map(([, seen]) => seen));
});

/** An in-memory queue with the store's scan contract (store/interface.ts Queue.due). */
class FakeQueue implements Pick<Queue, 'due'> {
  readonly calls: { upTo: number; limit: number; after: number | undefined }[] = [];
  private readonly keys: QueueKey[];

  constructor(keys: QueueKey[]) {
    this.keys = [...keys].sort((a, b) => a.due - b.due || (a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : a.id < b.id ? -1 : 1));
  }

  async due(now: number, limit: number, pass?: QueuePass, after = -1): Promise<Found[]> {
    this.calls.push({ upTo: now, limit, after: after === -1 ? undefined : after });
    const out: Found[] = [];
    let looked = 0;
    for (const k of this.keys) {
      if (k.due > now) break;
      if (out.length >= limit || ++looked > Math.max(QUEUE_SCAN_LIMIT, limit)) break;
      if (k.due <= after) continue;
      const verdict = pass?.(k.domain, k.id, k.due);
      if (verdict === 'stop') break;
      if (verdict) continue;
      out.push({ due: k.due, entry: { id: k.id, domain: k.domain } as QueueEntry });
    }
    return out;
  }
}

/** A claim that passes over the keys of `full` domains (their site is the domain) and has no room there. */
function claimPassing(full: string[], roomLeft = false): ScanClaim & { passed: string[] } {
  const passed: string[] = [];
  return {
    passed,
    pass: (domain, id) => {
      if (!full.includes(domain)) return false;
      passed.push(id);
      return true;
    },
    noRoom: (sites) => !roomLeft && [...sites].every((s) => full.includes(s)),
  };
}

const ids = (found: Found[]) => found.map((f) => f.entry.id);

describe('which keys a scan reads', () => {
  test('from the start: everything due, the keys of sites with no room passed over', async () => {
    const queue = new FakeQueue([key(10, 'full.test', 'f1'), key(20, 'ok.test', 'o1'), key(30, 'full.test', 'f2'), key(NOW + 1, 'ok.test', 'later')]);
    const claim = claimPassing(['full.test']);
    const { found, end } = await scanDue(queue, NOW, 10, null, claim);
    expect(ids(found)).toEqual(['o1']);
    expect(claim.passed).toEqual(['f1', 'f2']);
    expect(end).toEqual({ whole: true, resume: null });
  });

  test('from the start, the slots filled: not whole', async () => {
    const queue = new FakeQueue([key(10, 'a.test', 'a1'), key(20, 'b.test', 'b1'), key(30, 'c.test', 'c1')]);
    const { found, end } = await scanDue(queue, NOW, 2, null, claimPassing([]));
    expect(ids(found)).toEqual(['a1', 'b1']);
    expect(end).toEqual({ whole: false, resume: null });
  });

  test('from the start, a backlog deeper than the scan limit: stops at the limit and resumes after its last key', async () => {
    const backlog = Array.from({ length: QUEUE_SCAN_LIMIT + 10 }, (_, i) => key(10, 'full.test', `f${String(i).padStart(5, '0')}`));
    const queue = new FakeQueue([...backlog, key(20, 'ok.test', 'o1')]);
    const { found, end } = await scanDue(queue, NOW, 10, null, claimPassing(['full.test']));
    expect(found).toEqual([]);
    expect(end).toEqual({ whole: false, resume: backlog[QUEUE_SCAN_LIMIT - 1] });
  });

  test('going on, the sites the last scan passed over still without room: only what became due since', async () => {
    const queue = new FakeQueue([key(10, 'full.test', 'f1'), key(20, 'ok.test', 'seen-by-the-next-full-scan'), key(NOW - 10, 'ok.test', 'new')]);
    const last = memory({ upTo: NOW - 50, sites: new Set(['full.test']) });
    const { found, end } = await scanDue(queue, NOW, 10, last, claimPassing(['full.test']));
    expect(ids(found)).toEqual(['new']);
    expect(queue.calls).toEqual([{ upTo: NOW, limit: 10, after: NOW - 50 }]);
    expect(end).toEqual({ whole: true, resume: null });
  });

  test('going on, a site passed over last time has room again: the head up to the last scan, then the tail', async () => {
    const queue = new FakeQueue([key(10, 'roomy.test', 'r1'), key(20, 'roomy.test', 'r2'), key(NOW - 10, 'ok.test', 'new')]);
    const last = memory({ upTo: NOW - 50, sites: new Set(['roomy.test']) });
    const { found, end } = await scanDue(queue, NOW, 10, last, claimPassing([], true));
    expect(ids(found)).toEqual(['r1', 'r2', 'new']);
    expect(queue.calls).toEqual([
      { upTo: NOW - 50, limit: 10, after: undefined },
      { upTo: NOW, limit: 8, after: NOW - 50 },
    ]);
    expect(end).toEqual({ whole: true, resume: null });
  });

  test('going on, the head stops as soon as the sites passed over have no room left', async () => {
    const queue = new FakeQueue([key(10, 'full.test', 'f1'), key(20, 'full.test', 'f2'), key(30, 'ok.test', 'o1')]);
    const last = memory({ upTo: NOW - 50, sites: new Set(['full.test']) });
    let room = true; // room for the first check only
    const claim: ScanClaim = {
      pass: (domain) => domain === 'full.test',
      noRoom: () => {
        const none = !room;
        room = false;
        return none;
      },
    };
    const { found } = await scanDue(queue, NOW, 10, last, claim);
    // f1 passed over, then 'stop': neither f2 nor o1 (before the last scan's end) is looked at.
    expect(found).toEqual([]);
  });

  test('going on after a scan the limit cut short: from the resume key, the keys at its due time up to it passed over', async () => {
    const resume = key(40, 'm.test', 'e5');
    const queue = new FakeQueue([
      key(40, 'a.test', 'before'),
      key(40, 'm.test', 'e5'),
      key(40, 'm.test', 'e6'),
      key(40, 'z.test', 'z1'),
      key(NOW - 10, 'ok.test', 'new'),
    ]);
    const last = memory({ upTo: 39, fullAt: NOW - 60_000, sites: new Set(['full.test']), resume });
    const { found, end } = await scanDue(queue, NOW, 10, last, claimPassing(['full.test']));
    expect(ids(found)).toEqual(['e6', 'z1', 'new']);
    expect(queue.calls).toEqual([{ upTo: NOW, limit: 10, after: 39 }]);
    expect(end).toEqual({ whole: true, resume: null });
  });
});
