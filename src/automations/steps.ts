// The steps of a run (docs/api.md §24.3, §24.8), executed inside one unit of work: from the step a
// run is at, every step that needs only the store — conditions, contact updates, segment
// memberships, a contact's deletion — runs at once, until the run reaches a wait (a `delay` or
// `wait_for_event`: its wake-up time is persisted), a `send_email` step (the email is prepared
// outside the unit of work and committed together with the run's next state, runner.ts), or its
// end. Each step leaves an entry in the run's history, with its times and outcome.
import type { AutomationRec, AutomationRunRec, AutomationStep, ConnectionType, ContactRec, RunStepRec, StoreReader, Tx } from '../store';
import { MAX_RUN_HISTORY } from '../store';
import type { Events } from '../events';
import { ApiError, errors } from '../errors';
import { nowIso } from '../ids';
import { changeContact, removeContact, type ContactFields } from '../contacts';
import { propertyDefs, propertyValues, type PropertyDefs } from '../contacts/properties';
import { subscriptionOf } from '../topics';
import { evaluate, type ConditionRule } from './conditions';
import { contactScope, isVar, lookup, type RunContext } from './context';
import { durationField, MAX_WAIT_MS } from './durations';

/** A bound on the steps one advance executes (a definition without instant loops never reaches it). */
const MAX_STEPS_PER_ADVANCE = 200;

/** The outcome of a `send_email` step, committed with the run's next state. */
export interface SentEmail {
  key: string;
  /** The email committed, or null when the step was skipped (the reason in `skipped`). */
  emailId: string | null;
  skipped?: string;
}

/** An automation's steps by key, and where each connection leads. */
export class Graph {
  private readonly steps = new Map<string, AutomationStep>();
  private readonly next = new Map<string, string>();

  constructor(a: AutomationRec) {
    for (const s of a.steps) this.steps.set(s.key, s);
    for (const c of a.connections) this.next.set(`${c.from}\u0000${c.type}`, c.to);
  }

  step(key: string | null): AutomationStep | undefined {
    return key === null ? undefined : this.steps.get(key);
  }

  follow(key: string, type: ConnectionType): string | undefined {
    return this.next.get(`${key}\u0000${type}`);
  }

  trigger(): AutomationStep {
    for (const s of this.steps.values()) if (s.type === 'trigger') return s;
    throw new Error('automation without a trigger step');
  }
}

/** Why a `send_email` step sends nothing to this contact: unsubscribed from everything, or from the step's topic. */
export async function skipReason(r: StoreReader, c: ContactRec, step: AutomationStep): Promise<string | null> {
  if (c.unsubscribed) return 'unsubscribed';
  const topicId = step.config.topic_id as string | undefined;
  if (topicId) {
    const topic = await r.topics.get(c.team_id, topicId);
    if (!topic || (await subscriptionOf(r, topic, c.id)) !== 'opt_in') return 'opted_out';
  }
  return null;
}

/** What a run's paths read, for a contact (docs/api.md §24.4). */
export function runContext(run: AutomationRunRec, contact: ContactRec | undefined, defs: PropertyDefs): RunContext {
  return { event: run.trigger.payload, contact: contact ? contactScope(contact, defs) : {}, wait_events: run.received };
}

/** A `{ "var" }` resolved, or a static value as given. */
export function resolve(v: unknown, ctx: RunContext): unknown {
  return isVar(v) ? lookup(ctx, v.var) : v;
}

/** A run being advanced: its record as it will be stored, and a clock. */
class Advancing {
  readonly r: AutomationRunRec;
  readonly at = nowIso();

  constructor(
    run: AutomationRunRec,
    readonly now: number,
  ) {
    this.r = { ...run, steps: [...run.steps], received: { ...run.received } };
  }

  /** A history entry for `step`; instant ones are complete when made. */
  record(
    step: AutomationStep,
    status: RunStepRec['status'],
    output: Record<string, unknown> | null = null,
    error: Record<string, unknown> | null = null,
  ): void {
    const done = status !== 'waiting' && status !== 'running';
    this.r.steps.push({ key: step.key, type: step.type, status, output, error, started_at: this.at, completed_at: done ? this.at : null, created_at: this.at });
    if (this.r.steps.length > MAX_RUN_HISTORY) {
      this.r.steps.shift();
      this.r.steps_dropped = (this.r.steps_dropped ?? 0) + 1;
    }
  }

  /** Close the open entry of the waited-on step. */
  close(step: AutomationStep, status: RunStepRec['status'], output: Record<string, unknown> | null): void {
    for (let i = this.r.steps.length - 1; i >= 0; i--) {
      const e = this.r.steps[i]!;
      if (e.key !== step.key || e.completed_at !== null) continue;
      this.r.steps[i] = { ...e, status, output: { ...e.output, ...output }, completed_at: this.at };
      return;
    }
  }

