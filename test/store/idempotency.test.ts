// Idempotency records expire 24 h after the first request (api-reference §5), through the TTL
// index sweep; an expired record that the sweep has not reached yet already counts as gone.
import { test, expect } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../../src/store';
import { IDEMPOTENCY_TTL_MS } from '../../src/store/idempotency';

test('idempotency keys live 24 hours', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'posthorn-idem-'));
  const store = new Store(dir);
  try {
    const now = Date.now();
    const rec = (created_at: number) => ({ fingerprint: 'f', status: 200, body: { id: 'x' }, created_at });
    await store.transaction(() => {
      store.idempotency.putInTxn('team', '/emails', 'old', rec(now - IDEMPOTENCY_TTL_MS - 1000));
      store.idempotency.putInTxn('team', '/emails', 'new', rec(now));
    });
    expect(store.idempotency.get('team', '/emails', 'old')).toBeUndefined();
    expect(store.idempotency.get('team', '/emails', 'new')?.body).toEqual({ id: 'x' });
    expect(await store.ttl.sweep(now)).toBe(1);
    expect(await store.ttl.sweep(now + IDEMPOTENCY_TTL_MS + 1)).toBe(1);
    expect(store.idempotency.get('team', '/emails', 'new', 0)).toBeUndefined();
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
