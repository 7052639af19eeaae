// The durable webhook outbox: one entry per webhook event with an attempt due, keyed
// [team, webhookId, dueMs, eventId]. Keyed per endpoint first so that the dispatcher can serve
// endpoints round-robin with a per-endpoint limit — a slow or dead endpoint's backlog is never
// scanned past to reach another endpoint's work. The event record holds `due`, so an entry can be
// found and moved without a second index (events/webhooks/outbox.ts keeps the two in step).
import type { Database, Key } from 'lmdb';
import type { StoreEnv } from './env';

export interface OutboxHead {
  team: string;
  webhook: string;
  /** Due time (ms) of the endpoint's earliest entry. */
  due: number;
}

/** Sorts after every due time (numbers sort before strings), so it bounds one endpoint's entries. */
const END = '\uffff';

export class WebhookOutbox {
  private readonly db: Database;

  constructor(env: StoreEnv) {
    this.db = env.db('webhook_outbox');
  }

  /** Inside a transaction. */
  putInTxn(team: string, webhook: string, due: number, eventId: string): void {
    this.db.put([team, webhook, due, eventId], null);
  }

  /** Inside a transaction. */
  removeInTxn(team: string, webhook: string, due: number, eventId: string): void {
    this.db.remove([team, webhook, due, eventId]);
  }

  /** Entries of one endpoint due at `now`, earliest first. */
  due(team: string, webhook: string, now: number, limit: number): { due: number; id: string }[] {
    return Array.from(this.db.getKeys({ start: [team, webhook, 0], end: [team, webhook, now + 1], limit }), (k) => {
      const key = k as Key[];
      return { due: key[2] as number, id: key[3] as string };
    });
  }

  /**
   * The earliest entry of every endpoint that has any, in key order starting after endpoint
   * `after` and wrapping around to it (round robin). One seek per endpoint.
   */
  *heads(after?: { team: string; webhook: string }): Iterable<OutboxHead> {
    if (!after) return yield* this.walk(undefined, undefined);
    yield* this.walk([after.team, after.webhook, END], undefined);
    yield* this.walk(undefined, [after.team, after.webhook, END]);
  }

  /** Due time of the earliest entry over all endpoints, or null when the outbox is empty. */
  nextDue(): number | null {
    let min: number | null = null;
    for (const h of this.heads()) if (min === null || h.due < min) min = h.due;
    return min;
  }

  size(): number {
    return this.db.getCount();
  }

  private *walk(start: Key | undefined, end: Key | undefined): Iterable<OutboxHead> {
    for (;;) {
      let key: Key[] | undefined;
      for (const k of this.db.getKeys({ start, end, limit: 1 })) key = k as Key[];
      if (!key) return;
      const [team, webhook, due] = key as [string, string, number];
      yield { team, webhook, due };
      start = [team, webhook, END];
    }
  }
}
