// The uploaded CSV files of contact imports, one per import, in the spill directory beside the
// database (`<data_dir>/content/contact_imports/`): streamed in and fsynced before the import's
// record commits, read from the import's cursor on, trashed once the import is over.
import type { LmdbEnv } from './env';
import type { SpillFiles } from './spill';
import type { ImportFilesTx } from '../interface';
import { COLLECTIONS } from '../collections';

/** The namespace of the files: the name of the collection whose records own them. */
export const IMPORT_FILES = COLLECTIONS.contactImports.table;
const PART = 'csv';

export class LmdbImportFiles implements ImportFilesTx {
  constructor(
    private readonly env: LmdbEnv,
    private readonly spill: SpillFiles,
    /** Is the import over or gone? A drop is carried out only if the unit of work saying so committed. */
    private readonly over: (team: string, id: string) => boolean,
  ) {}

  save(team: string, id: string, chunks: AsyncIterable<Uint8Array>, maxBytes: number): Promise<number | null> {
    return this.spill.writeStream(IMPORT_FILES, team, id, PART, chunks, maxBytes);
  }

  read(team: string, id: string, offset: number): AsyncIterable<Uint8Array> {
    return this.spill.stream(IMPORT_FILES, team, id, PART, offset);
  }

  discard(team: string, id: string): Promise<void> {
    return this.spill.remove(IMPORT_FILES, team, id, PART);
  }

  drop(team: string, id: string): void {
    this.env.assertWriting();
    // Once the unit of work has committed (a throw keeps the import going: then the file stays).
    void this.env.committed().then(() => {
      if (this.over(team, id)) this.spill.trash(IMPORT_FILES, team, id, [PART]);
    });
  }
}

/** The parts of an import's file, for backups. */
export const IMPORT_FILE_PARTS = [PART];
