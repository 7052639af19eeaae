// The delivery engine, the inbound processor and the outbox run on other threads than the one that
// commits their work, and are woken by a message after the commit. lmdb-js keeps a thread's read
// snapshot until its next timer tick, so a wake-up handled before that tick would read the queue
// as it was before the commit — and sleep until a due time that is no longer the earliest (the
// delivery engine's claim reads the queue's head first). `nextDue` must read the latest commit.
import { afterAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../src/store';

const dir = mkdtempSync(join(tmpdir(), 'posthorn-fresh-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('nextDue sees a commit another thread made within the same tick', async () => {
  const store = await openStore({ dataDir: dir, retentionDays: 30, holdMs: 0 });
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(join(import.meta.dir, 'fresh-reads.worker.ts'), { workerData: { dir, flag } } as WorkerOptions);
  try {
    await new Promise<void>((resolve, reject) => {
      worker.onmessage = (e) => (e.data === 'ready' ? resolve() : reject(new Error(String(e.data))));
      worker.onerror = (e) => reject(e);
    });
    for (const name of ['queue', 'inboundSpool', 'outbox', 'schedule'] as const) {
      // Each read below happens synchronously, before this tick ends: lmdb-js's snapshot stays.
      expect(await store[name].nextDue()).toBeNull();
      Atomics.store(flag, 0, 0);
      worker.postMessage(name);
      // Block this thread (no tick passes) until the other thread's commit is flushed.
      expect(Atomics.wait(flag, 0, 0, 10_000)).not.toBe('timed-out');
      expect(await store[name].nextDue()).toBe(1_000);
    }
  } finally {
    worker.terminate();
    await store.close();
  }
});
