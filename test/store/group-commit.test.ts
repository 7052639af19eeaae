// Group commit of the embedded store (store/lmdb/env.ts): patient units of work (WriteOptions)
// issued while a thread's batch of them is under way wait and go together in its next write
// transaction; each still stands alone — a unit that throws leaves nothing, the others in its batch
// commit — and a unit that is not patient never waits for them.
import { afterAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LmdbEnv } from '../../src/store/lmdb/env';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function env(): LmdbEnv {
  const dir = mkdtempSync(join(tmpdir(), 'posthorn-group-commit-'));
  dirs.push(dir);
  return new LmdbEnv(dir);
}
const PATIENT = true;

test('units issued while a commit is under way share the next write transaction', async () => {
  const e = env();
  const db = e.db('t');
  const txn = () => e.root.getWriteTxnId();
  let first = 0;
  const later: Promise<number>[] = [];
  let other: Promise<number> | null = null;
  await e.transaction(() => {
    first = txn();
    db.put('a', 1);
    // Issued now, while this unit's batch is under way (not awaited: a unit awaits only its reads).
    for (let i = 0; i < 10; i++) {
      later.push(
        e.transaction(() => {
          db.put(`b${i}`, i);
          return txn();
        }, PATIENT),
      );
    }
    // Not patient: lmdb-js's own next transaction, whatever is under way.
    other = e.transaction(() => {
      db.put('c', 1);
      return txn();
    });
  }, PATIENT);
  const ids = await Promise.all(later);
  expect(new Set(ids).size).toBe(1);
  expect(ids[0]).toBeGreaterThan(first);
  expect(db.get('b9')).toBe(9);
  expect(await other!).not.toBe(ids[0]);
  await e.close();
});

test('a unit that throws leaves nothing; the others of its batch commit', async () => {
  const e = env();
  const db = e.db('t');
  const results = await Promise.allSettled([
    e.transaction(() => db.put('one', 1), PATIENT),
    e.transaction(async () => {
      db.put('two', 2);
      throw new Error('refused');
    }, PATIENT),
    e.transaction(() => db.put('three', 3), PATIENT),
  ]);
  expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  expect([db.get('one'), db.get('two'), db.get('three')]).toEqual([1, undefined, 3]);
  await e.close();
});

test('committed() waits for units still waiting for their batch', async () => {
  const e = env();
  const db = e.db('t');
  void e.transaction(() => db.put('x', 1), PATIENT);
  void e.transaction(() => db.put('y', 2), PATIENT);
  await e.committed();
  expect([db.get('x'), db.get('y')]).toEqual([1, 2]);
  expect(
    await e.transaction(() => {
      db.put('z', 3);
      return 'done';
    }),
  ).toBe('done');
  expect(db.get('z')).toBe(3);
  await e.close();
});

test('after the environment is closed, patient units fail instead of waiting forever', async () => {
  const e = env();
  const db = e.db('t');
  await e.close();
  await expect(e.transaction(() => db.put('late', 1), PATIENT)).rejects.toThrow();
  // The failed batch ended: the next one is tried, and fails the same way.
  await expect(e.transaction(() => db.put('later', 1), PATIENT)).rejects.toThrow();
});
