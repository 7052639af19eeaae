// The back office's side of triggers and of automation-wide changes (docs/api.md §24.6, §24.8),
// each a bounded batch in one unit of work:
//   - intake: triggers the ways in committed become runs of the enabled automations that start on
//     their event (due at once), and wake the contact's runs waiting for that event;
//   - cleanup: after `stop`, runs in progress are cancelled; after a delete, runs are deleted;
//     after enabling again, paused runs resume.
// A burst of triggers is taken a batch at a time, so memory never holds more than one batch.
import type { AutomationRec, AutomationRunRec, Store, TriggerRec, Tx } from '../store';
import { newId } from '../ids';
import { log } from '../log';
import { addContact, blankContact } from '../contacts';
import { propertyDefs } from '../contacts/properties';
import { evaluate, type ConditionRule } from './conditions';
import { advance, dropRun, Graph, runContext, saveRun, type AdvanceDeps } from './steps';

/** Triggers taken per unit of work, and runs cleaned up per unit of work. */
export const INTAKE_BATCH = 100;
export const CLEANUP_BATCH = 200;

/**
 * Take up to `limit` triggers, oldest first, in one unit of work. Resolves to how many were taken.
 * A new run's first steps that need only the store run in this same unit of work (steps.ts), up
 * to its first wait or email.
 */
export function takeTriggers(deps: { store: Store } & AdvanceDeps, limit = INTAKE_BATCH): Promise<number> {
  return deps.store.write(async (tx) => {
    const batch = await tx.automationTriggers.next(limit);
    const now = Date.now();
    for (const t of batch) {
      await startRuns(deps, tx, t, now);
      tx.automationTriggers.remove(t.id);
    }
    return batch.length;
  });
}

/** One trigger: the runs it starts and the waiting runs it wakes. */
async function startRuns(deps: AdvanceDeps, tx: Tx, t: TriggerRec, now: number): Promise<void> {
  const team = t.team_id;
  const autos = await tx.automations.findAll('trigger', t.event, team);
  let contact = t.contact_id ? await tx.contacts.get(team, t.contact_id) : await tx.contacts.find('email', (t.email ?? '').toLowerCase(), team);
  if (!contact && t.contact_id) {
    log.warn('automations.trigger_dropped', { team_id: team, event: t.event, contact_id: t.contact_id, reason: 'the contact no longer exists' });
    return;
  }
  if (contact) await wakeWaiting(tx, t, contact.id, now);
  if (!autos.length) return;
  // An event sent by email for an address that is no contact yet: the contact is created as the run starts.
  if (!contact) {
    contact = blankContact(team, t.email!, new Date(now).toISOString());
    await addContact(deps.events, tx, contact);
  }
  for (const a of autos) saveRun(tx, null, await started(deps, tx, newRun(a, contact.id, t, now), a, now));
}

/**
 * A new run advanced as far as the store alone takes it. Should that throw (it does not for a
 * checked definition), the run starts as it is, due at once: the runner advances it, with retries.
 */
async function started(deps: AdvanceDeps, tx: Tx, run: AutomationRunRec, a: AutomationRec, now: number): Promise<AutomationRunRec> {
  try {
    return await advance(deps, tx, run, a, now);
  } catch (e) {
    log.error('automations.start_failed', { team_id: run.team_id, run_id: run.id, error: String((e as Error)?.stack ?? e) });
    return run;
  }
}

function newRun(a: AutomationRec, contactId: string, t: TriggerRec, now: number): AutomationRunRec {
  const at = new Date(now).toISOString();
  return {
    id: newId(),
    team_id: a.team_id,
    created_at: at,
    automation_id: a.id,
    contact_id: contactId,
    status: 'running',
    started_at: at,
    completed_at: null,
    trigger: { event: t.event, payload: t.payload },
    received: {},
    at: new Graph(a).trigger().key,
    state: 'ready',
    resume: null,
    due: now,
    waiting_for: null,
    attempts: 0,
    rev: 0,
    steps: [],
  };
}

/** Runs of the contact waiting for this event (and whose filter it passes) continue by `event_received`. */
async function wakeWaiting(tx: Tx, t: TriggerRec, contactId: string, now: number): Promise<void> {
  const waiting = await tx.automationRuns.findAll('waiting', `${contactId}:${t.event}`, t.team_id);
  for (const run of waiting) {
    if (run.resume !== null) continue; // already woken, not yet advanced: the first event counts
    const auto = await tx.automations.get(t.team_id, run.automation_id);
    const rule = auto && new Graph(auto).step(run.at)?.config.filter_rule;
    if (rule) {
      // The filter reads the awaited event's payload as `event.*`.
      const contact = await tx.contacts.get(t.team_id, contactId);
      const ctx = { ...runContext(run, contact, await propertyDefs(tx, t.team_id)), event: t.payload };
      if (!evaluate(rule as ConditionRule, ctx)) continue;
    }
    saveRun(tx, run, { ...run, resume: 'event_received', received: { ...run.received, [t.event]: t.payload }, due: now });
  }
}

/**
 * One batch of one automation's cleanup, in one unit of work; its entry goes once a batch finds
 * nothing left to do. Resolves to how many runs were changed.
 */
export async function cleanUp(store: Store, limit = CLEANUP_BATCH): Promise<number> {
  const [entry] = await store.automationCleanup.due(Number.MAX_SAFE_INTEGER, 1);
  if (!entry) return 0;
  const { team, id } = entry;
  return store.write(async (tx) => {
    const now = Date.now();
    const at = new Date(now).toISOString();
    const auto = await tx.automations.get(team, id);
    let done = 0;
    if (!auto) {
      // Deleted: its runs go.
      const page = await tx.automationRuns.pageBy('automation', id, team, { limit }, limit);
      for (const r of page.data) dropRun(tx, r);
      done += page.data.length;
    } else {
      const stoppedAt = auto.stopped_at;
      if (stoppedAt) {
        // Stopped: every run started before the stop and still running is cancelled.
        const page = await tx.automationRuns.pageBy('active', id, team, { limit }, limit, (r) => (r.created_at <= stoppedAt ? r : undefined));
        for (const r of page.data) saveRun(tx, r, cancelled(r, at));
        done += page.data.length;
      }
      if (auto.status === 'enabled') {
        // Enabled again: paused runs take up the state they left, at once.
        const page = await tx.automationRuns.pageBy('paused', id, team, { limit: limit - done }, limit - done);
        for (const r of page.data) saveRun(tx, r, { ...r, state: r.paused_from ?? 'ready', paused_from: undefined, due: now });
        done += page.data.length;
      }
    }
    if (done === 0) tx.automationCleanup.remove(entry.due, team, id);
    return done;
  });
}

/** A run cancelled by `stop`: an open history entry (a wait) is closed as skipped. */
function cancelled(r: AutomationRunRec, at: string): AutomationRunRec {
  const steps = r.steps.map((s) => (s.completed_at === null ? { ...s, status: 'skipped' as const, completed_at: at } : s));
  return { ...r, steps, status: 'cancelled', state: 'done', due: null, waiting_for: null, resume: null, completed_at: at };
}
