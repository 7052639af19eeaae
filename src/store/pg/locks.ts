// Jobs one node at a time must do (retention sweeps, DNS re-checks, one broadcast's or import's
// batches), under PostgreSQL advisory locks: `pg_try_advisory_lock` on a connection held for the
// run. A node that dies loses its connection, and the server releases its locks with it — the
// job's lease ends with the node, and the next node to try takes it.
import { createHash } from 'node:crypto';
import { SQL } from 'bun';
import { translate } from './env';

/** A job name as the 64-bit key of an advisory lock. */
function lockKey(name: string): string {
  const hex = createHash('sha256').update(`posthorn:${name}`).digest('hex').slice(0, 16);
  return BigInt.asIntN(64, BigInt(`0x${hex}`)).toString();
}

export class Locks {
  /** Connections holding locks, apart from the pools of units of work (a job's units must never wait on them). */
  private readonly sql: SQL;

  constructor(url: string, max = 8) {
    this.sql = new SQL({ url, max, connectionTimeout: 5, idleTimeout: 60, connection: { application_name: 'posthorn-locks' } });
  }

  async run(name: string, fn: () => Promise<void>): Promise<boolean> {
    const key = lockKey(name);
    let conn: SQL & { release(): void };
    let got: boolean;
    try {
      conn = (await this.sql.reserve()) as SQL & { release(): void };
    } catch (e) {
      throw translate(e);
    }
    try {
      try {
        const [row] = (await conn.unsafe('SELECT pg_try_advisory_lock($1::bigint) AS ok', [key])) as { ok: boolean }[];
        got = !!row?.ok;
      } catch (e) {
        throw translate(e);
      }
      if (!got) return false;
      try {
        await fn();
        return true;
      } finally {
        await conn.unsafe('SELECT pg_advisory_unlock($1::bigint)', [key]).catch(() => {});
      }
    } finally {
      conn.release();
    }
  }

  close(): Promise<void> {
    return this.sql.close({ timeout: 5 });
  }
}
