// Idempotency records expire 24 h after the first request (docs/api.md §5), through the store's
// retention sweep; an expired record that the sweep has not reached yet already counts as gone.
import { test, expect } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, IDEMPOTENCY_TTL_MS } from '../../src/store';

test('idempotency keys live 24 hours', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'posthorn-idem-'));
  const store = await openStore({ dataDir: dir, retentionDays: 30, holdMs: 0 });
  try {
    const now = Date.now();
    const rec = (created_at: number) => ({ fingerprint: 'f', status: 200, body: { id: 'x' }, created_at });
    await store.write(async (tx) => {
      tx.idempotency.put('team', '/emails', 'old', rec(now - IDEMPOTENCY_TTL_MS - 1000));
      tx.idempotency.put('team', '/emails', 'new', rec(now));
    });
    expect(await store.idempotency.get('team', '/emails', 'old')).toBeUndefined();
    expect((await store.idempotency.get('team', '/emails', 'new'))?.body).toEqual({ id: 'x' });
    expect(await store.sweep(now)).toBe(1);
    expect(await store.sweep(now + IDEMPOTENCY_TTL_MS + 1)).toBe(1);
    expect(await store.idempotency.get('team', '/emails', 'new', 0)).toBeUndefined();
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
