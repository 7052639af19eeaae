// Typed collections on PostgreSQL: one table per collection (schema.ts), (team, id) → the record
// as JSON text, a column per declared index, `expires` for retention. Pagination reads ids in
// order from a cursor, as the LMDB backend's range scans do (docs/api.md §4).
//
// Inside a unit of work a read remembers each row's version; `put` and `remove` of a row read
// there check it is unchanged (env.ts), so a read-modify-write never overwrites another node's.
import type { Readable } from 'node:stream';
import { unitOf, type Exec, type Row } from './env';
import type { Contents, ContentsTx, Page, PageQuery, Rec, RecordsTx } from '../interface';
import type { IndexDef } from '../collections';

/** A collection as ../collections.ts declares it, made for this backend (its table exists: schema.ts). */
export interface CollectionDef<T extends Rec, I extends string = never> {
  table: string;
  indexes?: IndexDef<T, I>[];
  /** Expiry time (ms) of a record, or null to keep it. */
  expiresAt?: ((r: T) => number | null) | null;
  /** Tables holding what goes with a record (its body), keyed by the same (team, id). */
  owns?: string[];
  /** The in-memory cache (cached.ts) its writes make stale, on every node. */
  cache?: string;
}

/** Key of a row among a unit's versions. */
export const rowKey = (table: string, team: string, id: string) => `${table}\u0000${team}\u0000${id}`;

export function parse<T>(v: unknown): T {
  return (typeof v === 'string' ? JSON.parse(v) : v) as T;
}

/** Rows per read while a page is being filled (a `map` may leave records out). */
const CHUNK = 200;

/**
 * One page, newest first, of the rows `where` selects (ordered by `id`): `after` reads down
 * from its cursor, `before` up from its cursor and shows the nearest `limit`, newest first.
 */
export async function pageOf<R>(
  exec: Exec,
  select: string,
  where: string,
  params: unknown[],
  q: PageQuery,
  defaultLimit: number | null,
  load: (row: Row) => R | undefined,
): Promise<Page<R>> {
  const limit = q.limit ?? defaultLimit ?? Infinity;
  const upwards = q.before !== undefined;
  let cursor = upwards ? q.before : q.after;
  const data: R[] = [];
  let has_more = false;
  const n = params.length;
  // The page and one more first; more only when `load` left records out.
  let chunk = Number.isFinite(limit) ? limit + 1 : 1000;
  for (; ; chunk = Math.max(chunk, CHUNK)) {
    const cmp = cursor === undefined ? '' : ` AND id ${upwards ? '>' : '<'} $${n + 1}`;
    const rows = await exec.query(
      `${select} WHERE ${where}${cmp} ORDER BY id ${upwards ? 'ASC' : 'DESC'} LIMIT ${chunk}`,
      cursor === undefined ? params : [...params, cursor],
    );
    for (const row of rows) {
      const item = load(row);
      if (item === undefined) continue;
      if (data.length === limit) {
        has_more = true;
        break;
      }
      data.push(item);
    }
    if (has_more || rows.length < chunk) break;
    cursor = String(rows[rows.length - 1]!.id);
  }
  if (upwards) data.reverse();
  return { has_more, data };
}

export class PgCollection<T extends Rec, I extends string = never> implements RecordsTx<T, I> {
  readonly indexes: IndexDef<T, I>[];
  private readonly upsertSql: string;
  private readonly updateSql: string;
  private readonly insertSql: string;
  private readonly upsertAllSql: string;

  constructor(
    private readonly def: CollectionDef<T, I>,
    private readonly exec: Exec,
    /** The statements, made once per definition and shared by every unit's copy. */
    sqlOf?: PgCollection<T, I>,
  ) {
    this.indexes = def.indexes ?? [];
    if (sqlOf) {
      this.upsertSql = sqlOf.upsertSql;
      this.updateSql = sqlOf.updateSql;
      this.insertSql = sqlOf.insertSql;
      this.upsertAllSql = sqlOf.upsertAllSql;
      return;
    }
    const t = def.table;
    const cols = ['team', 'id', 'value', 'expires', ...this.indexes.map((i) => `i_${i.name}`)];
    const vals = cols.map((c, i) => (c === 'value' ? `$${i + 1}::text::json` : `$${i + 1}`)).join(', ');
    const set = cols
      .slice(2)
      .map((c) => `${c} = excluded.${c}`)
      .join(', ');
    this.upsertSql = `INSERT INTO ${t} (${cols.join(', ')}) VALUES (${vals}) ON CONFLICT (team, id) DO UPDATE SET ${set}`;
    const assign = cols
      .slice(2)
      .map((c, i) => `${c} = ${c === 'value' ? `$${i + 3}::text::json` : `$${i + 3}`}`)
      .join(', ');
    this.updateSql = `WITH w AS (UPDATE ${t} SET ${assign} WHERE team = $1 AND id = $2 AND xmin::text = $${cols.length + 1} RETURNING 1) SELECT posthorn_expect(count(*), 1) FROM w`;
    this.insertSql = `WITH w AS (INSERT INTO ${t} (${cols.join(', ')}) VALUES (${vals}) ON CONFLICT (team, id) DO NOTHING RETURNING 1) SELECT posthorn_expect(count(*), 1) FROM w`;
    // The rows of `putAll`: one JSON parameter; `value` a json column keeps each record's text as written.
    const types = cols.map((c) => `${c} ${c === 'value' ? 'json' : c === 'expires' ? 'bigint' : 'text'}`).join(', ');
    this.upsertAllSql = `INSERT INTO ${t} (${cols.join(', ')}) SELECT ${cols.join(', ')} FROM json_to_recordset($1::text::json) AS r(${types}) ON CONFLICT (team, id) DO UPDATE SET ${set}`;
  }

