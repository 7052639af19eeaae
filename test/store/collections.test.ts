// Collection parity: the store's repositories are declared once (src/store/collections.ts), and
// both backends and the PostgreSQL schema are held to that declaration — the same collections with
// the same indexes on LMDB and on PostgreSQL, a table with an index column (and its index or
// unique constraint) for each in PostgreSQL, a database for each in LMDB, nothing kept that is not
// declared, the declared writes waking the declared workers on both, and the released migrations
// unchanged (a migration, once released, is never edited: pg/schema.ts).
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SQL } from 'bun';
import {
  openStore,
  type Change,
  type Store,
  type StoreReader,
  type Signal,
  type Tx,
  type QueueEntry,
  type SpooledMessage,
  type TriggerRec,
} from '../../src/store';
import { decodeChanges, encodeChanges, IDS_PER_TOPIC } from '../../src/store/changes';
import {
  COLLECTIONS,
  CONTENTS,
  DUE_INDEXES,
  INTERNAL,
  REPOSITORIES,
  SIGNALS,
  WAKING,
  CHANGING,
  type CollectionDecl,
  type Collections,
  type Contentses,
  type DueIndexes,
} from '../../src/store/collections';
import { LmdbCollection, LmdbContents } from '../../src/store/lmdb/collection';
import { LmdbDueIndex } from '../../src/store/lmdb/due-index';
import type { LmdbStore } from '../../src/store/lmdb';
import { PgCollection, PgContents } from '../../src/store/pg/collection';
import { PgDueIndex } from '../../src/store/pg/due-index';
import { MIGRATIONS, SCHEMA_VERSION, declaredTables } from '../../src/store/pg/schema';
import { newId, nowIso } from '../../src/ids';
import { postgres } from '../helpers/postgres';

// The declaration names every repository of the store interface, and nothing else (checked by
// `npm run typecheck`: a repository added to interface.ts and not declared, or the other way
// round, makes this line fail to compile).
type DeclaredNames = keyof Collections | keyof Contentses | keyof DueIndexes | keyof typeof REPOSITORIES;
const declaresTheInterface: [keyof StoreReader] extends [DeclaredNames] ? ([DeclaredNames] extends [keyof StoreReader] ? true : false) : false = true;

/** What a repository is, as the declaration says it or as a backend built it. */
type Shape =
  | { kind: 'collection'; table: string; indexes: { name: string; unique: boolean; global: boolean }[] }
  | { kind: 'contents'; table: string }
  | { kind: 'due index'; name: string }
  | { kind: 'own layout' };

const indexShape = (i: { name: string; unique?: boolean; global?: boolean }) => ({ name: i.name, unique: !!i.unique, global: !!i.global });

function declaredShapes(): Record<string, Shape> {
  const out: Record<string, Shape> = {};
  for (const [name, d] of Object.entries(COLLECTIONS) as [string, CollectionDecl<never, string>][])
    out[name] = { kind: 'collection', table: d.table, indexes: (d.indexes ?? []).map(indexShape) };
  for (const [name, d] of Object.entries(CONTENTS)) out[name] = { kind: 'contents', table: d.table };
  for (const [name, d] of Object.entries(DUE_INDEXES)) out[name] = { kind: 'due index', name: d.name };
  for (const name of Object.keys(REPOSITORIES)) out[name] = { kind: 'own layout' };
  return out;
}

/** Each repository of `store` as a unit of work sees it (where cached collections are their backend's). */
async function builtShapes(store: Store): Promise<Record<string, Shape>> {
  const out: Record<string, Shape> = {};
  await store.write(async (tx) => {
    for (const name of Object.keys(declaredShapes())) {
      const repo = (tx as unknown as Record<string, unknown>)[name];
      if (repo instanceof LmdbCollection || repo instanceof PgCollection)
        out[name] = {
          kind: 'collection',
          table: repo instanceof LmdbCollection ? repo.name : repo.table,
          indexes: (repo.indexes as { name: string; unique?: boolean; global?: boolean }[]).map(indexShape),
        };
      else if (repo instanceof LmdbContents) out[name] = { kind: 'contents', table: repo.collection };
      else if (repo instanceof PgContents) out[name] = { kind: 'contents', table: repo.table };
      else if (repo instanceof LmdbDueIndex || repo instanceof PgDueIndex) out[name] = { kind: 'due index', name: repo.name };
      else if (repo && typeof repo === 'object') out[name] = { kind: 'own layout' };
    }
  });
  return out;
}