  /** Wait until `due` in `state`. */
  hold(state: 'delaying' | 'waiting', due: number, waitingFor: string | null = null): AutomationRunRec {
    Object.assign(this.r, { state, due, waiting_for: waitingFor, resume: null, attempts: 0 });
    return this.r;
  }

  /** The run is over. */
  end(status: 'completed' | 'failed' | 'cancelled'): AutomationRunRec {
    Object.assign(this.r, { status, state: 'done', due: null, waiting_for: null, resume: null, completed_at: this.at });
    return this.r;
  }

  fail(step: AutomationStep | null, e: ApiError | { name: string; message: string }): AutomationRunRec {
    const error = e instanceof ApiError ? { name: e.errorName, message: e.message } : e;
    if (step) this.record(step, 'failed', null, error);
    else {
      // No step to name (it was removed): the entry still open, if any, carries the error.
      const i = this.r.steps.findLastIndex((s) => s.completed_at === null);
      if (i >= 0) this.r.steps[i] = { ...this.r.steps[i]!, status: 'failed', error, completed_at: this.at };
    }
    return this.end('failed');
  }
}

export interface AdvanceDeps {
  events: Events;
}

/**
 * In a unit of work: advance `run` as far as it goes now and answer its next state (the caller
 * stores it, saveRun). `sent` is the outcome of the `send_email` step the run is at, committed in
 * this same unit of work.
 */
export async function advance(
  deps: AdvanceDeps,
  tx: Tx,
  run: AutomationRunRec,
  auto: AutomationRec | undefined,
  now: number,
  sent?: SentEmail,
): Promise<AutomationRunRec> {
  const a = new Advancing(run, now);
  const r = a.r;
  if (r.status !== 'running') return r;
  // Deleted meanwhile: the cleanup would cancel it anyway.
  if (!auto) return a.end('cancelled');
  // Disabled: the run holds where it is until the automation is enabled again (cleanup.ts).
  if (auto.status !== 'enabled') {
    if (r.state !== 'paused') Object.assign(r, { paused_from: r.state, state: 'paused', due: null });
    return r;
  }
  const graph = new Graph(auto);
  let defs: PropertyDefs | null = null;
  let contact: ContactRec | undefined | null = null;
  const loadContact = async () => {
    if (contact === null) contact = await tx.contacts.get(r.team_id, r.contact_id);
    return contact;
  };
  const loadDefs = async () => {
    defs ??= await propertyDefs(tx, r.team_id);
    return defs;
  };
  const context = async () => runContext(r, await loadContact(), await loadDefs());

  for (let n = 0; n < MAX_STEPS_PER_ADVANCE; n++) {
    const step = graph.step(r.at);
    if (!step) return a.fail(null, { name: 'step_removed', message: `The step \`${r.at}\` is no longer part of the automation.` });
    let next: string | undefined;
    if (r.state === 'delaying' || r.state === 'waiting') {
      // The wait is over: its time came, or (waiting) the event arrived.
      const outcome: ConnectionType = r.state === 'delaying' ? 'default' : (r.resume ?? 'timeout');
      a.close(step, 'completed', r.state === 'waiting' ? { outcome } : null);
      Object.assign(r, { state: 'ready', resume: null, waiting_for: null });
      next = graph.follow(step.key, outcome) ?? (outcome !== 'default' ? graph.follow(step.key, 'default') : undefined);
    } else {
      const c = step.config;
      switch (step.type) {
        case 'trigger':
          a.record(step, 'completed', { event_name: r.trigger.event, payload: r.trigger.payload });
          next = graph.follow(step.key, 'default');
          break;
        case 'delay': {
          const ms = durationField(c.duration, 'duration');
          a.record(step, 'waiting', { duration: c.duration });
          return a.hold('delaying', now + ms);
        }
        case 'wait_for_event': {
          const ms = c.timeout === undefined ? MAX_WAIT_MS : durationField(c.timeout, 'timeout');
          a.record(step, 'waiting', { event_name: c.event_name, timeout: c.timeout ?? null });
          return a.hold('waiting', now + ms, c.event_name as string);
        }
        case 'condition': {
          const met = evaluate(c as unknown as ConditionRule, await context());
          a.record(step, 'completed', { result: met });
          next = graph.follow(step.key, met ? 'condition_met' : 'condition_not_met');
          break;
        }
        case 'send_email': {
          const cur = await loadContact();
          if (!cur) return a.fail(step, { name: 'contact_not_found', message: 'The contact of this run no longer exists.' });
          if (sent?.key === step.key) {
            if (sent.emailId) a.record(step, 'completed', { email_id: sent.emailId });
            else a.record(step, 'skipped', { reason: sent.skipped ?? 'skipped' });
            sent = undefined;
          } else {
            const why = await skipReason(tx, cur, step);
            // Not skipped: the email is prepared outside this unit of work, at once.
            if (!why) return Object.assign(r, { state: 'ready', due: now });
            a.record(step, 'skipped', { reason: why });
          }
          next = graph.follow(step.key, 'default');
          break;
        }
        case 'contact_update': {
          const cur = await loadContact();
          if (!cur) return a.fail(step, { name: 'contact_not_found', message: 'The contact of this run no longer exists.' });
          try {
            const changed = await updateFields(deps, tx, cur, c, await context(), await loadDefs());
            if (changed) contact = changed;
            a.record(step, 'completed', { updated: !!changed });
          } catch (e) {
            if (e instanceof ApiError) return a.fail(step, e);
            throw e;
          }
          next = graph.follow(step.key, 'default');
          break;
        }
        case 'add_to_segment':
        case 'remove_from_segment': {
          const segmentId = c.segment_id as string;
          if (!(await tx.segments.get(r.team_id, segmentId)))
            return a.fail(step, { name: 'segment_not_found', message: `The segment ${segmentId} no longer exists.` });
          if (!(await loadContact())) return a.fail(step, { name: 'contact_not_found', message: 'The contact of this run no longer exists.' });
          // Posthorn: memberships an automation changes trigger no automation (no chain of runs without end).
          const changed =
            step.type === 'add_to_segment'
              ? await tx.memberships.add(r.team_id, segmentId, r.contact_id, a.at)
              : await tx.memberships.remove(r.team_id, segmentId, r.contact_id);
          a.record(step, 'completed', { segment_id: segmentId, changed });
          next = graph.follow(step.key, 'default');
          break;
        }
        case 'contact_delete': {
          const cur = await loadContact();
          if (cur) await removeContact(deps.events, tx, cur);
          a.record(step, 'completed', { contact_id: r.contact_id, deleted: !!cur });
          contact = undefined;
          next = undefined;
          break;
        }
      }
    }
    if (next === undefined) return a.end('completed');
    Object.assign(r, { at: next, state: 'ready', attempts: 0 });
  }
  // Not reached by a checked definition; bounded anyway: the rest is due at once.
  return Object.assign(r, { due: now });
}

