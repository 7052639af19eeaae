// The PostgreSQL store (cluster mode) against a real server: migrations under an advisory lock,
// several store instances — as several nodes — writing the same rows at once, claims that never
// overlap, idempotency keys and unique indexes that hold across instances, signals that reach
// the other instances, and a database that goes away and comes back.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { SQL } from 'bun';
import { openStore, IdempotencyKeyTaken, type Store, type QueueEntry, type ContactRec, type AutomationRunRec } from '../../src/store';
import { SCHEMA_VERSION } from '../../src/store/pg/schema';
import type { PgStore } from '../../src/store/pg';
import { StoreUnavailable } from '../../src/errors';
import { newId, nowIso } from '../../src/ids';
import { postgres, startPgServer, type PgServer } from '../helpers/postgres';
import { until } from '../helpers/wait';
import { leaseRuns, RUN_LEASE_MS } from '../../src/automations/runner';
import { saveRun } from '../../src/automations/steps';

let pg: PgServer;
const opened: Store[] = [];

async function open(url: string): Promise<Store> {
  const s = await openStore({ dataDir: '/nonexistent', databaseUrl: url, retentionDays: 30, holdMs: 0 });
  opened.push(s);
  return s;
}

beforeAll(async () => {
  pg = await postgres();
});
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close().catch(() => {})));
});

const team = () => newId();
const contact = (t: string, email: string, extra: Partial<ContactRec> = {}): ContactRec =>
  ({ id: newId(), team_id: t, created_at: nowIso(), email, first_name: null, last_name: null, unsubscribed: false, properties: {}, ...extra }) as ContactRec;

describe('migrations', () => {
  test('nodes starting together migrate once, under the advisory lock; a second start finds the work done', async () => {
    const url = await pg.database();
    const stores = await Promise.all([open(url), open(url), open(url)]);
    const sql = new SQL(url);
    const rows = await sql.unsafe('SELECT version FROM schema_migrations ORDER BY version');
    expect(rows.map((r: { version: number }) => r.version)).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1));
    // Every node sees the same per-install secrets (made once, by whichever came first).
    expect(new Set(stores.map((s) => s.secret('links').toString('hex'))).size).toBe(1);
    await sql.close();
  });

  test('a database migrated by a newer Posthorn is refused, and left alone', async () => {
    const url = await pg.database();
    await open(url);
    const sql = new SQL(url);
    await sql.unsafe("INSERT INTO schema_migrations (version, name) VALUES (999, 'from the future')");
    await expect(open(url)).rejects.toThrow(/version 999, newer than this Posthorn knows/);
    expect((await sql.unsafe('SELECT count(*)::int AS n FROM schema_migrations'))[0].n).toBe(SCHEMA_VERSION + 1);
    await sql.close();
  });
});

