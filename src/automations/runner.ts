// The automation runner (docs/api.md §24.8, docs/ARCHITECTURE.md §4, "The walk of an automation
// run"): the back office's worker that turns triggers into runs and advances runs whose next step
// is due, on the shared due-work loop (a DueService, work/due-service.ts).
//
//   claim   — take a batch of triggers (intake.ts), a batch of cleanup, then the runs due now
//             (read only: a run in flight is never claimed twice, and a run a crash interrupted
//             is simply still due when the service starts again);
//   attempt — no writes: a run at a `send_email` step has its email prepared by the sending core
//             (template rendered, every check of a send);
//   settle  — one unit of work: the run, still at the revision the attempt read, advances
//             (steps.ts) — and a prepared email commits in that same unit of work (the sending
//             core's commit with `also`), so a crash either keeps both or neither: a step's email
//             is never sent twice, nor skipped.
//
// A step that fails for a reason of its own (an ApiError: the template was unpublished, the domain
// lost its verification) fails the run, recorded in its history. Anything else is retried with
// backoff, and fails the run after MAX_ATTEMPTS.
import type { AutomationRunRec, AutomationStep, ContactRec, Store, Tx } from '../store';
import type { Events } from '../events';
import type { Config } from '../config';
import { ApiError } from '../errors';
import { newId } from '../ids';
import { log } from '../log';
import { DueService } from '../work/due-service';
import { jittered, retryWait } from '../work/retry';
import { prepare, commit, type GroupCommit, type Prepared } from '../sending/submit';
import { SignedLinks } from '../links/signed';
import { propertyDefs } from '../contacts/properties';
import { advance, failRun, resolve, runContext, saveRun, skipReason, type SentEmail } from './steps';
import { takeTriggers, cleanUp } from './intake';
import { QuotaExceeded } from '../limits/quota';

export interface RunnerDeps {
  store: Store;
  events: Events;
  config: Pick<Config, 'security' | 'public_url' | 'limits' | 'delivery'>;
  /** The sending core's group commit on this thread's store: a run's emails commit through it. */
  commits: GroupCommit;
}

/** How long a claimed run is a node's own in cluster mode before another node may take it up. */
export const RUN_LEASE_MS = 60_000;

/** A due run, as the due index named it. */
export interface Claimed {
  team: string;
  id: string;
  due: number;
}

type Plan =
  | { kind: 'stale'; orphan: boolean }
  | { kind: 'advance'; rev: number }
  | { kind: 'send'; rev: number; step: AutomationStep; prepared: Prepared }
  | { kind: 'failed'; rev: number; step: AutomationStep; error: ApiError }
  | { kind: 'error'; error: string };

/** Waits after an attempt failed for an unexpected reason; the run fails after the last. */
export const RETRIES = [5_000, 30_000, 120_000, 600_000];
export const MAX_ATTEMPTS = RETRIES.length + 1;

/** The run moved on since the attempt read it: what the attempt made is dropped. */
class StaleRun extends Error {}

export class AutomationRunner extends DueService<Claimed, Plan> {
  private readonly links: SignedLinks;

  constructor(
    private readonly deps: RunnerDeps,
    opts: { concurrency?: number } = {},
  ) {
    super({ name: 'automations', concurrency: opts.concurrency ?? 64, graceMs: 10_000 });
    this.links = new SignedLinks(deps.store.secret('links'), deps.config.public_url);
  }

  override start(): void {
    super.start();
    log.info('automations.started', {});
  }

  /** Triggers and cleanups waiting are due now. */
  protected async nextDue(): Promise<number | null> {
    const { store } = this.deps;
    return (await store.automationTriggers.next(1)).length || (await store.automationCleanup.nextDue()) !== null ? 0 : store.automationDue.nextDue();
  }

  protected key(c: Claimed): string {
    return c.id;
  }

  protected async claim(max: number, busy: ReadonlySet<string>): Promise<Claimed[]> {
    const { store } = this.deps;
    await takeTriggers(this.deps);
    await cleanUp(store);
    if (store.exclusive) {
      const due = await store.automationDue.due(Date.now(), max + busy.size);
      return due.filter((d) => !busy.has(d.id)).slice(0, max);
    }
    return leaseRuns(store, max, busy);
  }

