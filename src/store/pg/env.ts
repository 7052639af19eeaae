// The PostgreSQL connection and units of work (docs/ARCHITECTURE.md §3, "Cluster mode").
//
// One unit of work is one SQL transaction (READ COMMITTED) on a connection of its own. Writes are
// queued and sent, pipelined, just before the unit's next read and before its COMMIT, so a unit
// that writes twenty rows pays one round trip for them. The promise resolves after COMMIT
// (synchronous_commit on: flushed to the WAL on disk).
//
// Several nodes write at once, where LMDB ran one unit after another. What keeps a unit's
// read-then-write as safe as it was there:
//   - rows of a collection read in a unit remember their version (`xmin`); writing such a row
//     back checks the version is still the one read, and a row read as absent is inserted only if
//     it still is — else the unit runs again (optimistic concurrency; the interface allows reruns);
//   - work tables (queue, outbox, due indexes, spool, triggers) are claimed with
//     `FOR UPDATE SKIP LOCKED`: two nodes never take the same row;
//   - unique indexes are unique constraints (checked at COMMIT); a unit that lost the race runs
//     again and finds the winner's row, as it would have after it on LMDB;
//   - counters are added in SQL (`INSERT … ON CONFLICT DO UPDATE`), never read and written back.
// Serialization failures, deadlocks and unique violations are retried with a short random wait.
//
// Patient units (`WriteOptions.patient`: the delivery engine's claims and outcomes) are grouped as
// the embedded store groups them (../lmdb/env.ts): those issued while this instance's last group is
// under way wait and go together in the next, one after another in ONE transaction, each in a
// savepoint of its own (a unit that throws is rolled back to it, alone). One COMMIT — one WAL flush
// — for the group, and the rows every outcome adds to (the hour's metric counters) locked by one
// transaction at a time instead of being waited for by each unit in turn.
import { SQL } from 'bun';
import { StoreUnavailable } from '../../errors';
import { IdempotencyKeyTaken, type Signal } from '../interface';
import { UnitChanges } from '../changes';

export type Row = Record<string, unknown>;

/** Where a repository sends its SQL: the pool (reads outside a unit of work) or one unit. */
export interface Exec {
  /** Rows of a query; inside a unit of work, its queued writes go first. */
  query<R = Row>(text: string, params?: unknown[]): Promise<R[]>;
  /** Queue a write (units of work only): sent before the unit's next read and its commit. */
  write(text: string, params?: unknown[]): void;
  /** The unit of work, or null outside one. */
  readonly unit: PgUnit | null;
}

/** Rows read in a unit, by `table/team/id`: their `xmin` then (null: there was none). */
type Versions = Map<string, string | null>;

/** SQLSTATEs worth running a unit of work again for: it lost a race, not its reason. */
const RETRY = new Set(['40001', '40P01', '23505']);
/** Raised by `posthorn_expect` (schema.ts) when an idempotency key was stored meanwhile. */
const KEY_TAKEN = 'PH001';
/** Attempts of one unit of work before its last error is the answer. */
const MAX_RUNS = 12;

/** Is `e` the database being out of reach (rather than a query's own failure)? */
export function unreachable(e: unknown): boolean {
  const err = e as { code?: string; errno?: string } | null;
  if (!err || typeof err !== 'object') return false;
  // Connection exceptions, too many connections, shutdown or recovery on the server (SQLSTATE).
  if (typeof err.errno === 'string' && /^(08|53300|57P0[1-3])/.test(err.errno)) return true;
  const code = err.code ?? '';
  return /^ERR_POSTGRES_(CONNECTION|.*TIMEOUT|.*CLOSED)/.test(code) || /^(ECONN|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH)/.test(code);
}

/** An error out of the database as the store's callers should see it. */
export function translate(e: unknown): unknown {
  if (unreachable(e)) return new StoreUnavailable(String((e as Error)?.message ?? e));
  if ((e as { errno?: string })?.errno === KEY_TAKEN) return new IdempotencyKeyTaken();
  return e;
}

function retryable(e: unknown): boolean {
  return RETRY.has((e as { errno?: string })?.errno ?? '');
}

/** An addition to a shared counter row: its upsert, given the counts as JSON text. */
export interface Addition {
  text: string;
  params: (counts: string) => unknown[];
  counts: Record<string, number>;
}

/**
 * Additions to counter rows that many units add to (the hour's metric buckets), summed per row and
 * written last, in the COMMIT's pipeline: such a row is locked from its upsert to the end of the
 * transaction, so written early it would make every other unit adding to it wait for this one's
 * reads and round trips, not only its commit. In key order, so that two transactions lock the
 * rows they share in the same order (no deadlock).
 */
