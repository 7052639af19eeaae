// The inbound spool: [id] → the message's envelope and state (with its due time), a due index
// [dueAtMs, id] read from its head, and the bytes as a body of their own (collection.ts
// LmdbContents: over 256 KB in a file, fsynced before the commit naming it). A message given up on
// leaves the due index and is removed by the retention sweep, like received mail.
import type { Database, Key, LmdbEnv } from './env';
import type { TtlIndex } from './ttl';
import { LmdbContents } from './collection';
import type { SpillFiles } from './spill';
import type { InboundSpoolTx } from '../interface';
import type { SpooledMessage } from '../inbound-records';

/** Spool bodies belong to no team yet: they are kept under this key part. */
const NO_TEAM = 'spool';
const NAME = 'inbound_spool';

type Stored = SpooledMessage & { due: number | null; expires?: number };

export class LmdbInboundSpool implements InboundSpoolTx {
  private readonly db: Database;
  private readonly dueIdx: Database;
  readonly content: LmdbContents<{ raw: Uint8Array; files: Record<string, Uint8Array> }>;

  constructor(
    private readonly env: LmdbEnv,
    private readonly ttl: TtlIndex,
    spill: SpillFiles,
    private readonly retentionMs: number,
  ) {
    this.db = env.db(NAME);
    this.dueIdx = env.db(`${NAME}.due`);
    this.content = new LmdbContents(env, `${NAME}_content`, spill);
    ttl.register(NAME, ([id]) => this.delete(String(id)));
  }

  add(msg: SpooledMessage, raw: Uint8Array, due: number): void {
    this.env.assertWriting();
    this.content.put(NO_TEAM, msg.id, { raw, files: {} });
    this.update(msg, due);
  }

  update(msg: SpooledMessage, due: number | null): void {
    this.env.assertWriting();
    const old = this.db.get([msg.id]) as Stored | undefined;
    if (old?.due != null) this.dueIdx.remove([old.due, msg.id]);
    if (old?.expires !== undefined) this.ttl.drop(NAME, [msg.id], old.expires);
    const stored: Stored = { ...msg, due };
    if (due === null) {
      stored.expires = Date.parse(msg.received_at) + this.retentionMs;
      this.ttl.add(NAME, [msg.id], stored.expires);
    } else this.dueIdx.put([due, msg.id], null);
    this.db.put([msg.id], stored);
  }

  remove(id: string): void {
    this.env.assertWriting();
    this.delete(id);
  }

  async due(now: number, limit: number): Promise<{ due: number; id: string }[]> {
    return Array.from(this.dueIdx.getKeys({ start: [0], end: [now + 1], limit }), (key) => {
      const [due, id] = key as Key[] as [number, string];
      return { due, id };
    });
  }

  async nextDue(): Promise<number | null> {
    this.env.latest();
    for (const key of this.dueIdx.getKeys({ limit: 1 })) return (key as Key[])[0] as number;
    return null;
  }

  async get(id: string): Promise<SpooledMessage | undefined> {
    return this.read(id);
  }

  async raw(id: string): Promise<Uint8Array | undefined> {
    return this.content.raw(NO_TEAM, id);
  }

  async counts(): Promise<{ waiting: number; failed: number }> {
    const waiting = this.dueIdx.getCount();
    return { waiting, failed: this.db.getCount() - waiting };
  }

  /** Does the message exist? (the start-up sweep of orphan files) */
  has(team: string, id: string): boolean {
    return team === NO_TEAM && this.db.doesExist([id]);
  }

  private read(id: string): SpooledMessage | undefined {
    const s = this.db.get([id]) as Stored | undefined;
    if (!s) return undefined;
    const { due: _due, expires: _expires, ...msg } = s;
    return msg;
  }

  /** Inside a transaction (a unit of work, or the retention sweep). */
  private delete(id: string): void {
    const old = this.db.get([id]) as Stored | undefined;
    if (!old) return;
    if (old.due != null) this.dueIdx.remove([old.due, id]);
    if (old.expires !== undefined) this.ttl.drop(NAME, [id], old.expires);
    this.db.remove([id]);
    this.content.drop(NO_TEAM, id);
  }
}
