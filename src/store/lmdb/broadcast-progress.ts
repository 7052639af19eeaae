// Progress of a broadcast being sent: [team, broadcastId, contactId] → the email id created for
// that contact (null: skipped). Written in the same transaction as the emails, so a send resumed
// after a crash knows exactly who already has theirs (nobody gets two).
import type { Database, LmdbEnv } from './env';
import type { BroadcastProgressTx } from '../interface';

export class LmdbBroadcastProgress implements BroadcastProgressTx {
  private readonly db: Database;

  constructor(private readonly env: LmdbEnv) {
    this.db = env.db('broadcast_progress');
  }

  async has(team: string, broadcastId: string, contactId: string): Promise<boolean> {
    return this.db.doesExist([team, broadcastId, contactId]);
  }

  put(team: string, broadcastId: string, contactId: string, emailId: string | null): void {
    this.env.assertWriting();
    this.db.put([team, broadcastId, contactId], emailId);
  }

  async clear(team: string, broadcastId: string): Promise<void> {
    this.env.assertWriting();
    for (const key of this.db.getKeys({ start: [team, broadcastId, ''], end: [team, broadcastId, '\uffff'] })) this.db.remove(key);
  }
}
