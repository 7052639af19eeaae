// The incoming queue (docs/ARCHITECTURE.md §4, "The incoming queue"): a batch accepted as received — one record
// for the request, written by the accepting commit with its quota and idempotency record
// (submit.ts) — is written here as its emails: each email's record, body, queue entries or
// schedule and events (submit.ts `persist`, which reads the suppression list then). Taking the
// request's record and writing its emails are one unit of work, so an expansion that a crash
// interrupted runs again whole, and never twice. The back office's incoming worker does it as soon
// as the accepting commit wakes it (and at start, for what a stop or a crash left); a read of the
// team's emails that comes first does it itself (`settle`), so GET /emails/{id}, the lists and the
// events show a batch's emails from its 2xx on.
import type { Store, Tx } from '../store';
import type { Events } from '../events';
import { persist } from './submit';
import { log } from '../log';

/** Requests written per unit of work (up to 100 emails each). */
const GROUP = 8;
/** How long a request whose emails could not be written waits before it is tried again. */
const RETRY_MS = 5_000;

type Key = { team: string; id: string };

/** In a unit of work: take each request still waiting and write its emails. */
async function expandIn(tx: Tx, events: Events, keys: readonly Key[]): Promise<void> {
  for (const k of keys) {
    const rec = await tx.incoming.take(k.team, k.id);
    // Taken meanwhile (by the worker, a read, another node), or its team deleted since: nothing to write.
    if (!rec || !(await tx.teams.get(rec.team_id, rec.team_id))) continue;
    for (const e of rec.emails) await persist(tx, events, e, rec.sandbox);
  }
}

/** Write these waiting requests as their emails, in one unit of work. */
export function expand(store: Store, events: Events, keys: readonly Key[]): Promise<void> {
  return store.write((tx) => expandIn(tx, events, keys));
}

/**
 * Before a read of a team's emails: the team's requests waiting when it was asked are written
 * first (an embedded store: one read of the incoming queue's keys when none waits).
 */
export async function settle(store: Store, events: Events, team: string): Promise<void> {
  const keys = await store.incoming.waiting(team, Number.MAX_SAFE_INTEGER);
  for (let i = 0; i < keys.length; i += GROUP) await expand(store, events, keys.slice(i, i + GROUP));
}

/** The back office's worker: writes waiting requests as their emails, oldest first, as soon as it is woken. */
export class IncomingWorker {
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = true;
  /** Requests whose emails could not be written, passed over until the retry. */
  private readonly failing = new Set<string>();
  private retry: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly deps: { store: Store; events: Events }) {}

  /** Start: what a stop or a crash left waiting is written first. */
  start(): void {
    this.stopped = false;
    this.kick();
  }

  /** New requests were accepted (the store's `incoming` signal). */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain().finally(() => {
      this.running = null;
      if (this.again) {
        this.again = false;
        this.kick();
      }
    });
  }

  /** Resolves once nothing is being written (tests). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    await this.idle();
  }

  private async drain(): Promise<void> {
    const { store, events } = this.deps;
    const next = async (reader: { incoming: Store['incoming'] }) =>
      (await reader.incoming.waiting(null, GROUP + this.failing.size)).filter((k) => !this.failing.has(k.id)).slice(0, GROUP);
    while (!this.stopped) {
      try {
        // Read in the unit of work: on PostgreSQL it claims the rows, so each node writes others.
        const written = await store.write(async (tx) => {
          const keys = await next(tx);
          await expandIn(tx, events, keys);
          return keys.length;
        });
        if (!written) return;
      } catch {
        // One request's failure is never another's: each on its own, and the one that fails waits.
        const keys = await next(store).catch(() => []);
        if (!keys.length) return this.retryLater(true);
        for (const k of keys)
          await expand(store, events, [k]).catch((e) => {
            this.failing.add(k.id);
            log.error('incoming.failed', { team_id: k.team, request_id: k.id, retry_in_ms: RETRY_MS, error: String((e as Error)?.stack ?? e) });
          });
        this.retryLater();
      }
    }
  }

  /** `always`: the store itself failed (nothing could be read), so look again later anyway. */
  private retryLater(always = false): void {
    if ((!always && !this.failing.size) || this.retry || this.stopped) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      this.failing.clear();
      this.kick();
    }, RETRY_MS);
  }
}