describe('several instances (nodes) on one database', () => {
  let a: Store;
  let b: Store;
  beforeAll(async () => {
    const url = await pg.database();
    [a, b] = [await open(url), await open(url)];
  });

  test('read-modify-write from both at once loses no update (a unit that lost the race runs again)', async () => {
    const t = team();
    const c = contact(t, 'count@example.test', { properties: { n: { value: 0, type: 'number' } } });
    await a.write(async (tx) => tx.contacts.put(c));
    const bump = (s: Store) =>
      s.write(async (tx) => {
        const cur = (await tx.contacts.get(t, c.id))!;
        tx.contacts.put({ ...cur, properties: { n: { value: Number(cur.properties.n!.value) + 1, type: 'number' } } });
      });
    await Promise.all(Array.from({ length: 40 }, (_, i) => bump(i % 2 ? a : b)));
    expect((await a.contacts.get(t, c.id))!.properties.n!.value).toBe(40);
  });

  test('a unique index holds across instances: one contact per address, whoever creates it', async () => {
    const t = team();
    const create = (s: Store) =>
      s.write(async (tx) => {
        const found = await tx.contacts.find('email', 'same@example.test', t);
        if (found) return found.id;
        const c = contact(t, 'same@example.test');
        tx.contacts.put(c);
        return c.id;
      });
    const ids = await Promise.all(Array.from({ length: 10 }, (_, i) => create(i % 2 ? a : b)));
    expect(new Set(ids).size).toBe(1);
    expect(await a.contacts.count(t)).toBe(1);
  });

  test('claims never overlap: each due entry is taken by exactly one instance', async () => {
    const t = team();
    const now = Date.now();
    const entries: QueueEntry[] = Array.from({ length: 60 }, (_, i) => ({
      id: newId(),
      team_id: t,
      email_id: newId(),
      domain: `d${i % 3}.test`,
      recipients: [`r${i}@d${i % 3}.test`],
      attempts: 0,
      first_attempt_at: null,
      last_error: null,
    }));
    await a.write(async (tx) => {
      for (const e of entries) tx.queue.put(e, now - 1000);
    });
    const taken = new Map<string, number>();
    const claimer = async (s: Store) => {
      for (;;) {
        const got = await s.write(async (tx) => {
          const due = await tx.queue.due(Date.now(), 7);
          // The lease: moved to its next attempt time before the attempt.
          for (const { entry } of due) tx.queue.put({ ...entry, attempts: entry.attempts + 1 }, Date.now() + 600_000);
          return due.map((d) => d.entry.id);
        });
        if (!got.length) return;
        for (const id of got) taken.set(id, (taken.get(id) ?? 0) + 1);
      }
    };
    await Promise.all([claimer(a), claimer(b), claimer(a), claimer(b)]);
    expect(taken.size).toBe(60);
    expect([...taken.values()].every((n) => n === 1)).toBe(true);
    expect((await a.queue.stats(Date.now())).ready).toBe(0);
  });

  test('patient units go in groups: each commits with its group, one that throws is undone alone, a lease ends with its unit, counters add up', async () => {
    const t = team();
    const entry = (): QueueEntry => ({
      id: newId(),
      team_id: t,
      email_id: newId(),
      domain: 'group.test',
      recipients: ['r@group.test'],
      attempts: 0,
      first_attempt_at: null,
      last_error: null,
    });
    const [claimedOne, settledOne, thrownOne] = [entry(), entry(), entry()];
    const dims = { domain_id: 'dom', broadcast_id: null, site: 'grouped', email_id: newId() };
    const hour = Date.now();
    // Issued in one tick: a claim (lease), a unit that throws, 30 outcomes adding to one counter row.
    const units = [
      a.write(async (tx) => tx.queue.put(claimedOne, hour + 600_000), { patient: true, lease: true }),
      a.write(
        async (tx) => {
          tx.queue.put(thrownOne, hour);
          // Its write reaches the database with this read: the savepoint must undo it.
          await tx.contacts.get(t, 'nobody');
          throw new Error('refused');
        },
        { patient: true },
      ),
      a.write(async (tx) => tx.queue.put(settledOne, hour + 3_600_000), { patient: true }),
      ...Array.from({ length: 30 }, (_, i) =>
        a.write(
          async (tx) => {
            await tx.contacts.get(t, 'nobody');
            tx.metrics.add(t, hour, dims, { delivered: 1, ...(i % 3 ? {} : { sent: 1 }) });
            return i;
          },
          { patient: true },
        ),
      ),
    ];
    const settled = await Promise.allSettled(units);
    expect(settled[1]).toMatchObject({ status: 'rejected', reason: { message: 'refused' } });
    expect(settled.filter((r) => r.status === 'fulfilled').length).toBe(32);
    const sql = new SQL((a as PgStore).internals().env.opts.url);
    const rows: { id: string; node: string | null }[] = await sql.unsafe('SELECT id, node FROM queue WHERE id = ANY($1)', [
      [claimedOne.id, settledOne.id, thrownOne.id],
    ]);
    const node = new Map(rows.map((r) => [r.id, r.node]));
    // The claim's row is this node's lease; the unit after it in the group wrote none; the thrown one wrote nothing.
    expect(node.get(claimedOne.id)).toBeString();
    expect(node.has(settledOne.id)).toBe(true);
    expect(node.get(settledOne.id)).toBeNull();
    expect(node.has(thrownOne.id)).toBe(false);
    const buckets: Record<string, number>[] = [];
    await a.metrics.scan(t, hour - 3_600_000, hour + 3_600_000, (b) => buckets.push(b.counts));
    expect(buckets).toEqual([{ delivered: 30, sent: 10 }]);
    await sql.close();
  });

  test("automation runs are leased: each due run is taken by one instance, due again at the lease's end", async () => {
    const t = team();
    const now = Date.now();
    const runs: AutomationRunRec[] = Array.from(
      { length: 40 },
      () =>
        ({
          id: newId(),
          team_id: t,
          created_at: nowIso(),
          automation_id: newId(),
          contact_id: newId(),
          status: 'running',
          started_at: nowIso(),
          completed_at: null,
          trigger: { event: 'go', payload: {} },
          received: {},
          at: 'start',
          state: 'ready',
          resume: null,
          due: now - 1000,
          waiting_for: null,
          attempts: 0,
          rev: 0,
          steps: [],
        }) as AutomationRunRec,
    );
    await a.write(async (tx) => {
      for (const r of runs) saveRun(tx, null, r);
    });
    const taken = new Map<string, number>();
    const claimer = async (s: Store) => {
      for (;;) {
        const got = await leaseRuns(s, 6);
        if (!got.length) return;
        for (const c of got) {
          taken.set(c.id, (taken.get(c.id) ?? 0) + 1);
          expect(c.due).toBeGreaterThanOrEqual(now + RUN_LEASE_MS);
        }
      }
    };
    await Promise.all([claimer(a), claimer(b), claimer(a), claimer(b)]);
    expect(taken.size).toBe(40);
    expect([...taken.values()].every((n) => n === 1)).toBe(true);
    // Each run is due again when its lease ends (another node takes it up if this one died), its revision moved on.
    const run = (await b.automationRuns.get(t, runs[0]!.id))!;
    expect(run.due).toBeGreaterThanOrEqual(now + RUN_LEASE_MS);
    expect(run.rev).toBe(1);
    expect(await a.automationDue.due(now + RUN_LEASE_MS + 60_000, 100)).toContainEqual({ due: run.due!, team: t, id: run.id });
  });

  test('an idempotency key stored by two instances at once: one commits, the other is told', async () => {
    const t = team();
    const rec = { fingerprint: 'f', status: 200, body: { id: 'x' }, created_at: Date.now() };
    const results = await Promise.allSettled([a, b, a, b].map((s) => s.write(async (tx) => tx.idempotency.put(t, '/emails', 'k1', rec))));
    expect(results.filter((r) => r.status === 'fulfilled').length).toBe(1);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(IdempotencyKeyTaken);
    expect(await b.idempotency.get(t, '/emails', 'k1')).toEqual(rec);
    // An expired record is replaced, not a collision.
    const later = { ...rec, fingerprint: 'g', created_at: Date.now() + 25 * 3_600_000 };
    await b.write(async (tx) => tx.idempotency.put(t, '/emails', 'k1', later));
    expect((await a.idempotency.get(t, '/emails', 'k1', later.created_at))?.fingerprint).toBe('g');
  });

  test('work committed by one instance signals the others (LISTEN/NOTIFY); domain writes clear their caches', async () => {
    let heard = 0;
    b.on('outbox', () => heard++);
    const t = team();
    await a.write(async (tx) => tx.outbox.put(t, newId(), Date.now(), newId()));
    await until(() => heard > 0, 'the outbox signal on the other instance');
    // b caches the domain it read; a renames it; b reads the new name at once, not after the cache's 5 s.
    const d = { id: newId(), team_id: t, created_at: nowIso(), name: `n${Date.now()}.test` } as never as import('../../src/store').DomainRec;
    await a.write(async (tx) => tx.domains.put(d));
    expect((await b.domains.get(t, d.id))?.name).toBe(d.name);
    await a.write(async (tx) => tx.domains.put({ ...d, name: `renamed-${d.name}` }));
    await until(async () => (await b.domains.get(t, d.id))?.name === `renamed-${d.name}`, 'the cache of the other instance to be cleared', 4_000);
  });

  test('singleton jobs: one instance at a time; the other is told it was skipped', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let holding = false;
    const first = a.singleton('sweep-test', () => {
      holding = true;
      return held;
    });
    await until(() => holding, 'the first instance to hold the lock');
    expect(await b.singleton('sweep-test', async () => {})).toBe(false);
    release();
    expect(await first).toBe(true);
    expect(await b.singleton('sweep-test', async () => {})).toBe(true);
  });

  test("a sending limit holds across instances: the team's counts are locked while a unit reads them", async () => {
    const t = team();
    const now = Date.now();
    const take = (s: Store) =>
      s.write(async (tx) => {
        const used = await tx.sendCounts.used(t, now);
        if (used.hour >= 10) return false;
        tx.sendCounts.add(t, now, 1);
        return true;
      });
    const granted = await Promise.all(Array.from({ length: 30 }, (_, i) => take(i % 2 ? a : b)));
    expect(granted.filter(Boolean).length).toBe(10);
    expect(await a.sendCounts.used(t, now)).toEqual({ hour: 10, day: 10 });
  });

  test('TLS-RPT days: attempts on both instances add up, failure kinds merge', async () => {
    const t = team();
    const policy = { type: 'sts' as const, string: ['version: STSv1', 'mode: enforce'], mx_host: ['mx.dest.test'] };
    const failure = {
      result_type: 'certificate-expired' as never,
      receiving_mx_hostname: 'mx.dest.test',
      receiving_ip: '127.0.0.1',
      failure_reason_code: null,
      count: 1,
    };
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 ? a : b).write(async (tx) => tx.tlsReports.add(t, '2026-11-24', 'dest.test', policy, 2, i % 4 ? [] : [failure])),
      ),
    );
    const day = await a.tlsReports.get(t, '2026-11-24', 'dest.test');
    expect(day).toMatchObject({ team_id: t, day: '2026-11-24', domain: 'dest.test', success: 40, failure: 5 });
    expect(day!.failures).toEqual([{ ...failure, count: 5 }]);
    expect((await b.tlsReports.list(t, { limit: 10 })).map((d) => d.domain)).toEqual(['dest.test']);
  });

  test("a scan told that a domain is full ('domain') reads none of its later keys and finds the others' behind them", async () => {
    const t = team();
    const at = Date.now() - 60_000;
    const entry = (domain: string, i: number): QueueEntry => ({
      id: newId(),
      team_id: t,
      email_id: newId(),
      domain,
      recipients: [`r${i}@${domain}`],
      attempts: 0,
      first_attempt_at: null,
      last_error: null,
    });
    // A backlog deeper than a chunk of the scan, and one entry of another domain after it.
    const deep = Array.from({ length: 300 }, (_, i) => entry(`deep-${t}.test`, i));
    const other = entry(`other-${t}.test`, 0);
    await a.write(async (tx) => {
      for (const [i, e] of deep.entries()) tx.queue.put(e, at + i);
      tx.queue.put(other, at + 400);
    });
    const mine = new Set([...deep, other].map((e) => e.id));
    const asked: string[] = [];
    const due = await a.write((tx) =>
      tx.queue.due(Date.now(), 10, (domain, id) => {
        if (!mine.has(id)) return true;
        asked.push(id);
        return domain === deep[0]!.domain ? 'domain' : false;
      }),
    );
    expect(asked).toEqual([deep[0]!.id, other.id]);
    expect(due.map((d) => d.entry.id)).toEqual([other.id]);
  });

  test("held queue entries wait out of the due range; a team's entries list by destination", async () => {
    const t = team();
    const entry = (domain: string): QueueEntry => ({
      id: newId(),
      team_id: t,
      email_id: newId(),
      domain,
      recipients: [`x@${domain}`],
      attempts: 0,
      first_attempt_at: null,
      last_error: null,
    });
    const [held, free] = [{ ...entry('held.test'), held: 'destination' } as QueueEntry, entry('free.test')];
    await a.write(async (tx) => {
      tx.queue.put(held, 1);
      tx.queue.put(free, 1);
    });
    const due = await b.write(async (tx) => tx.queue.due(Date.now(), 10));
    expect(due.map((d) => d.entry.id)).not.toContain(held.id);
    expect((await a.queue.ofTeam(t, { limit: 10 })).map((q) => [q.entry.domain, q.due])).toEqual([
      ['free.test', 1],
      ['held.test', null],
    ]);
    await a.write(async (tx) => tx.queue.defer('free.test', free.id, 1, 5));
    expect((await a.queue.ofTeam(t, { limit: 10, destination: 'free.test' }))[0]!.due).toBe(5);
  });

  test("a new entry to a destination its team holds (held on another instance) is queued held; another team's is not", async () => {
    const [t, other] = [team(), team()];
    const entry = (team_id: string): QueueEntry => ({
      id: newId(),
      team_id,
      email_id: newId(),
      domain: 'hold.test',
      recipients: ['x@hold.test'],
      attempts: 0,
      first_attempt_at: null,
      last_error: null,
    });
    await a.write(async (tx) => tx.queueHolds.hold({ team_id: t, destination: 'hold.test', held_at: new Date().toISOString() }));
    const [mine, theirs] = [entry(t), entry(other)];
    await b.write(async (tx) => {
      tx.queue.add(mine, 1);
      tx.queue.add(theirs, 1);
    });
    expect((await a.queue.ofTeam(t, { limit: 10 })).map((q) => [q.entry.held, q.due])).toEqual([['destination', null]]);
    expect((await a.queue.ofTeam(other, { limit: 10 })).map((q) => [q.entry.held ?? null, q.due])).toEqual([[null, 1]]);
  });

  test('status: reachable, and the nodes seen (both instances are this process: one node)', async () => {
    expect(await a.status()).toEqual({ backend: 'postgres', reachable: true, nodes: 1 });
  });
});

describe('the database goes away and comes back', () => {
  test('writes and reads fail with StoreUnavailable while it is down, and work again by themselves after', async () => {
    const own = await startPgServer();
    try {
      const s = await open(await own.database());
      const t = team();
      await s.write(async (tx) => tx.contacts.put(contact(t, 'before@example.test')));
      own.stop();
      await expect(s.write(async (tx) => tx.contacts.put(contact(t, 'during@example.test')))).rejects.toBeInstanceOf(StoreUnavailable);
      await expect(s.contacts.count(t)).rejects.toBeInstanceOf(StoreUnavailable);
      expect((await s.status()).reachable).toBe(false);
      await own.start();
      await until(async () => (await s.status()).reachable, 'the store to reach the database again');
      await s.write(async (tx) => tx.contacts.put(contact(t, 'after@example.test')));
      expect(await s.contacts.count(t)).toBe(2);
    } finally {
      own.destroy();
    }
  });
});
