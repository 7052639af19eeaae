// Exports (docs/api.md §4.1): a whole list — its filters applied as the list applies them — as
// one CSV or NDJSON file, streamed. The store is read page by page from a cursor, as a client
// paging through the list would, and the next page is read only when the client has taken the
// last one: the server holds one page at a time, whatever the size of the export.
import type { Page, PageQuery } from '../../store';
import { log } from '../../log';
import { csvRecord, type Cell } from './csv';

export type ExportFormat = 'csv' | 'ndjson';

/** Records read from the store per page (and written per chunk of the answer). */
export const EXPORT_PAGE = 500;

/**
 * A CSV column: a field of the row (a list of strings is one cell, its items joined by `, `), or
 * a header name and how to write the cell.
 */
export type Column<R> = (keyof R & string) | readonly [name: string, cell: (row: R) => Cell];

export interface ExportSpec<T extends { id: string }, R> {
  /** The file's name, without the date and extension: `emails`. */
  name: string;
  format: ExportFormat;
  /** A page of the records, newest first, older than `q.after`: a store's `page`, without a filter. */
  page(q: PageQuery): Promise<Page<T>>;
  /** The records the export keeps (the list's filters); every one when null. */
  keep: ((rec: T) => boolean) | null;
  /** A record as exported: one NDJSON line, and the row CSV's columns read. */
  row(rec: T): R;
  columns: readonly Column<R>[];
}

const CONTENT_TYPE: Record<ExportFormat, string> = {
  // RFC 4180 §3: the `header` parameter says the first record names the columns.
  csv: 'text/csv; charset=utf-8; header=present',
  ndjson: 'application/x-ndjson',
};

const nameOf = <R>(c: Column<R>) => (typeof c === 'string' ? c : c[0]);

function cellOf<R>(c: Column<R>, row: R): Cell {
  if (typeof c !== 'string') return c[1](row);
  const v = row[c];
  return Array.isArray(v) ? v.join(', ') : (v as Cell);
}

/** Let timers and sockets run between pages the filter emptied (a page read from LMDB resolves at once). */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The export as a streamed answer. The header and the first page are read before answering, so a
 * bad store read at the start is an error answer; a failure later cuts the connection before the
 * end of the body (chunked encoding never ends), so a client cannot mistake a part for the whole.
 */
export async function exportResponse<T extends { id: string }, R>(spec: ExportSpec<T, R>): Promise<Response> {
  const { format, columns, keep, row } = spec;
  const line = format === 'csv' ? (r: R) => csvRecord(columns.map((c) => cellOf(c, r))) : (r: R) => `${JSON.stringify(r)}\n`;
  const bytes = new TextEncoder();
  // Where the next page starts: the last record read. Ids never repeat and records created during
  // the export sort above the first page, so each record is read at most once.
  let after: string | undefined;
  let more = true;
  let canceled = false;
  /** The next page's lines: empty when the filter kept none of its records. */
  const next = async (): Promise<string> => {
    const page = await spec.page({ after, limit: EXPORT_PAGE });
    const last = page.data.at(-1);
    more = page.has_more && last !== undefined;
    after = last?.id;
    let out = '';
    for (const rec of page.data) if (!keep || keep(rec)) out += line(row(rec));
    return out;
  };

  const head = (format === 'csv' ? csvRecord(columns.map(nameOf)) : '') + (await next());
  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        if (head) controller.enqueue(bytes.encode(head));
        if (!more) controller.close();
      },
      // Called when the client has taken what was queued: one page per call (backpressure).
      async pull(controller) {
        try {
          while (more) {
            const chunk = await next();
            if (canceled) return;
            if (chunk) {
              controller.enqueue(bytes.encode(chunk));
              if (!more) controller.close();
              return;
            }
            await nextTurn();
          }
          controller.close();
        } catch (e) {
          log.error('export.failed', { export: spec.name, error: String((e as Error)?.stack ?? e) });
          throw e;
        }
      },
      cancel() {
        canceled = true;
        more = false;
      },
    },
    { highWaterMark: 1 },
  );
  const date = new Date().toISOString().slice(0, 10);
  return new Response(body, {
    headers: {
      'content-type': CONTENT_TYPE[format],
      // RFC 6266: a download, named.
      'content-disposition': `attachment; filename="${spec.name}-${date}.${format}"`,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    },
  });
}
