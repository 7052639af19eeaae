// The webhook dispatcher: the outbox's worker (a DueService, on the shared due-work loop). Each claim persists the
// event's next attempt time before the attempt (persist before acting, docs/ARCHITECTURE.md): the
// wait of `webhooks.retry_schedule` after this attempt (jittered), so a crash mid-attempt means a
// retry; the last attempt (and a manual replay) gets a lease instead, after which a crashed
// attempt is retried once. Endpoints are served round-robin with at most `perEndpoint` attempts
// each in flight, under a global limit, so a slow or dead endpoint never delays the others.
import type { Config } from '../../config';
import type { Store, WebhookEventRec, WebhookRec } from '../../store';
import { DueService } from '../../work/due-service';
import { jittered, retryWait } from '../../work/retry';
import { newId } from '../../ids';
import { log } from '../../log';
import { deliver, ATTEMPT_TIMEOUT_MS, type AttemptOutcome } from './deliver';
import { moveEvent } from './outbox';

export interface DispatcherDeps {
  store: Store;
  config: Pick<Config, 'webhooks' | 'security'>;
}

export interface DispatcherOptions {
  /** Attempts in flight at once, over all endpoints. */
  concurrency?: number;
  /** Attempts in flight at once to one endpoint. */
  perEndpoint?: number;
  timeoutMs?: number;
}

interface Claimed {
  rec: WebhookEventRec;
  webhook: WebhookRec;
  /** The next attempt time persisted by the claim; settle keeps it for a retry. */
  due: number;
  /** No retry after this attempt (the last one, or a replay). */
  final: boolean;
}

/** A final attempt (or replay) cut short by a crash is retried after this. */
const LEASE_MS = 60_000;

/** Worker keys: `<webhook id> <event id>` (webhook ids are 36-char UUIDs), so per-endpoint load is countable. */
const slot = (webhookId: string, eventId: string) => `${webhookId} ${eventId}`;

export class WebhookDispatcher extends DueService<Claimed, AttemptOutcome> {
  private readonly perEndpoint: number;
  private readonly timeoutMs: number;
  /** Where the last claim stopped: the next one starts after it (round robin). */
  private lastServed: { team: string; webhook: string } | undefined;

  constructor(
    private readonly svc: DispatcherDeps,
    opts: DispatcherOptions = {},
  ) {
    // Attempts still running after the grace are abandoned: their events are retried after a restart.
    super({ name: 'webhooks', concurrency: opts.concurrency ?? 64, graceMs: 5_000 });
    this.perEndpoint = opts.perEndpoint ?? 4;
    this.timeoutMs = opts.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
  }

  /** Attempts per event: the first, then one after each wait of the schedule. */
  get maxAttempts(): number {
    return this.svc.config.webhooks.retry_schedule.length + 1;
  }

  protected nextDue(): Promise<number | null> {
    return this.svc.store.outbox.nextDue();
  }

  protected key(c: Claimed): string {
    return slot(c.webhook.id, c.rec.id);
  }

  protected attempt(c: Claimed): Promise<AttemptOutcome> {
    return deliver(c.webhook, c.rec, { allowPrivate: this.svc.config.security.allow_private_networks, timeoutMs: this.timeoutMs });
  }

  protected claim(max: number, busy: ReadonlySet<string>): Promise<Claimed[]> {
    const { store, config } = this.svc;
    const load = new Map<string, number>();
    for (const key of busy) load.set(key.slice(0, 36), (load.get(key.slice(0, 36)) ?? 0) + 1);
    return store.write(
      async (tx) => {
        const now = Date.now();
        const out: Claimed[] = [];
        for (const head of await tx.outbox.heads(this.lastServed)) {
          if (out.length >= max) break;
          if (head.due > now) continue;
          const inFlight = load.get(head.webhook) ?? 0;
          let free = Math.min(this.perEndpoint - inFlight, max - out.length);
          if (free <= 0) continue;
          const webhook = await tx.webhooks.get(head.team, head.webhook);
          for (const { due, id } of await tx.outbox.due(head.team, head.webhook, now, free + inFlight)) {
            if (free === 0) break;
            if (busy.has(slot(head.webhook, id))) continue;
            const rec = await tx.webhookEvents.get(head.team, id);
            if (!rec || rec.due !== due) {
              // The event expired (retention) or the entry is stale: nothing to send.
              tx.outbox.remove(head.team, head.webhook, due, id);
              continue;
            }
            if (webhook?.status !== 'enabled') {
              await moveEvent(tx, rec, null, { status: 'failed', replay: false });
              continue;
            }
            const attempts = rec.attempts + 1;
            const final = rec.replay || attempts >= this.maxAttempts;
            const next = now + (final ? LEASE_MS : jittered(retryWait(config.webhooks.retry_schedule, attempts)));
            out.push({ rec: await moveEvent(tx, rec, next, { attempts }), webhook, due: next, final });
            free--;
          }
          this.lastServed = { team: head.team, webhook: head.webhook };
        }
        return out;
        // This node's leases: another takes them over at once if it dies (store/interface.ts).
      },
      { lease: true },
    );
  }

  /** Log the attempt and move the event on: success, a retry at the persisted time, or failed. */
  protected async settle(c: Claimed, out: AttemptOutcome): Promise<void> {
    const { store } = this.svc;
    const { rec } = c;
    const status = await store.write(async (tx) => {
      const cur = await tx.webhookEvents.get(rec.team_id, rec.id);
      if (!cur) return null; // expired meanwhile
      tx.webhookAttempts.put({
        id: newId(),
        team_id: rec.team_id,
        created_at: out.sent_at,
        webhook_id: rec.webhook_id,
        event_id: rec.id,
        http_status_code: out.http_status_code,
        response: out.response,
        duration_ms: out.duration_ms,
        error: out.error,
      });
      if (cur.due !== c.due) {
        // Dropped meanwhile (endpoint disabled or deleted); a success still counts.
        if (out.ok && cur.due === null) await moveEvent(tx, cur, null, { status: 'success' });
        return cur.status;
      }
      if (out.ok) return (await moveEvent(tx, cur, null, { status: 'success', replay: false })).status;
      if (c.final) return (await moveEvent(tx, cur, null, { status: 'failed', replay: false })).status;
      // The next attempt waits the schedule's time from this failure (the claim's was the lease).
      const due = Math.max(c.due, Date.now() + jittered(retryWait(this.svc.config.webhooks.retry_schedule, cur.attempts)));
      return (await moveEvent(tx, cur, due, { status: 'attempting' })).status;
    });
    log.info('webhooks.attempt', {
      team_id: rec.team_id,
      webhook_id: rec.webhook_id,
      event_id: rec.id,
      type: rec.type,
      attempt: rec.attempts,
      http_status_code: out.http_status_code,
      duration_ms: out.duration_ms,
      error: out.error,
      status,
    });
  }
}
