// The embedded store keeps records without what their key holds (store/lmdb/collection.ts
// `compact`): `id` and `team_id` come back from the key [team_id, id] when read, and records stored
// whole before read the same. The pages of the file it has read leave the resident set when the map
// is trimmed (store/lmdb/map-trim.ts).
import { afterAll, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { openStore, type EventRec } from '../../src/store';
import type { LmdbStore } from '../../src/store/lmdb';
import { trimMap } from '../../src/store/lmdb/map-trim';
import { newId } from '../../src/ids';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'posthorn-compact-'));
  dirs.push(dir);
  return dir;
}
const open = async (dir: string) => (await openStore({ dataDir: dir, retentionDays: 30, holdMs: 0 })) as unknown as LmdbStore;

const team = newId();
const event = (subject: string): EventRec => ({
  id: newId(),
  team_id: team,
  created_at: new Date().toISOString(),
  type: 'email.sent',
  webhook: true,
  subject_id: subject,
  data: {},
  email_payload: true,
});

test('a record is stored without its id and team, and read whole: get, find by index, page, all', async () => {
  const store = await open(dataDir());
  const subject = newId();
  const evs = [event(subject), event(subject)];
  await store.write(async (tx) => {
    for (const e of evs) tx.events.put(e);
  });
  const raw = store.env.db('events').get([team, evs[0]!.id]) as Record<string, unknown>;
  expect(raw.id).toBeUndefined();
  expect(raw.team_id).toBeUndefined();
  expect(raw.subject_id).toBe(subject);

  expect(await store.events.get(team, evs[0]!.id)).toEqual(evs[0]!);
  expect(Object.keys((await store.events.get(team, evs[0]!.id))!).slice(0, 2)).toEqual(['id', 'team_id']);
  expect(await store.events.findAll('subject', subject, team)).toEqual(evs);
  expect((await store.events.page(team, {}, null)).data).toEqual([...evs].reverse());
  expect(await store.events.all(team)).toEqual(evs);
  await store.close();
});

test('a record stored whole (before records were compact) reads the same, and goes with its index rows', async () => {
  const dir = dataDir();
  const store = await open(dir);
  const subject = newId();
  const old = event(subject);
  // Written as Posthorn stored records before: the whole record, and its index row.
  await store.write(async () => {
    store.env.db('events').put([team, old.id], old);
    store.env.db('events.idx').put(['subject', team, subject, old.id], null);
  });
  expect(await store.events.get(team, old.id)).toEqual(old);
  expect(await store.events.findAll('subject', subject, team)).toEqual([old]);
  await store.write(async (tx) => tx.events.remove(team, old.id));
  expect(await store.events.get(team, old.id)).toBeUndefined();
  expect(store.env.db('events.idx').get(['subject', team, subject, old.id])).toBeUndefined();
  await store.close();
});

/** Resident bytes of `file`'s mappings in this process (/proc/self/smaps). */
function mappedRss(file: string): number {
  let rss = 0;
  let inMap = false;
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) inMap = line.endsWith(` ${file}`);
    else if (inMap && line.startsWith('Rss:')) rss += Number(/(\d+)/.exec(line)![1]) * 1024;
  }
  return rss;
}

test.skipIf(process.platform !== 'linux')('the pages of the file read leave the resident set when the map is trimmed, and read the same after', async () => {
  const dir = dataDir();
  const store = await open(dir);
  const file = resolve(dir, 'posthorn.mdb');
  const subject = newId();
  const evs = Array.from({ length: 4000 }, () => ({ ...event(subject), data: { note: 'x'.repeat(500) } }));
  await store.write(async (tx) => {
    for (const e of evs) tx.events.put(e);
  });
  expect((await store.events.all(team)).length).toBe(evs.length);
  const before = mappedRss(file);
  expect(before).toBeGreaterThan(1024 * 1024);
  expect(trimMap(file)).toBeGreaterThan(0);
  expect(mappedRss(file)).toBeLessThan(before / 4);
  expect(await store.events.all(team)).toEqual(evs);
  await store.close();
});
