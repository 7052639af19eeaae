// Progress of a broadcast being sent, on PostgreSQL: (team, broadcast, contact) → the email made
// for that contact (null: skipped), written in the unit of work of the emails. A contact is covered
// once: a second unit covering it (another node, after a lease ran out) finds the row there and
// runs again, and then `has` says so.
import { unitOf, type Exec } from './env';
import type { BroadcastProgressTx } from '../interface';

export class PgBroadcastProgress implements BroadcastProgressTx {
  constructor(private readonly exec: Exec) {}

  bind(exec: Exec): PgBroadcastProgress {
    return new PgBroadcastProgress(exec);
  }

  async has(team: string, broadcastId: string, contactId: string): Promise<boolean> {
    return (
      (await this.exec.query('SELECT 1 FROM broadcast_progress WHERE team = $1 AND broadcast = $2 AND contact = $3', [team, broadcastId, contactId])).length > 0
    );
  }

  put(team: string, broadcastId: string, contactId: string, emailId: string | null): void {
    // A plain INSERT: a contact covered twice is a unique violation, and the unit runs again.
    unitOf(this.exec).write('INSERT INTO broadcast_progress (team, broadcast, contact, email_id) VALUES ($1, $2, $3, $4)', [
      team,
      broadcastId,
      contactId,
      emailId,
    ]);
  }

  async clear(team: string, broadcastId: string): Promise<void> {
    unitOf(this.exec).write('DELETE FROM broadcast_progress WHERE team = $1 AND broadcast = $2', [team, broadcastId]);
  }
}
