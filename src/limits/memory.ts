// Garbage is given back promptly. Large requests and delivery attempts leave tens of megabytes of
// garbage each (a 5 MB attachment arrives as 7 MB of base64 JSON, is decoded, composed into MIME,
// signed and sent), and the collector, left alone, lets it pile up to several times the live set
// before it runs. Twice a second, when the process's anonymous memory has grown by a step since the
// last collection, one is run (a full collection: the concurrent one, Bun.gc(false), left twice the
// memory behind in bench:memory for no gain in /health latency). Anonymous memory, not the whole
// resident size: the resident size also counts the pages of LMDB's file mapped in as the store is
// read, which grow with the data and which no collection gives back — counting them ran a full
// collection on every thread for each 64 MB the store read. A collection that gives back less
// than a quarter found live memory, not garbage — the heap grown with a steady load of small requests, buffers
// kept for reuse — and stopped the thread for nothing (200–700 ms under POST /emails at 64
// connections, 6 % of the HTTP thread's samples): the next then waits for twice the growth, until
// one gives back a quarter or more of what had grown.
import { readFileSync } from 'node:fs';

const CHECK_MS = 500;
/** Growth of anonymous memory that starts a collection, at first and after one that gave back most of it. */
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

/** The process's anonymous resident memory (proc(5) RssAnon), or its whole resident size where there is no /proc. */
function anonymousBytes(): number {
  try {
    const m = /^RssAnon:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'latin1'));
    if (m) return Number(m[1]) * 1024;
  } catch {}
  return process.memoryUsage.rss();
}

export function keepMemoryTidy(): { stop(): void } {
  let base = anonymousBytes();
  let step = STEP;
  const timer = setInterval(() => {
    const now = anonymousBytes();
    if (now - base < step) {
      base = Math.min(base, now);
      return;
    }
    Bun.gc(true);
    const after = anonymousBytes();
    step = nextStep(step, now - base, now - after);
    base = after;
  }, CHECK_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
