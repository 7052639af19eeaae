// The uploaded CSV files of contact imports, on PostgreSQL: slices of about 1 MB, (team, id,
// start) → bytes, written in one transaction that commits before the import's record does (the
// file is durable first, as with LMDB's files), read from the import's cursor on, removed in the
// unit of work that ends the import.
import { unitOf, type Exec, type PgEnv } from './env';
import type { ImportFilesTx } from '../interface';

/** Bytes per stored slice. */
const SLICE = 1024 * 1024;

export class PgImportFiles implements ImportFilesTx {
  constructor(
    private readonly env: PgEnv,
    private readonly exec: Exec,
  ) {}

  bind(exec: Exec): PgImportFiles {
    return new PgImportFiles(this.env, exec);
  }

  async save(team: string, id: string, chunks: AsyncIterable<Uint8Array>, maxBytes: number): Promise<number | null> {
    let size = 0;
    let held: Uint8Array[] = [];
    let heldBytes = 0;
    let start = 0;
    const slices: { start: number; bytes: Uint8Array }[] = [];
    const cut = () => {
      slices.push({ start, bytes: Buffer.concat(held, heldBytes) });
      start += heldBytes;
      held = [];
      heldBytes = 0;
    };
    // Past the limit the rest is read and dropped: the source (a request body) ends normally.
    // The slices wait in memory only up to the limit the caller set (the upload's maximum).
    for await (const chunk of chunks) {
      size += chunk.byteLength;
      if (size > maxBytes) continue;
      held.push(chunk);
      heldBytes += chunk.byteLength;
      if (heldBytes >= SLICE) cut();
    }
    if (size > maxBytes) return null;
    if (heldBytes || !slices.length) cut();
    await this.env.transaction(async (u) => {
      u.write('DELETE FROM import_files WHERE team = $1 AND id = $2', [team, id]);
      for (const s of slices) u.write('INSERT INTO import_files (team, id, start, bytes) VALUES ($1, $2, $3, $4)', [team, id, s.start, s.bytes]);
    }, () => null);
    return size;
  }

  async *read(team: string, id: string, offset: number): AsyncIterable<Uint8Array> {
    let at = offset;
    for (;;) {
      const [row] = await this.exec.query(
        'SELECT start, bytes FROM import_files WHERE team = $1 AND id = $2 AND start + octet_length(bytes) > $3 ORDER BY start LIMIT 1',
        [team, id, at],
      );
      if (!row) {
        if (at === offset && !(await this.exists(team, id))) throw Object.assign(new Error('the uploaded file is missing'), { code: 'ENOENT' });
        return;
      }
      const bytes = row.bytes as Uint8Array;
      const skip = at - Number(row.start);
      if (skip < bytes.byteLength) yield bytes.subarray(Math.max(0, skip));
      at = Number(row.start) + bytes.byteLength;
    }
  }

  private async exists(team: string, id: string): Promise<boolean> {
    return (await this.exec.query('SELECT 1 FROM import_files WHERE team = $1 AND id = $2 LIMIT 1', [team, id])).length > 0;
  }

  async discard(team: string, id: string): Promise<void> {
    await this.env.transaction(async (u) => u.write('DELETE FROM import_files WHERE team = $1 AND id = $2', [team, id]), () => null);
  }

  drop(team: string, id: string): void {
    unitOf(this.exec).write('DELETE FROM import_files WHERE team = $1 AND id = $2', [team, id]);
  }
}
