// Group commit of the embedded store (store/lmdb/env.ts, `commitsInFlight`): units of work issued
// while a thread's commit is under way wait and go together in its next write transaction; each
// still stands alone — a unit that throws leaves nothing, the others in its batch commit.
import { afterAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LmdbEnv } from '../../src/store/lmdb/env';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
function env(commitsInFlight?: number): LmdbEnv {
  const dir = mkdtempSync(join(tmpdir(), 'posthorn-group-commit-'));
  dirs.push(dir);
  return new LmdbEnv(dir, { commitsInFlight });
}

test('units issued while a commit is under way share the next write transaction', async () => {
  const e = env(1);
  const db = e.db('t');
  const txn = () => e.root.getWriteTxnId();
  let first = 0;
  const later: Promise<number>[] = [];
  await e.transaction(() => {
    first = txn();
    db.put('a', 1);
    // Issued now, while this unit's batch is under way (not awaited: a unit awaits only its reads).
    for (let i = 0; i < 10; i++) later.push(e.transaction(() => (db.put(`b${i}`, i), txn())));
  });
  const ids = await Promise.all(later);
  expect(new Set(ids).size).toBe(1);
  expect(ids[0]).toBeGreaterThan(first);
  expect(db.get('b9')).toBe(9);
  await e.close();
});

test('a unit that throws leaves nothing; the others of its batch commit', async () => {
  const e = env(1);
  const db = e.db('t');
  const results = await Promise.allSettled([
    e.transaction(() => db.put('one', 1)),
    e.transaction(async () => {
      db.put('two', 2);
      throw new Error('refused');
    }),
    e.transaction(() => db.put('three', 3)),
  ]);
  expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  expect([db.get('one'), db.get('two'), db.get('three')]).toEqual([1, undefined, 3]);
  await e.close();
});

test('committed() waits for units still waiting for their batch', async () => {
  const e = env(1);
  const db = e.db('t');
  void e.transaction(() => db.put('x', 1));
  void e.transaction(() => db.put('y', 2));
  await e.committed();
  expect([db.get('x'), db.get('y')]).toEqual([1, 2]);
  // Without a limit, each turn commits what it issued: the same answers.
  const f = env();
  const fdb = f.db('t');
  expect(await f.transaction(() => (fdb.put('z', 3), 'done'))).toBe('done');
  expect(fdb.get('z')).toBe(3);
  await Promise.all([e.close(), f.close()]);
});