  /** This collection in a unit of work (or back on the pool). */
  bind(exec: Exec): PgCollection<T, I> {
    return new PgCollection(this.def, exec, this);
  }

  get table(): string {
    return this.def.table;
  }

  /** Rows read into records, their versions noted in a unit of work. */
  private records(rows: Row[]): T[] {
    const unit = this.exec.unit;
    return rows.map((row) => {
      const rec = parse<T>(row.value);
      unit?.saw(rowKey(this.def.table, rec.team_id, rec.id), String(row.v));
      return rec;
    });
  }

  private select(where: string, params: unknown[], tail = ''): Promise<T[]> {
    return this.exec
      .query(`SELECT value::text AS value, xmin::text AS v FROM ${this.def.table} WHERE ${where}${tail}`, params)
      .then((rows) => this.records(rows));
  }

  async get(team: string, id: string): Promise<T | undefined> {
    const [rec] = await this.select('team = $1 AND id = $2', [team, id]);
    if (!rec) this.exec.unit?.saw(rowKey(this.def.table, team, id), null);
    return rec;
  }

  async find(index: I, value: string, team?: string): Promise<T | undefined> {
    const def = this.index(index);
    if (def.global) return (await this.select(`i_${def.name} = $1`, [value], ' LIMIT 1'))[0];
    if (team === undefined) throw new Error(`${this.def.table}.${def.name}: team required`);
    return (await this.select(`team = $1 AND i_${def.name} = $2`, [team, value], ' LIMIT 1'))[0];
  }

  async findAll(index: I, value: string, team: string): Promise<T[]> {
    return this.select(`team = $1 AND i_${this.index(index).name} = $2`, [team, value], ' ORDER BY id');
  }

  async page<R = T>(team: string, q: PageQuery, defaultLimit: number | null, map?: (r: T) => R | undefined): Promise<Page<R>> {
    return this.pageWhere('team = $1', [team], q, defaultLimit, map);
  }

  async pageBy<R = T>(index: I, value: string, team: string, q: PageQuery, defaultLimit: number | null, map?: (r: T) => R | undefined): Promise<Page<R>> {
    return this.pageWhere(`team = $1 AND i_${this.index(index).name} = $2`, [team, value], q, defaultLimit, map);
  }

  private pageWhere<R>(where: string, params: unknown[], q: PageQuery, defaultLimit: number | null, map?: (r: T) => R | undefined): Promise<Page<R>> {
    return pageOf(this.exec, `SELECT id, value::text AS value, xmin::text AS v FROM ${this.def.table}`, where, params, q, defaultLimit, (row) => {
      const [rec] = this.records([row]);
      return map ? map(rec!) : (rec as unknown as R);
    });
  }

  /**
   * In a unit of work, a team's rows read by `all` until the unit writes to the collection: the
   * events of a claim read the team's webhooks once, not once per email (a round trip each).
   */
  private readonly allRows = new Map<string, Row[]>();

  async all(team: string): Promise<T[]> {
    const sql = `SELECT value::text AS value, xmin::text AS v FROM ${this.def.table} WHERE team = $1 ORDER BY id`;
    if (!this.exec.unit) return this.records(await this.exec.query(sql, [team]));
    let rows = this.allRows.get(team);
    if (!rows) {
      rows = await this.exec.query(sql, [team]);
      this.allRows.set(team, rows);
    }
    return this.records(rows);
  }

  async count(team: string): Promise<number> {
    const [row] = await this.exec.query(`SELECT count(*)::int AS n FROM ${this.def.table} WHERE team = $1`, [team]);
    return Number(row!.n);
  }

