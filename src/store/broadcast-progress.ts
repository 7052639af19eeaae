// Progress of a broadcast being sent: [team, broadcastId, contactId] → the email id created for
// that contact (null: skipped). Written in the same transaction as the emails, so a send resumed
// after a crash knows exactly who already has theirs (nobody gets two).
import type { Database } from 'lmdb';
import type { StoreEnv } from './env';

export class BroadcastProgress {
  private readonly db: Database;

  constructor(env: StoreEnv) {
    this.db = env.db('broadcast_progress');
  }

  has(team: string, broadcastId: string, contactId: string): boolean {
    return this.db.doesExist([team, broadcastId, contactId]);
  }

  /** The email created for a contact: an id, null when it was skipped, undefined when not done. */
  emailOf(team: string, broadcastId: string, contactId: string): string | null | undefined {
    return this.db.get([team, broadcastId, contactId]) as string | null | undefined;
  }

  /** Inside a transaction. */
  putInTxn(team: string, broadcastId: string, contactId: string, emailId: string | null): void {
    this.db.put([team, broadcastId, contactId], emailId);
  }

  /** Inside a transaction: forget a broadcast's progress (it is sent, or deleted). */
  clearInTxn(team: string, broadcastId: string): void {
    for (const key of this.db.getKeys({ start: [team, broadcastId, ''], end: [team, broadcastId, '\uffff'] })) this.db.remove(key);
  }
}