let dir: string;
let lmdb: Store;
let pg: Store;
let pgUrl: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'posthorn-collections-'));
  lmdb = await openStore({ dataDir: dir, retentionDays: 30, holdMs: 0 });
  pgUrl = await (await postgres()).database();
  pg = await openStore({ dataDir: '/nonexistent', databaseUrl: pgUrl, retentionDays: 30, holdMs: 0 });
});
afterAll(async () => {
  await Promise.all([lmdb?.close(), pg?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

describe('one declaration of the collections', () => {
  test('it names every repository of the store interface', () => {
    expect(declaresTheInterface).toBe(true);
  });

  test('both backends build every declared repository as declared: the same collections with the same indexes', async () => {
    const declared = declaredShapes();
    expect(await builtShapes(lmdb)).toEqual(declared);
    expect(await builtShapes(pg)).toEqual(declared);
  });

  test('the PostgreSQL schema has a table per collection, with a column and an index (or unique constraint) per declared index', async () => {
    const sql = new SQL(pgUrl);
    try {
      const columns = async (table: string) =>
        (await sql.unsafe("SELECT column_name AS c FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1", [table]))
          .map((r: { c: string }) => r.c)
          .sort();
      for (const [name, d] of Object.entries(COLLECTIONS) as [string, CollectionDecl<never, string>][]) {
        const indexes = d.indexes ?? [];
        expect({ name, columns: await columns(d.table) }).toEqual({
          name,
          columns: ['expires', 'id', 'team', 'value', ...indexes.map((i) => `i_${i.name}`)].sort(),
        });
        const uniques = (
          await sql.unsafe("SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'u'", [d.table])
        ).map((r: { def: string }) => r.def);
        const plain = (await sql.unsafe("SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename = $1", [d.table])).map(
          (r: { indexdef: string }) => r.indexdef,
        );
        for (const i of indexes) {
          if (i.unique) expect(uniques).toContain(`UNIQUE (${i.global ? '' : 'team, '}i_${i.name}) DEFERRABLE INITIALLY DEFERRED`);
          else expect(plain.some((def: string) => def.includes(`(team, i_${i.name}, id)`))).toBe(true);
        }
        // Nothing unique beyond what is declared.
        expect(uniques.length).toBe(indexes.filter((i) => i.unique).length);
      }
      for (const d of Object.values(CONTENTS)) expect(await columns(d.table)).toEqual(['files', 'id', 'raw', 'team', 'value']);
      // Every table is declared: a collection's, a body's, a repository's, or the backend's own.
      const tables = (await sql.unsafe("SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public'")).map((r: { t: string }) => r.t).sort();
      const declared = [
        ...Object.values(COLLECTIONS).map((d) => d.table),
        ...Object.values(CONTENTS).map((d) => d.table),
        ...Object.values(REPOSITORIES).flatMap((d) => d.pg),
        ...INTERNAL.pg,
      ].sort();
      expect(tables).toEqual(declared);
    } finally {
      await sql.close();
    }
  });

  test('the embedded store keeps a database per collection (and its indexes), body, due index and repository, and nothing undeclared', () => {
    const names = [...(lmdb as LmdbStore).env.root.getKeys({})].map(String).sort();
    const declared = [
      ...Object.values(COLLECTIONS).flatMap((d) => [d.table, `${d.table}.idx`]),
      ...Object.values(CONTENTS).map((d) => d.table),
      ...Object.values(DUE_INDEXES).map((d) => d.name),
      ...Object.values(REPOSITORIES).flatMap((d) => d.lmdb),
      ...INTERNAL.lmdb,
    ].sort();
    expect(names).toEqual(declared);
  });

  test('every collection and body is created by the migration its `since` names; released migrations are never edited', () => {
    for (const d of [...Object.values(COLLECTIONS), ...Object.values(CONTENTS)]) expect(d.since).toBeLessThanOrEqual(SCHEMA_VERSION);
    for (const m of MIGRATIONS) expect(m.sql).toContain(declaredTables(m.version).join('\n'));
    // The SQL of each released migration, as released. A change to a released collection's table
    // or indexes is a new migration; a new collection is declared `since` a new version.
    const RELEASED: Record<number, string> = {
      1: '8e22ffbfc5eb81493206df3158b9b64b76318dfe9e6210cc5b5233d51fed4153',
      2: 'd016e790db76170d073d97d7f5ea4c851856426901a30efc19dff55a0a51f4b3',
    };
    for (const m of MIGRATIONS) {
      const released = RELEASED[m.version];
      if (released) expect({ version: m.version, sha256: createHash('sha256').update(m.sql).digest('hex') }).toEqual({ version: m.version, sha256: released });
    }
  });
});

describe('which write wakes which worker', () => {
  const queueEntry = (): QueueEntry => ({
    id: newId(),
    team_id: newId(),
    email_id: newId(),
    domain: 'example.test',
    recipients: ['a@example.test'],
    attempts: 0,
    first_attempt_at: null,
    last_error: null,
  });
  const spooled = (): SpooledMessage => ({
    id: newId(),
    received_at: nowIso(),
    envelope: { mail_from: 'a@example.test', remote_address: '127.0.0.1', helo: 'localhost', tls: false },
    session_id: 'session',
    inbound: [],
    reports: [],
    size: 1,
    attempts: 0,
    attempting: false,
    error: null,
  });
  const trigger = (): TriggerRec => ({ id: newId(), team_id: newId(), created_at: nowIso(), event: 'e', contact_id: null, email: null, payload: {} });

  /**
   * A call of each write that makes work due, and of a write that does not (`quiet`) where the
   * declaration has a test of the arguments. A write declared in `WAKING` without a sample here
   * fails the test below: add one.
   */
  const SAMPLES: Record<string, Record<string, { wakes: () => unknown[]; quiet?: () => unknown[] }>> = {
    queue: { put: { wakes: () => [queueEntry(), 1_000] }, add: { wakes: () => [queueEntry(), 1_000] } },
    outbox: { put: { wakes: () => [newId(), newId(), 1_000, newId()] } },
    inboundSpool: {
      add: { wakes: () => [spooled(), new Uint8Array([1]), 1_000] },
      update: { wakes: () => [spooled(), 1_000], quiet: () => [spooled(), null] },
    },
    automationTriggers: { add: { wakes: () => [trigger()] } },
    incoming: { add: { wakes: () => [{ id: newId(), team_id: newId(), created_at: nowIso(), sandbox: false, emails: [] }] } },
    automationDue: { add: { wakes: () => [1_000, newId(), newId()] } },
    automationCleanup: { add: { wakes: () => [0, newId(), newId()] } },
    agentDue: { add: { wakes: () => [0, newId(), newId()] } },
  };

  /** The signals a unit of work making `call` fires on `store`. */
  async function firedBy(store: Store, call: (tx: Tx) => void): Promise<Signal[]> {
    const fired: Signal[] = [];
    const listening = { on: true };
    for (const s of Object.keys(SIGNALS) as Signal[]) store.on(s, () => listening.on && fired.push(s));
    try {
      await store.write(async (tx) => call(tx));
      return fired;
    } finally {
      listening.on = false;
    }
  }

  beforeAll(() => {
    // The PostgreSQL store fires every signal every 10 s as a safety net (pg/signals.ts): not here.
    const signals = (pg as unknown as { signals: { timer: ReturnType<typeof setInterval> | null } }).signals;
    if (signals.timer) clearInterval(signals.timer);
  });

  for (const backend of ['lmdb', 'pg'] as const)
    test(`${backend}: each declared write fires its signal after the commit, and writes of other repositories fire none`, async () => {
      const store = backend === 'lmdb' ? lmdb : pg;
      for (const [name, waking] of WAKING)
        for (const [method] of waking.writes) {
          const sample = SAMPLES[name]?.[method];
          expect(sample ? `${name}.${method}` : `no sample call for ${name}.${method}`).toBe(`${name}.${method}`);
          if (!sample) continue;
          // The repository's write as the unit of work offers it (a wrapper noting the signal).
          const write = (tx: Tx, args: unknown[]) => {
            const repo = (tx as unknown as Record<string, Record<string, (...a: unknown[]) => void>>)[name];
            repo?.[method]?.(...args);
          };
          expect({ write: `${name}.${method}`, fired: await firedBy(store, (tx) => write(tx, sample.wakes())) }).toEqual({
            write: `${name}.${method}`,
            fired: [waking.signal],
          });
          const quiet = sample.quiet;
          if (quiet) expect(await firedBy(store, (tx) => write(tx, quiet()))).toEqual([]);
        }
      // A due index, a collection and a repository the declaration does not say wake anyone.
      expect(await firedBy(store, (tx) => tx.schedule.add(1_000, newId(), newId()))).toEqual([]);
      expect(await firedBy(store, (tx) => tx.teams.put({ id: newId(), team_id: newId(), created_at: nowIso(), name: 't' }))).toEqual([]);
      expect(await firedBy(store, (tx) => tx.sites.put({ site: newId(), suspended_until: null, strikes: 1, throttled_at: 1_000, reply: '421' }))).toEqual([]);
    });
});

describe('which write is a change of the live stream (docs/api.md §19.15)', () => {
  /** The changes a unit of work making `call` hands to `store`'s change listeners. */
  async function changesOf(store: Store, call: (tx: Tx) => void): Promise<Change[]> {
    const heard: Change[] = [];
    const listening = { on: true };
    store.onChange((cs) => listening.on && heard.push(...cs));
    try {
      await store.write(async (tx) => call(tx));
      return heard;
    } finally {
      listening.on = false;
    }
  }

  /** A record any declared collection takes: the fields their indexes and retention read. */
  const record = (team: string) => ({
    id: newId(),
    team_id: team,
    created_at: nowIso(),
    name: `${newId()}.test`,
    automation_id: newId(),
    status: 'running',
    state: 'running',
    completed_at: null,
  });

  for (const backend of ['lmdb', 'pg'] as const)
    test(`${backend}: the puts and removes of the collections declaring \`changes\` are noted, with their team and id; other writes are not`, async () => {
      const store = backend === 'lmdb' ? lmdb : pg;
      expect([...CHANGING.keys()].sort()).toEqual(['automationRuns', 'broadcasts', 'contactImports', 'domains', 'inboxThreads']);
      for (const [name, topic] of CHANGING) {
        const team = newId();
        const rec = record(team);
        const repo = (tx: Tx) => (tx as unknown as Record<string, { put(r: unknown): void; remove(t: string, id: string): void }>)[name]!;
        expect(await changesOf(store, (tx) => repo(tx).put(rec))).toEqual([{ team, topic, id: rec.id }]);
        expect(await changesOf(store, (tx) => repo(tx).remove(team, rec.id))).toEqual([{ team, topic, id: rec.id }]);
      }
      expect(await changesOf(store, (tx) => tx.teams.put({ id: newId(), team_id: newId(), created_at: nowIso(), name: 't' }))).toEqual([]);
      // Noted by hand (the event function), and many of one kind become one change without an id.
      const team = newId();
      const ids = Array.from({ length: IDS_PER_TOPIC + 1 }, () => newId());
      expect(await changesOf(store, (tx) => tx.changed({ team, topic: 'email', id: ids[0]! }))).toEqual([{ team, topic: 'email', id: ids[0]! }]);
      expect(
        await changesOf(store, (tx) => {
          for (const id of ids) tx.changed({ team, topic: 'email', id });
        }),
      ).toEqual([{ team, topic: 'email', id: null }]);
    });

  test('what NOTIFY carries reads back as it was, and stays within its 8,000 bytes however many changes', () => {
    const team = newId();
    const few: Change[] = [
      { team, topic: 'email', id: newId() },
      { team, topic: 'broadcast', id: null },
    ];
    expect(decodeChanges(encodeChanges(few))).toEqual(few);
    const many: Change[] = Array.from({ length: 500 }, (_, i) => ({ team: i % 2 ? team : newId(), topic: 'email', id: newId() }));
    const field = encodeChanges(many);
    expect(field.length).toBeLessThanOrEqual(6_000);
    const back = decodeChanges(field);
    expect(back.every((c) => c.id === null)).toBe(true);
    expect(back.some((c) => c.team === team)).toBe(true);
  });
});