  async everything(): Promise<T[]> {
    return this.select('true', [], ' ORDER BY team, id');
  }

  /** True when the collection holds no record at all. */
  async isEmpty(): Promise<boolean> {
    return (await this.exec.query(`SELECT 1 FROM ${this.def.table} LIMIT 1`)).length === 0;
  }

  put(rec: T): void {
    const unit = unitOf(this.exec);
    this.allRows.clear();
    const key = rowKey(this.def.table, rec.team_id, rec.id);
    const values = [rec.team_id, rec.id, JSON.stringify(rec), this.def.expiresAt?.(rec) ?? null, ...this.indexes.map((i) => i.value(rec) ?? null)];
    const seen = unit.written.has(key) ? undefined : unit.versions.get(key);
    // Read here and not written yet: only if nobody changed it (or created it) since.
    if (seen === undefined) unit.write(this.upsertSql, values);
    else if (seen === null) unit.write(this.insertSql, values);
    else unit.write(this.updateSql, [...values, seen]);
    unit.written.add(key);
    if (this.def.cache) unit.stale.add(this.def.cache);
  }

  /**
   * `put` of each record, in one statement: for records not read in this unit (nothing to check),
   * the request log's entries — one statement for them all, not one each. A record read here
   * goes through `put` (its version is checked).
   */
  putAll(recs: T[]): void {
    const unit = unitOf(this.exec);
    const rows = new Map<string, Record<string, unknown>>();
    for (const rec of recs) {
      const key = rowKey(this.def.table, rec.team_id, rec.id);
      if (!unit.written.has(key) && unit.versions.has(key)) {
        this.put(rec);
        continue;
      }
      // One row per key, the last one (an upsert may not touch a row twice in one statement).
      rows.delete(key);
      const row: Record<string, unknown> = { team: rec.team_id, id: rec.id, value: rec, expires: this.def.expiresAt?.(rec) ?? null };
      for (const i of this.indexes) row[`i_${i.name}`] = i.value(rec) ?? null;
      rows.set(key, row);
      unit.written.add(key);
    }
    if (!rows.size) return;
    this.allRows.clear();
    unit.write(this.upsertAllSql, [JSON.stringify([...rows.values()])]);
    if (this.def.cache) unit.stale.add(this.def.cache);
  }

  remove(team: string, id: string): void {
    const unit = unitOf(this.exec);
    this.allRows.clear();
    const key = rowKey(this.def.table, team, id);
    const seen = unit.written.has(key) ? undefined : unit.versions.get(key);
    const t = this.def.table;
    if (typeof seen === 'string')
      unit.write(`WITH w AS (DELETE FROM ${t} WHERE team = $1 AND id = $2 AND xmin::text = $3 RETURNING 1) SELECT posthorn_expect(count(*), 1) FROM w`, [
        team,
        id,
        seen,
      ]);
    else unit.write(`DELETE FROM ${t} WHERE team = $1 AND id = $2`, [team, id]);
    for (const owned of this.def.owns ?? []) unit.write(`DELETE FROM ${owned} WHERE team = $1 AND id = $2`, [team, id]);
    unit.written.add(key);
    if (this.def.cache) unit.stale.add(this.def.cache);
  }

  /**
   * Delete up to `batch` expired records (with what they own) in one transaction of `exec`, a
   * unit of work of the sweep. Resolves to how many.
   */
  async sweep(exec: Exec, now: number, batch: number): Promise<number> {
    const t = this.def.table;
    const owned = (this.def.owns ?? []).map((o, i) => `, o${i} AS (DELETE FROM ${o} x USING d WHERE x.team = d.team AND x.id = d.id)`).join('');
    const [row] = await exec.query(
      `WITH d AS (DELETE FROM ${t} WHERE (team, id) IN (SELECT team, id FROM ${t} WHERE expires <= $1 ORDER BY expires LIMIT ${batch}) RETURNING team, id)${owned} SELECT count(*)::int AS n FROM d`,
      [now],
    );
    return Number(row!.n);
  }

  private index(name: I): IndexDef<T, I> {
    const def = this.indexes.find((d) => d.name === name);
    if (!def) throw new Error(`${this.def.table}: no index ${name}`);
    return def;
  }
}

/** What a stored body holds besides text: the message bytes and attachment payloads. */
interface ByteFields {
  raw?: Uint8Array;
  files: Record<string, Uint8Array>;
}

/** Where each attachment lies in the `files` column: [offset, length]. */
type FileMap = Record<string, [number, number]>;

const bytes = (v: unknown): Uint8Array | undefined => (v == null ? undefined : v instanceof Uint8Array ? v : new Uint8Array(v as ArrayBuffer));

