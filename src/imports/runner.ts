// Runs contact imports in the background (docs/api.md §12.9). The uploaded file is read from the
// import's persisted cursor, parsed as a stream by csv-parse, and applied a chunk of rows per
// unit of work; the same unit of work moves the cursor (byte offset after the chunk's last record)
// and the counts. A crash (kill -9) loses at most the chunk in hand, which nothing of was written:
// after the restart the import resumes at the cursor, and no row is counted or applied twice. The
// import queue (store.importQueue) is the durable to-do list: every import with rows left has an
// entry, and the scheduler's job (`releaseDue`, every second and so on start-up) starts those not
// running here.
import { Readable } from 'node:stream';
import { parse, type CsvError } from 'csv-parse';
import type { ContactImportRec, Store, Tx } from '../store';
import { nowIso } from '../ids';
import { log } from '../log';
import { StoreUnavailable } from '../errors';
import { propertyDefs } from '../contacts/properties';
import { applyItems, headerIndex, headerProblem, type HeaderIndex, type Item } from './rows';

/** Rows per unit of work: enough to share a disk flush, few enough to keep commits short. */
export const CHUNK_ROWS = 500;
/** Consecutive unexpected failures of one import before it is marked failed. */
const MAX_FAILURES = 3;

export type ImportOutcome = 'completed' | 'failed' | 'stopped' | 'skipped';

export interface RunOptions {
  /** Checked between chunks: shutting down stops after the chunk in hand (the rest resumes later). */
  signal?: AbortSignal;
  chunkRows?: number;
}

/** The import changed under a chunk (finished, deleted, or moved on by another run): nothing of it was written. */
class StaleChunk extends Error {}

/** Why csv-parse could not read a record, in words about the file (its positions are the parser's, not the file's). */
function unreadable(err: CsvError | undefined): string {
  switch (err?.code) {
    case 'CSV_QUOTE_NOT_CLOSED':
      return 'A quoted field is never closed: the rest of the file is part of it.';
    case 'CSV_INVALID_CLOSING_QUOTE':
      return 'A quote inside a quoted field is not doubled.';
    default:
      return `The row is not valid CSV (${err?.code ?? 'unknown error'}).`;
  }
}

/** Process an import from its cursor to the end of its file, or until `signal` stops it. */
export async function runImport(store: Store, team: string, id: string, opts: RunOptions = {}): Promise<ImportOutcome> {
  const imp = await store.contactImports.get(team, id);
  if (!imp || imp.status === 'completed' || imp.status === 'failed') {
    await store.write(async (tx) => tx.importQueue.remove(0, team, id));
    return 'skipped';
  }
  const size = opts.chunkRows ?? CHUNK_ROWS;
  const defs = await propertyDefs(store, team);
  const start = imp.cursor.offset;
  let offset = start;
  let header = imp.cursor.header;
  let index: HeaderIndex | null = header && headerIndex(header);
  // Records the parser had to skip, by position: each belongs to the chunk whose end is past it.
  const skipped: { at: number; error: string }[] = [];
  const parser = parse({
    bom: start === 0,
    info: true,
    relax_quotes: true,
    relax_column_count: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    on_skip: (err) => void skipped.push({ at: start + (typeof err?.bytes === 'number' ? err.bytes : 0), error: unreadable(err) }),
  });
  const source = Readable.from(store.importFiles.read(team, id, start));
  source.on('error', (e) => parser.destroy(e));
  source.pipe(parser);

  /** Commit the rows read so far (and the skips before `end`) with the cursor at `end`. */
  const commit = async (rows: { at: number; fields: string[] }[], end: number, done: boolean) => {
    const taken = done ? skipped.splice(0) : skipped.splice(0, skipped.filter((s) => s.at < end).length);
    const ordered = [...rows.map((r) => ({ at: r.at, item: { fields: r.fields } })), ...taken.map((s) => ({ at: s.at, item: { error: s.error } }))].sort(
      (a, b) => a.at - b.at,
    );
    const expected = offset;
    await store.write(async (tx) => {
      const cur = await tx.contactImports.get(team, id);
      if (!cur || cur.status === 'completed' || cur.status === 'failed' || cur.cursor.offset !== expected) throw new StaleChunk();
      const items: Item[] = ordered.map((o, i) => ({ row: cur.counts.total + i + 1, ...o.item }) as Item);
      const at = nowIso();
      const { counts, failures } = await applyItems(tx, cur, items, { header: index!, width: header!.length, defs, at });
      const next: ContactImportRec = { ...cur, status: done ? 'completed' : 'in_progress', counts, failures, cursor: { offset: end, header } };
      if (done) finish(tx, next, at);
      tx.contactImports.put(next);
    });
    offset = end;
  };

  try {
    let rows: { at: number; fields: string[] }[] = [];
    for await (const r of parser as AsyncIterable<{ record: string[]; info: { bytes: number } }>) {
      const end = start + r.info.bytes;
      if (header === null) {
        header = r.record;
        index = headerIndex(header);
        const problem = headerProblem(index, imp);
        if (problem) return await failImport(store, team, id, problem);
        continue;
      }
      // A line of blanks is no row (as an empty line is not).
      if (r.record.every((f) => f.trim() === '')) continue;
      rows.push({ at: end, fields: r.record });
      if (rows.length < size) continue;
      await commit(rows, end, false);
      rows = [];
      if (opts.signal?.aborted) return 'stopped';
    }
    if (header === null) return await failImport(store, team, id, 'The file is empty: it has no header row.');
    await commit(rows, imp.file_size, true);
    return 'completed';
  } catch (e) {
    if (e instanceof StaleChunk) return 'skipped';
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return failImport(store, team, id, 'The uploaded file is missing.');
    throw e;
  } finally {
    source.destroy();
    parser.destroy();
  }
}

