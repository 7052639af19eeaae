// Store.appendLogs, the request log's write outside any unit of work (docs/api.md §15): entries are
// committed and readable once it resolves, alongside units of work issued at the same time, and
// survive the store being closed and opened again. Both backends: LMDB, and PostgreSQL.
import { describe, test, expect, afterAll } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type Store, type LogRec } from '../../src/store';
import { newId, nowIso } from '../../src/ids';
import { postgres } from '../helpers/postgres';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const entry = (team: string, n: number): LogRec => ({
  id: newId(),
  team_id: team,
  created_at: nowIso(),
  api_key_id: newId(),
  endpoint: '/emails',
  method: 'POST',
  response_status: 200,
  user_agent: `test ${n}`,
  duration_ms: n,
  request_json: JSON.stringify({ n }),
  response_json: null,
});

const backends: [string, () => Promise<{ open: () => Promise<Store> }>][] = [
  [
    'LMDB',
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'posthorn-append-logs-'));
      dirs.push(dataDir);
      return { open: () => openStore({ dataDir, retentionDays: 30, holdMs: 0 }) };
    },
  ],
  [
    'PostgreSQL',
    async () => {
      const url = await (await postgres()).database();
      return { open: () => openStore({ dataDir: '/nonexistent', databaseUrl: url, retentionDays: 30, holdMs: 0 }) };
    },
  ],
];

for (const [name, backend] of backends) {
  describe(name, () => {
    test('appended entries are committed with the units of work beside them, and kept across a restart', async () => {
      const { open } = await backend();
      const team = newId();
      let store = await open();
      const first = Array.from({ length: 50 }, (_, i) => entry(team, i));
      const second = Array.from({ length: 50 }, (_, i) => entry(team, 50 + i));
      // Issued in the same turn as a unit of work writing the same collection.
      const other = entry(team, 100);
      await Promise.all([store.appendLogs(first), store.write(async (tx) => tx.logs.put(other)), store.appendLogs(second)]);
      for (const rec of [...first, ...second, other]) expect(await store.logs.get(team, rec.id)).toEqual(rec);
      await store.close();

      store = await open();
      const page = await store.logs.page(team, { limit: 100 }, null);
      expect(page.data.length).toBe(100);
      expect((await store.logs.get(team, second[49]!.id))?.duration_ms).toBe(99);
      await store.close();
    });

    test('nothing appended is nothing written', async () => {
      const { open } = await backend();
      const store = await open();
      await store.appendLogs([]);
      expect(await store.logs.count(newId())).toBe(0);
      await store.close();
    });
  });
}