/** A body from its row: the text fields' JSON, the message bytes, the attachments cut out of `files`. */
function whole<C extends ByteFields>(row: Row): C {
  const { _files, ...rest } = parse<{ _files: FileMap }>(row.value);
  const all = bytes(row.files) ?? new Uint8Array(0);
  const files: Record<string, Uint8Array> = {};
  for (const [att, [off, len]] of Object.entries(_files)) files[att] = all.subarray(off, off + len);
  const out = { ...rest, files } as unknown as C;
  const raw = bytes(row.raw);
  if (raw) out.raw = raw;
  return out;
}

/**
 * Bodies kept apart from their records ((team, id) → content). The text fields are JSON; the
 * message bytes are a column, the attachments one column end to end with their places noted, so
 * that a download reads one attachment (substring of an out-of-line value) and a size is known
 * without reading any. Nothing is kept in files: every node reads the same database.
 */
export class PgContents<C extends ByteFields> implements ContentsTx<C>, Contents<C> {
  constructor(
    readonly table: string,
    private readonly exec: Exec,
  ) {}

  bind(exec: Exec): PgContents<C> {
    return new PgContents(this.table, exec);
  }

  async get(team: string, id: string): Promise<C | undefined> {
    const [row] = await this.exec.query(`SELECT value::text AS value, raw, files FROM ${this.table} WHERE team = $1 AND id = $2`, [team, id]);
    return row && whole<C>(row);
  }

  async raw(team: string, id: string): Promise<Uint8Array | undefined> {
    const [row] = await this.exec.query(`SELECT raw FROM ${this.table} WHERE team = $1 AND id = $2`, [team, id]);
    return bytes(row?.raw);
  }

  async byteSize(team: string, id: string): Promise<number | undefined> {
    const [row] = await this.exec.query(
      `SELECT coalesce(octet_length(raw), 0) + coalesce(octet_length(files), 0) AS n FROM ${this.table} WHERE team = $1 AND id = $2`,
      [team, id],
    );
    return row ? Number(row.n) : undefined;
  }

  async sized(team: string, id: string, below: number): Promise<{ size: number; content?: C } | undefined> {
    // The byte columns' lengths come from their headers (out-of-line values are not read for them);
    // the columns themselves only when small.
    const [row] = await this.exec.query(
      `SELECT n, CASE WHEN n < $3 THEN value::text END AS value, CASE WHEN n < $3 THEN raw END AS raw, CASE WHEN n < $3 THEN files END AS files
       FROM (SELECT coalesce(octet_length(raw), 0) + coalesce(octet_length(files), 0) AS n, value, raw, files FROM ${this.table} WHERE team = $1 AND id = $2) c`,
      [team, id, below],
    );
    if (!row) return undefined;
    const size = Number(row.n);
    return size < below ? { size, content: whole<C>(row) } : { size };
  }

  async file(team: string, id: string, attachment: string): Promise<Uint8Array | undefined> {
    const [row] = await this.exec.query(
      `SELECT value->'_files'->$3 IS NOT NULL AS has,
              substring(files FROM ((value->'_files'->$3->>0)::int + 1) FOR (value->'_files'->$3->>1)::int) AS bytes
         FROM ${this.table} WHERE team = $1 AND id = $2`,
      [team, id, attachment],
    );
    if (!row?.has) return undefined;
    return bytes(row.bytes) ?? new Uint8Array(0);
  }

  /** Bodies are rows: read whole, as `get` reads them. */
  async getOpening(team: string, id: string): Promise<{ content: C; open: Record<string, () => Readable> } | undefined> {
    const content = await this.get(team, id);
    return content && { content, open: {} };
  }

  /** Nothing to stage: the bytes go to the database in the unit of work that names them. */
  async stage(): Promise<void> {}
  unstage(): void {}

  put(team: string, id: string, content: C): void {
    const unit = unitOf(this.exec);
    const { raw, files, ...rest } = content;
    const at: FileMap = {};
    let size = 0;
    for (const [att, b] of Object.entries(files)) {
      at[att] = [size, b.byteLength];
      size += b.byteLength;
    }
    const joined = new Uint8Array(size);
    for (const [att, b] of Object.entries(files)) joined.set(b, at[att]![0]);
    unit.write(
      `INSERT INTO ${this.table} (team, id, value, raw, files) VALUES ($1, $2, $3::text::json, $4, $5)
       ON CONFLICT (team, id) DO UPDATE SET value = excluded.value, raw = excluded.raw, files = excluded.files`,
      [team, id, JSON.stringify({ ...rest, _files: at }), raw ?? null, joined],
    );
  }
}