export class Additions {
  private readonly rows = new Map<string, Addition>();
  /** Rows of one multi-row statement (`many`), by key: their counts summed, the rest the last's (`merge`). */
  private readonly batched = new Map<string, Batched>();

  add(key: string, a: Addition): void {
    const cur = this.rows.get(key);
    if (!cur) this.rows.set(key, { ...a, counts: { ...a.counts } });
    else for (const [k, v] of Object.entries(a.counts)) cur.counts[k] = (cur.counts[k] ?? 0) + v;
  }

  /** Add `row` to the rows `many` writes in one statement (a unit's or group's per-email counters). */
  addRow(many: Many, key: string, row: Record<string, unknown>, counts: Record<string, number>): void {
    const k = `${many.text}\u0001${key}`;
    const cur = this.batched.get(k);
    if (!cur) {
      this.batched.set(k, { many, key, row: { ...row }, counts: { ...counts } });
      return;
    }
    cur.row = many.merge(cur.row, row);
    for (const [c, v] of Object.entries(counts)) cur.counts[c] = (cur.counts[c] ?? 0) + v;
  }

  merge(other: Additions): void {
    for (const [key, a] of other.rows) this.add(key, a);
    for (const b of other.batched.values()) this.addRow(b.many, b.key, b.row, b.counts);
  }

  statements(): [string, unknown[]][] {
    const out: [string, unknown[]][] = [];
    // One statement per kind of row, its rows as one JSON parameter (one to encode, one to decode).
    const byText = new Map<string, Batched[]>();
    for (const b of this.batched.values()) {
      const rows = byText.get(b.many.text);
      if (rows) rows.push(b);
      else byText.set(b.many.text, [b]);
    }
    for (const [text, rows] of byText) {
      rows.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
      out.push([text, [JSON.stringify(rows.map((b) => ({ ...b.row, counts: b.counts })))]]);
    }
    for (const key of [...this.rows.keys()].sort()) {
      const a = this.rows.get(key)!;
      out.push([a.text, a.params(JSON.stringify(a.counts))]);
    }
    return out;
  }
}

/** A multi-row upsert of counter rows: `text` reads them from `$1` (a JSON array); `merge` folds a row into an earlier one of the same key. */
export interface Many {
  text: string;
  merge(earlier: Record<string, unknown>, later: Record<string, unknown>): Record<string, unknown>;
}

interface Batched {
  many: Many;
  key: string;
  row: Record<string, unknown>;
  counts: Record<string, number>;
}

/** One unit of work: a transaction (or a savepoint of a group's) on a reserved connection, its queued writes and what follows its commit. */
export class PgUnit implements Exec {
  private pending: [string, unknown[]][] = [];
  /** Whether anything of this unit reached the database (else a unit that threw has nothing to roll back). */
  sent = false;
  /** Its additions to shared counters, written with the COMMIT (a group's: with the group's). */
  readonly additions = new Additions();
  readonly versions: Versions = new Map();
  /** Rows this unit has written (no version check needed any more: it holds their lock). */
  readonly written = new Set<string>();
  readonly after: (() => void)[] = [];
  readonly signals = new Set<Signal>();
  /** Changes for the dashboard's live stream (Tx.changed), told to every node with the signals. */
  readonly changes = new UnitChanges();
  /** Names of the caches (domains, API keys) to clear on every node once this unit commits. */
  readonly stale = new Set<string>();

  constructor(private readonly conn: SQL) {}

  get unit(): PgUnit {
    return this;
  }

  write(text: string, params: unknown[] = []): void {
    this.pending.push([text, params]);
  }

  async query<R = Row>(text: string, params: unknown[] = []): Promise<R[]> {
    const results = await this.send([...this.pending.splice(0), [text, params]]);
    return results[results.length - 1] as R[];
  }

  /** Send the queued writes and `tail` in one pipeline; the first failure, in order, is the error. */
  async send(batch: [string, unknown[]][]): Promise<unknown[]> {
    this.sent = true;
    const settled = await Promise.allSettled(batch.map(([t, p]) => this.conn.unsafe(t, p)));
    const failed = settled.find((s) => s.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value);
  }

  /** Remember the version of a row read here (the first read counts). */
  saw(key: string, version: string | null): void {
    if (!this.written.has(key) && !this.versions.has(key)) this.versions.set(key, version);
  }

