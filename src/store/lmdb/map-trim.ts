// Pages of the LMDB file the process has read stay mapped into it, and count in its resident set
// (RSS), until it unmaps them. LMDB reads every page it changes (a commit copies each one touched),
// and a read fault maps the page's cached neighbours too (the kernel's fault-around, 64 KB), so the
// map's share of RSS grows to the whole file — every email, event and attempt ever written — while
// what the process works on is the due end of the queue and the newest pages. Every TRIM_MS the
// map's pages are released (madvise MADV_DONTNEED): on a shared mapping of a file this only drops
// the process's page-table entries; the pages stay in the kernel's page cache, and the next read
// maps them again from there (a minor fault, no disk read). lmdb-js maps the file read-only (no
// writemap), so no page is dirty in the map: nothing can be lost. Linux only (the map is found in
// /proc/self/maps); elsewhere, or where libc does not load, nothing is trimmed.
// madvise works on addresses, so the range must still be the map when it is called: each thread
// trims only while its own environment is open (env.ts stops the timer before close, on the same
// thread), and the map is never moved while open (mapSize is fixed at 1 TiB, so lmdb-js never
// remaps to grow it) — the addresses read from /proc/self/maps cannot have been given to anything else.
import { readFileSync } from 'node:fs';
import { dlopen, FFIType } from 'bun:ffi';

/** How often the map's pages are released; re-mapping the working set after each costs well under a millisecond. */
export const TRIM_MS = 10_000;

/** madvise(2)'s advice: drop the range's page-table entries (linux/mman-common.h). */
const MADV_DONTNEED = 4;

const SYMBOLS = { madvise: { args: [FFIType.u64, FFIType.u64, FFIType.i32], returns: FFIType.i32 } } as const;

let madvise: ((addr: bigint, length: bigint, advice: number) => number) | null | undefined;
function libc(): typeof madvise {
  if (madvise !== undefined) return madvise;
  madvise = null;
  if (process.platform !== 'linux') return null;
  try {
    const m = dlopen('libc.so.6', SYMBOLS).symbols.madvise;
    madvise = (addr, length, advice) => m(addr, length, advice);
  } catch {
    // Another libc (musl): no trimming, as on other systems.
  }
  return madvise;
}

/** The address ranges where `file` is mapped into this process. */
function mappings(file: string): [bigint, bigint][] {
  const out: [bigint, bigint][] = [];
  for (const line of readFileSync('/proc/self/maps', 'utf8').split('\n')) {
    if (!line.endsWith(` ${file}`)) continue;
    const [from, to] = line.slice(0, line.indexOf(' ')).split('-');
    out.push([BigInt(`0x${from}`), BigInt(`0x${to}`)]);
  }
  return out;
}

/**
 * Release the pages of `file`'s mappings from this process's resident set (above). Returns how many
 * mappings were trimmed: 0 where this cannot be done.
 */
export function trimMap(file: string): number {
  const advise = libc();
  if (!advise) return 0;
  let n = 0;
  for (const [from, to] of mappings(file)) if (advise(from, to - from, MADV_DONTNEED) === 0) n++;
  return n;
}

/** trimMap every TRIM_MS while the environment is open (the timer does not keep the process alive). */
export function trimEvery(file: string): () => void {
  if (!libc()) return () => {};
  const timer = setInterval(() => trimMap(file), TRIM_MS);
  timer.unref();
  return () => clearInterval(timer);
}
