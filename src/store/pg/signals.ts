// Store signals across nodes. A unit of work that made work due (or wrote domains or API keys)
// notifies the others once it has committed; every store instance LISTENs and fires its own
// listeners (or clears its caches) for what other instances committed. Its own commits it fires
// at once, without the round trip.
//
// PostgreSQL serializes the commits of transactions that NOTIFY (each holds a database-wide lock
// from its NOTIFY to the end of its COMMIT, WAL flush included), so a NOTIFY inside every unit
// made the units' flushes wait for each other, one at a time (3.5× fewer commits a second with 16
// at once here). So a unit notifies after its COMMIT (`post`): the notifications waiting are sent
// together by one statement of its own transaction, which does not wait for its flush (nothing it
// writes is data). Only a unit that makes caches stale (domains, API keys: rare) notifies inside
// its transaction, so no node can miss it once the write is committed; a notification posted
// after a commit and lost with its node is covered by the safety net below.
//
// The same NOTIFY carries the unit's changes for the dashboard's live stream (../changes.ts): every
// instance hands them to its change listeners, so a session on any node hears every node's.
//
// Notifications can be missed (the listening connection dropped and came back): a worker then
// sleeps until the time it knew, at most a minute (work/due-worker.ts). So every POLL_MS, and
// whenever the LISTEN is (re)established, every signal fires anyway: the safety net.
import type { SQL } from 'bun';
import { CHANNEL, type PgUnit } from './env';
import { guarded } from '../guarded';
import { log } from '../../log';
import { SIGNALS as DECLARED, type Change, type Signal } from '../collections';
import { decodeChanges, encodeChanges } from '../changes';

const SIGNALS = Object.keys(DECLARED) as Signal[];
export const POLL_MS = 10_000;

export class Signals {
  private readonly listeners = new Map<Signal, (() => void)[]>();
  private readonly changeListeners: ((changes: readonly Change[]) => void)[] = [];
  private subscription: { unlisten(): Promise<void> } | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(
    /** This store instance, so that it can tell its own notifications from others'. */
    private readonly instance: string,
    /** Clear the named cache (domains, API keys). */
    private readonly clearCache: (name: string) => void,
  ) {}

  /** Payloads posted after their commits, not sent yet, and the send under way. */
  private posted: string[] = [];
  private sending: Promise<void> | null = null;
  private sql: SQL | null = null;

  async start(sql: SQL): Promise<void> {
    this.sql = sql;
    this.subscription = await sql.listen(
      CHANNEL,
      (payload) => this.heard(payload),
      () => this.fireAll(),
    );
    this.timer = setInterval(() => this.fireAll(), POLL_MS);
    this.timer.unref?.();
  }

  on(signal: Signal, listener: () => void): void {
    this.listeners.set(signal, [...(this.listeners.get(signal) ?? []), listener]);
  }

  fire(signal: Signal): void {
    for (const l of this.listeners.get(signal) ?? []) guarded(l);
  }

  onChange(listener: (changes: readonly Change[]) => void): void {
    this.changeListeners.push(listener);
  }

  /** Hand committed changes (this instance's, or another's heard) to the change listeners. */
  changed(changes: readonly Change[]): void {
    for (const l of this.changeListeners) guarded(() => l(changes));
  }

  /**
   * Tell the other instances of a commit: with the others posted meanwhile, by one statement, one
   * send at a time (those posted while one is under way go with the next).
   */
  post(payload: string): void {
    this.posted.push(payload);
    if (!this.sending) this.sending = this.send();
  }

  private async send(): Promise<void> {
    // Let the commits that finish in this turn join.
    await Promise.resolve();
    while (this.posted.length && this.sql) {
      const batch = this.posted.splice(0);
      await this.sql
        .unsafe(`SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, n) FROM unnest($2::text[]) n`, [CHANNEL, batch])
        .catch((e) => log.warn('store.notify_failed', { error: String(e) }));
    }
    this.sending = null;
  }

  /** Whether `unit`'s notification must go inside its transaction (header): it makes caches stale. */
  static inside(unit: PgUnit): boolean {
    return unit.stale.size > 0;
  }

  /** What other nodes must hear of `unit`'s commit, or null when nothing. */
  payload(unit: PgUnit): string | null {
    if (!unit.signals.size && !unit.stale.size && !unit.changes.size) return null;
    const changes = unit.changes.size ? `|${encodeChanges(unit.changes.list())}` : '';
    return `${this.instance}|${[...unit.signals].join(',')}|${[...unit.stale].join(',')}${changes}`;
  }

  private heard(payload: string): void {
    const [from, signals, stale, changes] = payload.split('|');
    if (from === this.instance) return;
    for (const name of (stale ?? '').split(',')) if (name) this.clearCache(name);
    for (const s of (signals ?? '').split(',')) if (SIGNALS.includes(s as Signal)) this.fire(s as Signal);
    if (changes) this.changed(decodeChanges(changes));
  }

  private fireAll(): void {
    for (const s of SIGNALS) this.fire(s);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.sending;
    await this.subscription?.unlisten().catch((e) => log.warn('store.unlisten_failed', { error: String(e) }));
  }
}
