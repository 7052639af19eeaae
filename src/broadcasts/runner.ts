// Runs broadcast sends in the background, at most one per broadcast in this process: the HTTP
// answer to a send does not wait for thousands of emails. The broadcast due index is the durable
// to-do list (persist before acting): every scheduled or queued broadcast has an entry until it is
// `sent`, so the scheduler job (`releaseDue`, every second, and so on start-up) starts scheduled
// ones when due and resumes queued ones a crash or shutdown interrupted.
import { log } from '../log';
import { StoreUnavailable } from '../errors';
import { dueKey } from '.';
import { sendBroadcast, returnToDraft, type BroadcastDeps } from './send';
import { QuotaExceeded } from '../limits/quota';

/** Consecutive failures of one broadcast's send before it goes back to draft (with the reason logged). */
const MAX_FAILURES = 5;

export class BroadcastSender {
  private readonly running = new Map<string, Promise<void>>();
  /** Unexpected failures per broadcast, and when the next try is allowed (doubling from 1 s). */
  private readonly failures = new Map<string, { count: number; notBefore: number }>();
  private readonly abort = new AbortController();

  constructor(private readonly svc: BroadcastDeps) {}

  /** Start creating a queued broadcast's emails; no-op while it already runs here or after stop(). */
  start(team: string, broadcastId: string): void {
    const key = `${team}/${broadcastId}`;
    if (this.abort.signal.aborted || this.running.has(key)) return;
    if ((this.failures.get(key)?.notBefore ?? 0) > Date.now()) return;
    // One node of a cluster sends a broadcast's batches at a time (store.singleton); another node
    // finding it taken leaves it, and takes it over if that node dies (its lock goes with it).
    let outcome: Awaited<ReturnType<typeof sendBroadcast>> = 'skipped';
    const run = this.svc.store
      .singleton(`broadcast:${key}`, async () => {
        outcome = await sendBroadcast(this.svc, team, broadcastId, { signal: this.abort.signal });
      })
      .then(() => {
        this.failures.delete(key);
        if (outcome === 'sent') log.info('broadcast.sent', { team_id: team, broadcast_id: broadcastId });
      })
      .catch(async (e) => {
        // The database out of reach (cluster mode) is no failure of this one: the next tick tries again.
        if (e instanceof StoreUnavailable) return void log.warn('store.unavailable', { job: key, error: e.reason });
        // The team's sending limit is reached (docs/api.md §6.1): the broadcast stays queued, its
        // batches so far sent, and goes on when the period ends — waiting is not failing.
        if (e instanceof QuotaExceeded) {
          this.failures.set(key, { count: this.failures.get(key)?.count ?? 0, notBefore: e.resetsAt });
          log.warn('broadcast.quota_reached', { team_id: team, broadcast_id: broadcastId, resumes_at: new Date(e.resetsAt).toISOString(), reason: e.message });
          return;
        }
        // Left queued and tried again later, backing off; one that keeps failing goes back to draft.
        const count = (this.failures.get(key)?.count ?? 0) + 1;
        this.failures.set(key, { count, notBefore: Date.now() + 1000 * 2 ** (count - 1) });
        log.error('broadcast.send_failed', { team_id: team, broadcast_id: broadcastId, failures: count, error: String((e as Error)?.stack ?? e) });
        if (count >= MAX_FAILURES) {
          this.failures.delete(key);
          await returnToDraft(this.svc, { team_id: team, id: broadcastId }, `sending failed ${count} times: ${(e as Error)?.message ?? e}`);
        }
      })
      .finally(() => this.running.delete(key));
    this.running.set(key, run);
  }

  /**
   * The scheduler job: due scheduled broadcasts become `queued`, and every due queued broadcast not
   * running here is started. Stale entries (cancelled, deleted, already sent) are dropped.
   */
  async releaseDue(now = Date.now()): Promise<void> {
    const { store } = this.svc;
    const due = (await store.broadcastSchedule.due(now)).filter((d) => !this.running.has(`${d.team}/${d.id}`));
    if (due.length === 0 || this.abort.signal.aborted) return;
    const ready = await store.write(async (tx) => {
      const out: typeof due = [];
      for (const d of due) {
        const b = await tx.broadcasts.get(d.team, d.id);
        const current = b && (b.status === 'scheduled' || b.status === 'queued') && dueKey(b) === d.due;
        if (!current) tx.broadcastSchedule.remove(d.due, d.team, d.id);
        else {
          if (b.status === 'scheduled') tx.broadcasts.put({ ...b, status: 'queued' });
          out.push(d);
        }
      }
      return out;
    });
    for (const { team, id } of ready) this.start(team, id);
  }

  /** Resolves once no send is running (tests). */
  async idle(): Promise<void> {
    while (this.running.size) await Promise.allSettled([...this.running.values()]);
  }

  /** Stop starting sends; running ones stop after their current batch (they resume after a restart). */
  async stop(): Promise<void> {
    this.abort.abort();
    await this.idle();
  }
}
