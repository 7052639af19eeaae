// The durable webhook outbox: one entry per webhook event with an attempt due, keyed
// [team, webhookId, dueMs, eventId]. Keyed per endpoint first so that the dispatcher can serve
// endpoints round-robin with a per-endpoint limit — a slow or dead endpoint's backlog is never
// scanned past to reach another endpoint's work. The event record holds `due`, so an entry can be
// found and moved without a second index (events/webhooks/outbox.ts keeps the two in step).
import type { Database, Key, LmdbEnv } from './env';
import type { OutboxHead, OutboxTx } from '../interface';

/** Sorts after every due time (numbers sort before strings), so it bounds one endpoint's entries. */
const END = '\uffff';

export class LmdbOutbox implements OutboxTx {
  private readonly db: Database;

  constructor(private readonly env: LmdbEnv) {
    this.db = env.db('webhook_outbox');
  }

  put(team: string, webhook: string, due: number, eventId: string): void {
    this.env.assertWriting();
    this.db.put([team, webhook, due, eventId], null);
  }

  remove(team: string, webhook: string, due: number, eventId: string): void {
    this.env.assertWriting();
    this.db.remove([team, webhook, due, eventId]);
  }

  async due(team: string, webhook: string, now: number, limit: number): Promise<{ due: number; id: string }[]> {
    return Array.from(this.db.getKeys({ start: [team, webhook, 0], end: [team, webhook, now + 1], limit }), (k) => {
      const key = k as Key[];
      return { due: key[2] as number, id: key[3] as string };
    });
  }

  async heads(after?: { team: string; webhook: string }): Promise<OutboxHead[]> {
    if (!after) return this.walk(undefined, undefined);
    return [...this.walk([after.team, after.webhook, END], undefined), ...this.walk(undefined, [after.team, after.webhook, END])];
  }

  async nextDue(): Promise<number | null> {
    this.env.latest();
    let min: number | null = null;
    for (const h of this.walk(undefined, undefined)) if (min === null || h.due < min) min = h.due;
    return min;
  }

  async size(): Promise<number> {
    return this.db.getCount();
  }

  /** One seek per endpoint: its first key, then past its last. */
  private walk(start: Key | undefined, end: Key | undefined): OutboxHead[] {
    const out: OutboxHead[] = [];
    for (;;) {
      let key: Key[] | undefined;
      for (const k of this.db.getKeys({ start, end, limit: 1 })) key = k as Key[];
      if (!key) return out;
      const [team, webhook, due] = key as [string, string, number];
      out.push({ team, webhook, due });
      start = [team, webhook, END];
    }
  }
}