/** A `contact_update` step's fields, values resolved (docs/api.md §24.3); the contact as stored now, or null when unchanged. */
async function updateFields(
  deps: AdvanceDeps,
  tx: Tx,
  cur: ContactRec,
  c: Record<string, unknown>,
  ctx: RunContext,
  defs: PropertyDefs,
): Promise<ContactRec | null> {
  const fields: ContactFields = {};
  for (const name of ['first_name', 'last_name'] as const) {
    if (!Object.hasOwn(c, name)) continue;
    const v = resolve(c[name], ctx);
    if (v === undefined) continue;
    if (v !== null && typeof v === 'object') throw errors.invalidField(name, 'the value is not text.');
    fields[name] = v === null ? null : String(v);
  }
  if (Object.hasOwn(c, 'unsubscribed')) {
    const v = resolve(c.unsubscribed, ctx);
    if (typeof v === 'boolean') fields.unsubscribed = v;
    else if (typeof v === 'string' && /^(true|false)$/i.test(v)) fields.unsubscribed = v.toLowerCase() === 'true';
    else if (v !== undefined) throw errors.invalidField('unsubscribed', 'the value is not a boolean.');
  }
  const props: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries((c.properties as Record<string, unknown> | undefined) ?? {})) {
    const v = resolve(raw, ctx);
    if (v === undefined) continue;
    const type = defs.get(key)?.type;
    // A dynamic value of the other type is converted when it can be: "42" for a number, 42 for a string.
    props[key] =
      type === 'number' && typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))
        ? Number(v)
        : type === 'string' && typeof v === 'number'
          ? String(v)
          : v;
  }
  return changeContact(deps.events, tx, cur, fields, propertyValues(defs, props));
}

/** The run failed at `step` (or, null, at the step it is at) with `error`: history and status say so. */
export function failRun(run: AutomationRunRec, step: AutomationStep | null, error: ApiError | { name: string; message: string }): AutomationRunRec {
  return new Advancing(run, Date.now()).fail(step, error);
}

/** Store `next` in place of `cur` (null: a new run), moving its due-index entry and bumping its revision. */
export function saveRun(tx: Tx, cur: AutomationRunRec | null, next: AutomationRunRec): void {
  if (cur?.due != null && cur.due !== next.due) tx.automationDue.remove(cur.due, next.team_id, next.id);
  if (next.due !== null && cur?.due !== next.due) tx.automationDue.add(next.due, next.team_id, next.id);
  tx.automationRuns.put({ ...next, rev: cur ? cur.rev + 1 : 0 });
}

/** A run and its due-index entry go (its automation was deleted). */
export function dropRun(tx: Tx, run: AutomationRunRec): void {
  if (run.due !== null) tx.automationDue.remove(run.due, run.team_id, run.id);
  tx.automationRuns.remove(run.team_id, run.id);
}
