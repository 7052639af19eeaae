// The uploaded CSV files of contact imports, on PostgreSQL: slices of about 1 MB, (team, id,
// start) → bytes, streamed in one transaction that commits before the import's record does (the
// file is durable first, as with LMDB's files), read from the import's cursor on, removed in the
// unit of work that ends the import.
import { translate, unitOf, type Exec, type PgEnv } from './env';
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
    // One transaction on a connection of its own, a slice written as soon as it is full: memory
    // holds one slice whatever the file's size. Past the limit the rest is read and dropped (the
    // source, a request body, ends normally) and nothing is kept.
    const conn = await this.env.reserve();
    let size = 0;
    let held: Uint8Array[] = [];
    let heldBytes = 0;
    let start = 0;
    const cut = async () => {
      await conn.unsafe('INSERT INTO import_files (team, id, start, bytes) VALUES ($1, $2, $3, $4)', [team, id, start, Buffer.concat(held, heldBytes)]);
      start += heldBytes;
      held = [];
      heldBytes = 0;
    };
    try {
      await conn.unsafe('BEGIN');
      await conn.unsafe('DELETE FROM import_files WHERE team = $1 AND id = $2', [team, id]);
      for await (const chunk of chunks) {
        size += chunk.byteLength;
        if (size > maxBytes) continue;
        held.push(chunk);
        heldBytes += chunk.byteLength;
        if (heldBytes >= SLICE) await cut();
      }
      if (size > maxBytes) {
        await conn.unsafe('ROLLBACK');
        return null;
      }
      if (heldBytes || start === 0) await cut();
      await conn.unsafe('COMMIT');
      return size;
    } catch (e) {
      await conn.unsafe('ROLLBACK').catch(() => {});
      throw translate(e);
    } finally {
      conn.release();
    }
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
    await this.env.transaction(
      async (u) => u.write('DELETE FROM import_files WHERE team = $1 AND id = $2', [team, id]),
      () => null,
    );
  }

  drop(team: string, id: string): void {
    unitOf(this.exec).write('DELETE FROM import_files WHERE team = $1 AND id = $2', [team, id]);
  }
}
