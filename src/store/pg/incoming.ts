// The incoming queue on PostgreSQL: one row per batch accepted as received, (team, first email id) → the
// request as JSON, attachment bytes in base64 (only batches whose attachments are small come here:
// sending/incoming.ts INCOMING_FILE_BYTES). `take` is a DELETE … RETURNING in the unit of work that
// writes the emails: the row stays locked until it commits, so a concurrent take waits, then
// finds nothing (or the unit runs again on a serialization failure, and then finds nothing).
import { claimed, unitOf, type Exec } from './env';
import { parse } from './collection';
import type { IncomingTx } from '../interface';
import type { IncomingRec } from '../email-records';

type Stored = Omit<IncomingRec, 'emails'> & {
  emails: (Omit<IncomingRec['emails'][number], 'content'> & {
    content: Omit<IncomingRec['emails'][number]['content'], 'files'> & { files: Record<string, string> };
  })[];
};

export class PgIncoming implements IncomingTx {
  constructor(private readonly exec: Exec) {}

  bind(exec: Exec): PgIncoming {
    return new PgIncoming(exec);
  }

  add(rec: IncomingRec): void {
    unitOf(this.exec).write('INSERT INTO incoming (team, id, value) VALUES ($1, $2, $3::text::json)', [rec.team_id, rec.id, JSON.stringify(encode(rec))]);
  }

  async take(team: string, id: string): Promise<IncomingRec | undefined> {
    const [row] = await this.exec.query('DELETE FROM incoming WHERE team = $1 AND id = $2 RETURNING value::text AS value', [team, id]);
    return row ? decode(parse<Stored>(row.value)) : undefined;
  }

  /** In a unit of work, the rows are claimed (`FOR UPDATE SKIP LOCKED`): another node's worker passes over them. */
  async waiting(team: string | null, limit: number): Promise<{ team: string; id: string }[]> {
    const rows: { team: string; id: string }[] =
      team === null
        ? await this.exec.query(`SELECT team, id FROM incoming ORDER BY id LIMIT $1${claimed(this.exec)}`, [limit])
        : await this.exec.query(`SELECT team, id FROM incoming WHERE team = $1 ORDER BY id LIMIT $2${claimed(this.exec)}`, [team, limit]);
    return rows.map((r) => ({ team: r.team, id: r.id }));
  }

  async count(): Promise<number> {
    const [row] = await this.exec.query('SELECT count(*)::int AS n FROM incoming');
    return Number(row!.n);
  }
}

function encode(rec: IncomingRec): Stored {
  return {
    ...rec,
    emails: rec.emails.map((e) => ({
      ...e,
      content: { ...e.content, files: Object.fromEntries(Object.entries(e.content.files).map(([k, v]) => [k, Buffer.from(v).toString('base64')])) },
    })),
  };
}

function decode(s: Stored): IncomingRec {
  return {
    ...s,
    emails: s.emails.map((e) => ({
      ...e,
      content: { ...e.content, files: Object.fromEntries(Object.entries(e.content.files).map(([k, v]) => [k, new Uint8Array(Buffer.from(v, 'base64'))])) },
    })),
  };
}
