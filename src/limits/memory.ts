// Garbage is given back promptly. Large requests and delivery attempts leave tens of megabytes of
// garbage each (a 5 MB attachment arrives as 7 MB of base64 JSON, is decoded, composed into MIME,
// signed and sent), and the collector, left alone, lets it pile up to several times the live set
// before it runs. Ten times a second each thread looks, and collects (a full collection: the
// concurrent one, Bun.gc(false), left twice the memory behind in bench:memory for no gain in
// /health latency) when the process's anonymous memory has grown by a step since its last
// collection and its own heap by half a step. Anonymous memory, not the resident size, which also
// counts LMDB's file pages that no collection gives back. Its own heap — JSC's objects and the
// memory they hold outside it (buffers, long strings): process.memoryUsage's heapUsed, which is
// each thread's own — because a collection stops only the thread that runs it and gives back only
// its garbage: on the process's memory alone every thread (the HTTP thread, the back office, the
// signing threads) collected when any other grew, and /health waited behind the HTTP thread's
// collections for the back office's delivery attempts (39 in 60 s, 37–669 ms each, under
// `bench:memory --count 120`). A collection that gives back less than a quarter found live
// memory, not garbage — the heap grown with a steady load of small requests, buffers kept for
// reuse — and stopped the thread for nothing (200–700 ms under POST /emails at 64 connections, 6 %
// of the HTTP thread's samples): the next then waits for twice the growth, until one gives back a
// quarter or more of what had grown.
//
// POSTHORN_MEMORY_TRACE=<file> (bench-only, `bench:memory --trace`) appends each look and each
// collection of every thread to that file: `<ms> <thread> <anonymous> <heap>` and
// `<ms> <thread> gc <heap before> -> <heap after> <pause>ms` — which thread's heap the peak is made of.
import { appendFileSync, readFileSync } from 'node:fs';
import { threadId } from 'node:worker_threads';

const TRACE = process.env.POSTHORN_MEMORY_TRACE;

// Often enough that a thread's heap cannot grow far past a step between two looks (a 5 MB send
// leaves some 40 MB of garbage); process.memoryUsage costs a few microseconds.
const CHECK_MS = 100;
/** Growth of this thread's heap that starts a collection, at first and after one that gave back most of it. */
const STEP = 64 * 1024 * 1024;
/** The most growth left uncollected while collections keep finding live memory. */
const MAX_STEP = 1024 * 1024 * 1024;

/**
 * The growth that starts the next collection: after one that gave back less than a quarter of
 * `grown`, twice `step` (large bodies in flight are live too: a collection amid them gives back less
 * than all, and must not be taken for one that found nothing).
 */
export function nextStep(step: number, grown: number, freed: number): number {
  return freed < grown / 4 ? Math.min(step * 2, MAX_STEP) : STEP;
}

/** This thread's heap: its JavaScript objects and the memory they report (buffers, strings). */
export function threadHeapBytes(): number {
  return process.memoryUsage().heapUsed;
}

/** The process's anonymous resident memory (proc(5) RssAnon), or its whole resident size where there is no /proc. */
function anonymousBytes(): number {
  try {
    const m = /^RssAnon:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'latin1'));
    if (m) return Number(m[1]) * 1024;
  } catch {}
  return process.memoryUsage.rss();
}

/**
 * Is it this thread's turn to collect: the process grew by `step` and this thread's heap by half
 * of it at least (the process's memory alone would not say whose garbage it is; the heap alone
 * grows between JSC's own collections under a load of small requests, whose garbage it reuses).
 */
export function shouldCollect(step: number, process: { base: number; now: number }, heap: { base: number; now: number }): boolean {
  return process.now - process.base >= step && heap.now - heap.base >= step / 2;
}

export function keepMemoryTidy(): { stop(): void } {
  let anon = anonymousBytes();
  let heap = threadHeapBytes();
  let step = STEP;
  const timer = setInterval(() => {
    const anonNow = anonymousBytes();
    const heapNow = threadHeapBytes();
    if (TRACE) appendFileSync(TRACE, `${Date.now()} ${threadId} ${anonNow} ${heapNow}\n`);
    if (!shouldCollect(step, { base: anon, now: anonNow }, { base: heap, now: heapNow })) {
      anon = Math.min(anon, anonNow);
      heap = Math.min(heap, heapNow);
      return;
    }
    const t0 = performance.now();
    Bun.gc(true);
    const heapAfter = threadHeapBytes();
    if (TRACE) appendFileSync(TRACE, `${Date.now()} ${threadId} gc ${heapNow} -> ${heapAfter} ${(performance.now() - t0).toFixed(0)}ms\n`);
    step = nextStep(step, heapNow - heap, heapNow - heapAfter);
    heap = heapAfter;
    anon = anonymousBytes();
  }, CHECK_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