  /** The queued writes, the notification of other nodes, COMMIT: one pipeline. */
  async commit(notify: string | null): Promise<void> {
    const tail: [string, unknown[]][] = notify === null ? [] : [['SELECT pg_notify($1, $2)', [CHANNEL, notify]]];
    await this.end([...this.pending.splice(0), ...tail], this.additions);
  }

  /** `batch`, the additions, COMMIT: one pipeline. */
  async end(batch: [string, unknown[]][], additions: Additions): Promise<void> {
    const results = await this.send([...batch, ...additions.statements(), ['COMMIT', []]]);
    // COMMIT of a transaction that failed answers ROLLBACK without an error.
    const done = results[results.length - 1] as { command?: string };
    if (done?.command && done.command !== 'COMMIT') throw Object.assign(new Error('the transaction was rolled back'), { errno: '40001' });
  }

  /** A grouped unit's end: its queued writes and the release of its savepoint, one pipeline (its notification goes with the group's COMMIT). */
  async release(): Promise<void> {
    await this.send([...this.pending.splice(0), [`RELEASE SAVEPOINT ${SAVEPOINT}`, []]]);
  }

  /** Statements queued and not sent (a grouped unit that threw before its first read). */
  unsent(): [string, unknown[]][] {
    return this.pending.splice(0);
  }
}

/**
 * Groups of patient units under way at once, each its own transaction on its own connection: a
 * group's units run one after another, round trip after round trip, so a second group works
 * while the first waits for the database (and for its COMMIT's flush).
 */
const GROUPS = 4;

/** The savepoint of each unit of a group (one at a time: released before the next is made). */
const SAVEPOINT = 'unit';

/** A patient unit of work waiting for the next group. */
interface Waiting {
  fn: (u: PgUnit) => Promise<unknown>;
  notify: (u: PgUnit) => string | null;
  resolve: (v: { result: unknown; unit: PgUnit }) => void;
  reject: (e: unknown) => void;
}

/** The LISTEN/NOTIFY channel carrying store signals between nodes (signals.ts). */
export const CHANNEL = 'posthorn_store';

export interface PgEnvOptions {
  url: string;
  /** Connections for units of work, and for reads outside them (two pools: a read never waits on units). */
  writers?: number;
  readers?: number;
}

export class PgEnv implements Exec {
  /** Units of work. */
  readonly sql: SQL;
  /** Reads outside units of work (a unit may call code that reads through the store itself). */
  readonly reads: SQL;
  readonly unit = null;

  constructor(readonly opts: PgEnvOptions) {
    const common = { url: opts.url, connectionTimeout: 5, idleTimeout: 60, connection: { application_name: 'posthorn' } };
    this.sql = new SQL({ ...common, max: opts.writers ?? 10 });
    this.reads = new SQL({ ...common, max: opts.readers ?? 6 });
  }

  async query<R = Row>(text: string, params: unknown[] = []): Promise<R[]> {
    try {
      return (await this.reads.unsafe(text, params)) as R[];
    } catch (e) {
      throw translate(e);
    }
  }

  write(): void {
    throw new Error('store write outside a unit of work (use store.write)');
  }

  /** A connection of the units' pool for a transaction the caller runs itself (a streamed upload). */
  async reserve(): Promise<SQL & { release(): void }> {
    try {
      return (await this.sql.reserve()) as SQL & { release(): void };
    } catch (e) {
      throw translate(e);
    }
  }

  /** Patient units waiting for the next group, and the groups under way (header). */
  private queued: Waiting[] = [];
  private grouping = 0;

  /**
   * Run `fn` in a transaction, again (up to MAX_RUNS) when it loses a race; resolves with its
   * result and its unit after COMMIT. `notify` names what to tell other nodes, from the unit.
   * `patient`: it may wait for the group under way and go with the next (header).
   */
  transaction<T>(fn: (u: PgUnit) => Promise<T>, notify: (u: PgUnit) => string | null, patient = false): Promise<{ result: T; unit: PgUnit }> {
    if (!patient) return this.alone(fn, notify);
    return new Promise((resolve, reject) => {
      this.queued.push({ fn, notify, resolve, reject } as Waiting);
      // The units issued by the same task join the first: a microtask runs after all of them.
      if (this.queued.length === 1 && this.grouping < GROUPS) queueMicrotask(() => this.nextGroup());
    });
  }

  private nextGroup(): void {
    if (!this.queued.length || this.grouping >= GROUPS) return;
    const group = this.queued;
    this.queued = [];
    this.grouping++;
    const run = group.length === 1 ? this.alone(group[0]!.fn, group[0]!.notify).then(group[0]!.resolve, group[0]!.reject) : this.group(group);
    void run.finally(() => {
      this.grouping--;
      this.nextGroup();
    });
  }

