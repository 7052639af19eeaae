// Contact imports (docs/api.md §12.9): an uploaded CSV file becomes contacts in the background.
// POST /contacts/imports stores the file (streamed to disk and made durable, never held whole in
// memory), then creates the import and its queue entry in one unit of work; the runner
// (runner.ts) does the rest, a chunk of rows per unit of work.
import { writeOrRefuse, type ContactImportRec, type ImportStatus, type Store } from '../store';
import { nowIso } from '../ids';
import { checkTargets, type ImportOptions } from './options';

export { importOptions } from './options';
export { ImportRunner, runImport } from './runner';

/** The largest file an import takes (docs/api.md §12.9). */
export const MAX_IMPORT_BYTES = 50 * 1024 * 1024;

/**
 * Create the import of a stored file: its segments, topics and properties checked, the record
 * and its queue entry written in one unit of work. Throws the documented 422 (the caller then
 * discards the file).
 */
export async function createImport(store: Store, team: string, id: string, fileSize: number, o: ImportOptions): Promise<ContactImportRec> {
  const imp: ContactImportRec = {
    id,
    team_id: team,
    created_at: nowIso(),
    status: 'queued',
    completed_at: null,
    columns: o.columns,
    on_conflict: o.on_conflict,
    segments: o.segments,
    topics: o.topics,
    file_size: fileSize,
    counts: { total: 0, created: 0, updated: 0, skipped: 0, failed: 0 },
    cursor: { offset: 0, header: null },
    failures: [],
    failure_reason: null,
  };
  return writeOrRefuse(store, async (tx) => {
    const problem = await checkTargets(tx, team, o);
    if (problem) return problem;
    tx.contactImports.put(imp);
    tx.importQueue.add(0, team, id);
    return imp;
  });
}