/** In the last unit of work: the import is over; its queue entry and its file go. */
function finish(tx: Tx, imp: ContactImportRec, at: string): void {
  imp.completed_at = at;
  tx.importQueue.remove(0, imp.team_id, imp.id);
  tx.importFiles.drop(imp.team_id, imp.id);
}

/** The whole import cannot go on (no email column, no file): `failed`, with the reason. */
async function failImport(store: Store, team: string, id: string, reason: string): Promise<ImportOutcome> {
  await store.write(async (tx) => {
    const cur = await tx.contactImports.get(team, id);
    if (!cur || cur.status === 'completed' || cur.status === 'failed') return;
    const next: ContactImportRec = { ...cur, status: 'failed', failure_reason: reason };
    finish(tx, next, nowIso());
    tx.contactImports.put(next);
  });
  return 'failed';
}

export class ImportRunner {
  private readonly running = new Map<string, Promise<void>>();
  private readonly failures = new Map<string, number>();
  private readonly abort = new AbortController();

  constructor(private readonly svc: { store: Store }) {}

  /** Start (or resume) an import; no-op while it already runs here or after stop(). */
  start(team: string, id: string): void {
    const key = `${team}/${id}`;
    if (this.abort.signal.aborted || this.running.has(key)) return;
    // One node of a cluster runs an import at a time (store.singleton), as with broadcasts.
    let outcome: ImportOutcome = 'skipped';
    const run = this.svc.store
      .singleton(`import:${key}`, async () => {
        outcome = await runImport(this.svc.store, team, id, { signal: this.abort.signal });
      })
      .then(() => {
        this.failures.delete(key);
        if (outcome === 'completed' || outcome === 'failed') log.info(`import.${outcome}`, { team_id: team, import_id: id });
      })
      .catch(async (e) => {
        // The database out of reach (cluster mode) is no failure of this one: the next tick tries again.
        if (e instanceof StoreUnavailable) return void log.warn('store.unavailable', { job: key, error: e.reason });
        // Left queued and tried again by the next releaseDue; one that keeps failing is marked failed.
        const count = (this.failures.get(key) ?? 0) + 1;
        this.failures.set(key, count);
        log.error('import.run_failed', { team_id: team, import_id: id, failures: count, error: String((e as Error)?.stack ?? e) });
        if (count >= MAX_FAILURES) {
          this.failures.delete(key);
          await failImport(this.svc.store, team, id, `Processing failed ${count} times: ${(e as Error)?.message ?? e}`);
        }
      })
      .finally(() => this.running.delete(key));
    this.running.set(key, run);
  }

  /** The scheduler job: every import with rows left that is not running here starts. */
  async releaseDue(now = Date.now()): Promise<void> {
    if (this.abort.signal.aborted) return;
    for (const { team, id } of await this.svc.store.importQueue.due(now)) this.start(team, id);
  }

  /** Resolves once no import is running (tests). */
  async idle(): Promise<void> {
    while (this.running.size) await Promise.allSettled([...this.running.values()]);
  }

  /** Stop starting imports; running ones stop after their current chunk (they resume after a restart). */
  async stop(): Promise<void> {
    this.abort.abort();
    await this.idle();
  }
}