  /** What advancing the run takes: for a `send_email` step, the email prepared (no writes). */
  protected async attempt(c: Claimed): Promise<Plan> {
    const { store } = this.deps;
    try {
      const run = await store.automationRuns.get(c.team, c.id);
      if (!run || run.due !== c.due || run.status !== 'running') return { kind: 'stale', orphan: !run || run.due !== c.due };
      const auto = await store.automations.get(c.team, run.automation_id);
      const step = auto?.status === 'enabled' && run.state === 'ready' ? auto.steps.find((s) => s.key === run.at) : undefined;
      if (step?.type !== 'send_email') return { kind: 'advance', rev: run.rev };
      const contact = await store.contacts.get(c.team, run.contact_id);
      // A contact gone or not to be emailed: the advance records it, in its unit of work.
      if (!contact || (await skipReason(store, contact, step))) return { kind: 'advance', rev: run.rev };
      try {
        return { kind: 'send', rev: run.rev, step, prepared: await this.prepareEmail(run, step, contact) };
      } catch (e) {
        if (e instanceof ApiError) return { kind: 'failed', rev: run.rev, step, error: e };
        throw e;
      }
    } catch (e) {
      return { kind: 'error', error: String((e as Error)?.stack ?? e) };
    }
  }

  /**
   * The step's email through the sending core (docs/api.md §24.5): its template with the step's
   * variables, to the contact, with the unsubscribe link (List-Unsubscribe, RFC 2369 / RFC 8058,
   * and `{{{RESEND_UNSUBSCRIBE_URL}}}`); tracked, suppressed and scoped to a topic like any email.
   */
  private async prepareEmail(run: AutomationRunRec, step: AutomationStep, contact: ContactRec): Promise<Prepared> {
    const { store } = this.deps;
    const c = step.config as {
      template: { id: string; variables: Record<string, unknown> };
      from?: string;
      subject?: string;
      reply_to?: string | string[];
      topic_id?: string;
    };
    const ctx = runContext(run, contact, await propertyDefs(store, run.team_id));
    const variables: Record<string, string | number> = {};
    for (const [key, raw] of Object.entries(c.template.variables ?? {})) {
      const v = resolve(raw, ctx);
      // A value the run does not have leaves the variable to its fallback.
      if (v === undefined || v === null) continue;
      variables[key] = typeof v === 'number' || typeof v === 'string' ? v : typeof v === 'boolean' ? String(v) : JSON.stringify(v);
    }
    const emailId = newId();
    const unsubscribeUrl = this.links.unsubscribeUrl({ team: run.team_id, contact: contact.id, email: emailId });
    const input = {
      from: c.from,
      to: contact.email,
      subject: c.subject,
      reply_to: c.reply_to,
      topic_id: c.topic_id,
      template: { id: c.template.id, variables },
      headers: { 'List-Unsubscribe': `<${unsubscribeUrl}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
    };
    return prepare(
      this.deps,
      { team: run.team_id, key: null, contactId: contact.id, emailId, templateValues: { RESEND_UNSUBSCRIBE_URL: unsubscribeUrl } },
      input,
    );
  }

  protected async settle(c: Claimed, plan: Plan): Promise<void> {
    const { store } = this.deps;
    try {
      switch (plan.kind) {
        case 'stale':
          // An index entry no run stands behind any more: it goes.
          if (plan.orphan)
            await store.write(async (tx) => {
              const run = await tx.automationRuns.get(c.team, c.id);
              if (!run || run.due !== c.due) tx.automationDue.remove(c.due, c.team, c.id);
            });
          return;
        case 'advance':
          await store.write((tx) => this.step(tx, c, plan.rev));
          return;
        case 'failed':
          await store.write(async (tx) => {
            const run = await this.current(tx, c, plan.rev);
            saveRun(tx, run, failRun(run, plan.step, plan.error));
          });
          log.warn('automations.step_failed', { team_id: c.team, run_id: c.id, step: plan.step.key, error: plan.error.message });
          return;
        case 'send': {
          let skipped: string | null = null;
          // Read again inside the unit of work: a contact who unsubscribed meanwhile gets nothing.
          const keep = async (tx: Tx) => {
            const contact = await tx.contacts.get(c.team, plan.prepared.email.contact_id!);
            skipped = contact ? await skipReason(tx, contact, plan.step) : 'contact_not_found';
            return skipped === null;
          };
          const also = (tx: Tx) =>
            this.step(tx, c, plan.rev, { key: plan.step.key, emailId: skipped === null ? plan.prepared.email.id : null, skipped: skipped ?? undefined });
          await commit(this.deps, [plan.prepared], { keep, also });
          return;
        }
        case 'error':
          throw new Error(plan.error);
      }
    } catch (e) {
      if (e instanceof StaleRun) return;
      if (e instanceof QuotaExceeded) return this.waitForQuota(c, e);
      await this.retryLater(c, String((e as Error)?.stack ?? e));
    }
  }

  /**
   * The team's sending limit is reached (docs/api.md §6.1): the run's email step is tried again
   * when the period ends — a wait, not a failed attempt (spread out, so runs do not all go at once).
   */
  private async waitForQuota(c: Claimed, e: QuotaExceeded): Promise<void> {
    await this.deps.store.write(async (tx) => {
      const run = await tx.automationRuns.get(c.team, c.id);
      if (run?.status !== 'running' || run.due !== c.due) return;
      saveRun(tx, run, { ...run, due: e.resetsAt + Math.floor(Math.random() * 60_000) });
    });
    log.warn('automations.quota_reached', { team_id: c.team, run_id: c.id, resumes_at: new Date(e.resetsAt).toISOString(), reason: e.message });
  }

  /** The run as the attempt read it, or StaleRun (thrown: the unit of work keeps nothing). */
  private async current(tx: Tx, c: Claimed, rev: number): Promise<AutomationRunRec> {
    const run = await tx.automationRuns.get(c.team, c.id);
    if (!run || run.rev !== rev || run.due !== c.due) throw new StaleRun();
    return run;
  }

  /** In the settling unit of work: advance the run, `sent` being its email step's outcome. */
  private async step(tx: Tx, c: Claimed, rev: number, sent?: SentEmail): Promise<void> {
    const run = await this.current(tx, c, rev);
    const auto = await tx.automations.get(c.team, run.automation_id);
    saveRun(tx, run, await advance(this.deps, tx, run, auto, Date.now(), sent));
  }

  /** An unexpected failure: try the step again later, and fail the run after the last attempt. */
  private async retryLater(c: Claimed, error: string): Promise<void> {
    const failed = await this.deps.store.write(async (tx) => {
      const run = await tx.automationRuns.get(c.team, c.id);
      // Moved on meanwhile (an event woke it, stop cancelled it): that state stands.
      if (run?.status !== 'running' || run.due !== c.due) return null;
      const attempts = run.attempts + 1;
      if (attempts >= MAX_ATTEMPTS) {
        const step = (await tx.automations.get(c.team, run.automation_id))?.steps.find((s) => s.key === run.at) ?? null;
        saveRun(tx, run, { ...failRun(run, step, { name: 'application_error', message: 'The step kept failing.' }), attempts });
        return true;
      }
      saveRun(tx, run, { ...run, attempts, due: Date.now() + jittered(retryWait(RETRIES, attempts)) });
      return false;
    });
    if (failed !== null) log.error(failed ? 'automations.run_failed' : 'automations.attempt_failed', { team_id: c.team, run_id: c.id, error });
  }
}

/**
 * Cluster mode: up to `max` due runs (none of `busy`) leased in a unit of work of their own —
 * claimed, so another node's claim passes over them, and made due again at the lease's end, so a
 * run whose node dies is taken up by another then. A lease that runs out while its node is still
 * at work costs only repeated preparation: a step is saved against the run's revision, once.
 */
export async function leaseRuns(store: Store, max: number, busy: ReadonlySet<string> = new Set()): Promise<Claimed[]> {
  return store.write(
    async (tx) => {
      const now = Date.now();
      const out: Claimed[] = [];
      for (const d of await tx.automationDue.due(now, max + busy.size)) {
        if (busy.has(d.id) || out.length >= max) continue;
        const run = await tx.automationRuns.get(d.team, d.id);
        // An index entry no running run stands behind: the attempt finds it stale and drops it.
        if (!run || run.due !== d.due || run.status !== 'running') {
          out.push(d);
          continue;
        }
        const lease = now + RUN_LEASE_MS;
        saveRun(tx, run, { ...run, due: lease });
        out.push({ ...d, due: lease });
      }
      return out;
      // This node's leases: another takes them over at once if it dies (store/interface.ts).
    },
    { lease: true },
  );
}
