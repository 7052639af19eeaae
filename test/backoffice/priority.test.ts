// The back office yields the CPU to the listeners (src/backoffice/priority.ts): its thread runs
// BACK_OFFICE_NICE steps below the main thread, which keeps its own priority.
import { describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { BACK_OFFICE_NICE } from '../../src/backoffice/priority';
import { startPosthorn } from '../helpers/posthorn';

/** The nice value of each thread of this process (proc(5): field 19 of /proc/<pid>/task/<tid>/stat). */
function threadNice(): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      out.set(tid, Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
    } catch {} // a thread that ended meanwhile
  }
  return out;
}

describe.skipIf(process.platform !== 'linux')('back office priority', () => {
  test('the back office thread runs below the listeners; the main thread keeps its priority', async () => {
    const main = getPriority(0);
    const lowered = Math.min(19, main + BACK_OFFICE_NICE);
    const before = new Set([...threadNice()].filter(([, nice]) => nice === lowered).map(([tid]) => tid));
    const p = await startPosthorn();
    try {
      const now = threadNice();
      const fresh = [...now].filter(([tid, nice]) => nice === lowered && !before.has(tid));
      // The back office thread, started by startPosthorn (and any thread it started in turn).
      expect(fresh.length).toBeGreaterThanOrEqual(1);
      expect(now.get(String(process.pid))).toBe(main);
      expect(getPriority(0)).toBe(main);
    } finally {
      await p.stop();
    }
  });
});
