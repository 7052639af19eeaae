// Large message bodies live in files beside the database (`<data_dir>/content/`), not in LMDB's
// memory map. Every page of the map a process reads stays in its resident memory; a queue of large
// emails read again at each delivery attempt would grow the process by the size of the queue
// (`npm run bench:memory`, README.md, "Benchmarks"). A file is read into a buffer only while an
// attempt or a download needs it, and the page cache it goes through is the kernel's, not the
// process's.
//
// Durability: a file is written and fsynced (and its directory entry too) inside the unit of work
// that stores the record naming it, before that commit — so a record never names a missing file.
// A crash before the commit leaves an orphan file, moved to the trash at the next start. Files are
// never changed; when their record is deleted they go to `.trash/` after that commit and are
// removed a day later, so a hot backup that read the record still finds the file (cli/backup.ts).
import {
  closeSync,
  createReadStream,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeSync,
} from 'node:fs';
import { open as openFile, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';

/** Contents whose byte fields together exceed this are spilled to files. */
export const SPILL_BYTES = 256 * 1024;
/** How long a deleted record's files are kept in the trash. */
export const TRASH_MS = 24 * 3_600_000;

export class SpillFiles {
  private readonly made = new Set<string>();

  /** `dir`: `<data_dir>/content`. */
  constructor(readonly dir: string) {}

  private folder(ns: string, id: string, trash = false): string {
    // The last two hex digits of the (random) id end spread files over 256 folders.
    return join(this.dir, ...(trash ? ['.trash'] : []), ns, id.slice(-2));
  }

  /** `<ns>/<last two of id>/<team>.<id>.<part>` (team and id are UUIDs: no dots). */
  private path(ns: string, team: string, id: string, part: string, trash = false): string {
    return join(this.folder(ns, id, trash), `${team}.${id}.${part}`);
  }

  /** Write one part durably (file and directory entry fsynced). Synchronous: it runs inside the unit of work. */
  write(ns: string, team: string, id: string, part: string, bytes: Uint8Array): void {
    const folder = this.folder(ns, id);
    if (!this.made.has(folder)) {
      mkdirSync(folder, { recursive: true });
      this.made.add(folder);
    }
    const fd = openSync(this.path(ns, team, id, part), 'w', 0o600);
    try {
      for (let off = 0; off < bytes.byteLength; ) off += writeSync(fd, bytes, off);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    const d = openSync(folder, 'r');
    try {
      fsyncSync(d);
    } finally {
      closeSync(d);
    }
  }

  /** `write`, off the event loop: for a body staged before the unit of work that names it. */
  async writeAsync(ns: string, team: string, id: string, part: string, bytes: Uint8Array): Promise<void> {
    await this.writeStream(ns, team, id, part, [bytes] as unknown as AsyncIterable<Uint8Array>, Number.MAX_SAFE_INTEGER);
  }

  /**
   * Stream `chunks` into one part, outside any unit of work (an upload): resolves with the size
   * once file and directory entry are fsynced, or null — the file removed — past `maxBytes`. The
   * record naming the file commits afterwards; a crash in between leaves an orphan for `sweep`.
   */
  async writeStream(ns: string, team: string, id: string, part: string, chunks: AsyncIterable<Uint8Array>, maxBytes: number): Promise<number | null> {
    const folder = this.folder(ns, id);
    mkdirSync(folder, { recursive: true });
    const path = this.path(ns, team, id, part);
    const fh = await openFile(path, 'w', 0o600);
    let size = 0;
    try {
      // Past the limit the rest is read and dropped: the source (a request body) ends normally.
      for await (const chunk of chunks) {
        size += chunk.byteLength;
        if (size <= maxBytes) await fh.write(chunk);
      }
      if (size <= maxBytes) await fh.sync();
    } catch (e) {
      await rm(path, { force: true });
      throw e;
    } finally {
      await fh.close();
    }
    if (size > maxBytes) {
      await rm(path, { force: true });
      return null;
    }
    const d = openSync(folder, 'r');
    try {
      fsyncSync(d);
    } finally {
      closeSync(d);
    }
    return size;
  }

  /** One part from byte `offset` on, read in slices as it is consumed. */
  stream(ns: string, team: string, id: string, part: string, offset: number): AsyncIterable<Uint8Array> {
    return createReadStream(this.path(ns, team, id, part), { start: offset, highWaterMark: 64 * 1024 });
  }

  /**
   * One part as a stream of `slice`-byte pieces, from its place or, for a record deleted meanwhile,
   * from the trash (as `read`: the file is opened at once, so a move to the trash after this does
   * not matter); empty when it is in neither.
   */
  open(ns: string, team: string, id: string, part: string, slice: number): Readable {
    for (const trash of [false, true]) {
      let fd: number;
      try {
        fd = openSync(this.path(ns, team, id, part, trash), 'r');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
        continue;
      }
      return createReadStream('', { fd, highWaterMark: slice });
    }
    return Readable.from([], { objectMode: false });
  }

  /** Remove one part at once (a file no record ever named). */
  async remove(ns: string, team: string, id: string, part: string): Promise<void> {
    await rm(this.path(ns, team, id, part), { force: true });
  }

  /** One part, from its place or, for a record deleted meanwhile, from the trash. */
  async read(ns: string, team: string, id: string, part: string): Promise<Uint8Array | undefined> {
    for (const trash of [false, true]) {
      try {
        return new Uint8Array(await readFile(this.path(ns, team, id, part, trash)));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      }
    }
    return undefined;
  }

  /** Move a deleted record's parts to the trash. */
  trash(ns: string, team: string, id: string, parts: string[]): void {
    for (const part of parts) {
      const from = this.path(ns, team, id, part);
      if (!existsSync(from)) continue;
      mkdirSync(this.folder(ns, id, true), { recursive: true });
      const to = this.path(ns, team, id, part, true);
      renameSync(from, to);
      // The trash counts its day from the deletion.
      const now = new Date();
      utimesSync(to, now, now);
    }
  }

  /** Copy every part of a record to `destDir` laid out as `dir` is (hot backups). */
  async copyTo(destDir: string, ns: string, team: string, id: string, parts: string[]): Promise<number> {
    let n = 0;
    for (const part of parts) {
      const bytes = await this.read(ns, team, id, part);
      if (!bytes) continue;
      const folder = join(destDir, ns, id.slice(-2));
      mkdirSync(folder, { recursive: true });
      await Bun.write(join(folder, `${team}.${id}.${part}`), bytes);
      n++;
    }
    return n;
  }

  /**
   * At start, before anything writes: files whose record does not exist (a crash between the
   * file and its commit) go to the trash; trash older than TRASH_MS is removed. Returns the counts.
   */
  sweep(isLive: (ns: string, team: string, id: string) => boolean, now = Date.now()): { orphans: number; purged: number } {
    let orphans = 0;
    let purged = 0;
    if (!existsSync(this.dir)) return { orphans, purged };
    for (const ns of readdirSync(this.dir)) {
      if (ns === '.trash') continue;
      for (const shard of readdirSync(join(this.dir, ns))) {
        for (const name of readdirSync(join(this.dir, ns, shard))) {
          const [team, id, part] = name.split('.') as [string, string, string];
          if (!part || isLive(ns, team, id)) continue;
          this.trash(ns, team, id, [part]);
          orphans++;
        }
      }
    }
    purged = this.purge(now);
    return { orphans, purged };
  }

  /** Remove trash older than TRASH_MS (safe while the service runs). */
  purge(now = Date.now()): number {
    const root = join(this.dir, '.trash');
    let purged = 0;
    if (!existsSync(root)) return 0;
    for (const ns of readdirSync(root))
      for (const shard of readdirSync(join(root, ns)))
        for (const name of readdirSync(join(root, ns, shard))) {
          const file = join(root, ns, shard, name);
          if (now - statSync(file).mtimeMs < TRASH_MS) continue;
          rmSync(file, { force: true });
          purged++;
        }
    return purged;
  }
}