  /**
   * The units of `group` one after another in one transaction, each in a savepoint. A unit that
   * throws is rolled back to its savepoint and fails alone; one that lost a race (RETRY), or all
   * of them when the COMMIT did, run again each on its own (`alone`, with its waits between runs).
   */
  private async group(group: Waiting[]): Promise<void> {
    let conn: SQL & { release(): void };
    try {
      conn = (await this.sql.reserve()) as SQL & { release(): void };
    } catch (e) {
      for (const w of group) w.reject(translate(e));
      return;
    }
    const again: Waiting[] = [];
    const done: { w: Waiting; result: unknown; unit: PgUnit }[] = [];
    const additions = new Additions();
    /** The notifications of the units that ran, sent by one statement with the COMMIT. */
    const notes: string[] = [];
    let begun = false;
    /** The first unit of the group not yet run to its answer. */
    let next = 0;
    try {
      for (const w of group) {
        const unit = new PgUnit(conn);
        if (!begun) unit.write('BEGIN');
        unit.write(`SAVEPOINT ${SAVEPOINT}`);
        try {
          const result = await w.fn(unit);
          await unit.release();
          begun = true;
          done.push({ w, result, unit });
          const n = w.notify(unit);
          if (n !== null) notes.push(n);
          next++;
        } catch (e) {
          next++;
          if (retryable(e)) again.push(w);
          else w.reject(translate(e));
          // Thrown before its first read: nothing of it was sent (BEGIN goes with the next).
          if (!unit.sent) {
            unit.unsent();
            continue;
          }
          begun = true;
          // The connection failing ends the group (below); else this unit alone is undone.
          if (unreachable(e)) throw e;
          await conn.unsafe(`ROLLBACK TO SAVEPOINT ${SAVEPOINT}`);
        }
      }
      if (done.length) {
        // From here the group's fate is the COMMIT's: whoever ran goes with it.
        next = -1;
        for (const d of done) additions.merge(d.unit.additions);
        await new PgUnit(conn).end(notes.length ? [['SELECT pg_notify($1, n) FROM unnest($2::text[]) n', [CHANNEL, notes]]] : [], additions);
      } else if (begun) await conn.unsafe('ROLLBACK');
    } catch (e) {
      if (next >= 0) {
        // The group broke before its COMMIT was sent, so nothing of it is committed: the units
        // that ran and those not run yet go again on their own.
        await conn.unsafe('ROLLBACK').catch(() => {});
        again.push(...done.splice(0).map((d) => d.w), ...group.slice(next));
      }
      // As for a unit alone: a lost race (a deferred unique check) runs again, anything else is the answer.
      else
        for (const d of done.splice(0))
          if (retryable(e)) again.push(d.w);
          else d.w.reject(translate(e));
    } finally {
      conn.release();
    }
    for (const d of done) d.w.resolve({ result: d.result, unit: d.unit });
    // Not awaited: the next group need not wait for their reruns.
    for (const w of again) void this.alone(w.fn, w.notify).then(w.resolve, w.reject);
  }

  private async alone<T>(fn: (u: PgUnit) => Promise<T>, notify: (u: PgUnit) => string | null): Promise<{ result: T; unit: PgUnit }> {
    for (let run = 1; ; run++) {
      let conn: (SQL & { release(): void }) | null = null;
      let unit: PgUnit | null = null;
      try {
        conn = (await this.sql.reserve()) as SQL & { release(): void };
        unit = new PgUnit(conn);
        unit.write('BEGIN');
        const result = await fn(unit);
        await unit.commit(notify(unit));
        return { result, unit };
      } catch (e) {
        if (conn && unit) await conn.unsafe('ROLLBACK').catch(() => {});
        if (run < MAX_RUNS && retryable(e)) {
          // Two units that collided would collide again at once: wait a little, each its own time.
          await Bun.sleep(Math.random() * Math.min(200, 2 ** run));
          continue;
        }
        throw translate(e);
      } finally {
        conn?.release();
      }
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.sql.close({ timeout: 5 }), this.reads.close({ timeout: 5 })]);
  }
}

/** The unit of work of `exec`; writes outside one are refused loudly (they would escape its atomicity). */
export function unitOf(exec: Exec): PgUnit {
  if (!exec.unit) throw new Error('store write outside a unit of work (use store.write)');
  return exec.unit;
}

/** In a unit of work, rows claimed for it: locked until it ends, and passed over by other nodes meanwhile. */
export const claimed = (exec: Exec) => (exec.unit ? ' FOR UPDATE SKIP LOCKED' : '');
