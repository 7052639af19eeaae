// Automations (docs/api.md §24): create, update, duplicate, stop and delete — each one unit of work
// whose definition is checked inside it (definition.ts), after the wire schema
// (src/schemas/automations.ts) checked its shapes.
// Runs are started and advanced by the back office (runner.ts); `stop`, delete and re-enabling
// leave the automation's runs to be cancelled, deleted or resumed there in bounded batches
// (cleanup.ts), so no request ever touches an unbounded number of runs.
import type { AutomationRec, Store, Tx } from '../store';
import type { AutomationRequest } from '../schemas/automations';
import { errors } from '../errors';
import { newId, nowIso } from '../ids';
import { automationFields, checkDefinition } from './definition';

export { SYSTEM_EVENTS } from './custom-events';

/** One unit of work on the automation `id` (404 when it is not the team's). */
function onAutomation<T>(store: Store, team: string, id: string, fn: (tx: Tx, cur: AutomationRec, at: string) => Promise<T> | T): Promise<T> {
  return store.write(async (tx) => {
    const cur = await tx.automations.get(team, id);
    if (!cur) throw errors.notFound('Automation');
    return fn(tx, cur, nowIso());
  });
}

export function createAutomation(store: Store, team: string, body: AutomationRequest): Promise<AutomationRec> {
  const f = automationFields(body, 'create');
  const status = f.status ?? 'disabled';
  return store.write(async (tx) => {
    // Checked inside the unit of work: what the definition names exists when it commits.
    const def = await checkDefinition(tx, team, f.steps!, f.connections!, status === 'enabled');
    const at = nowIso();
    const rec: AutomationRec = { id: newId(), team_id: team, created_at: at, updated_at: null, name: f.name!, status, ...def, stopped_at: null };
    tx.automations.put(rec);
    return rec;
  });
}

/**
 * PATCH: any of `name`, `status`, `steps`, `connections`; the definition is checked again as a
 * whole. Runs in progress continue from the step they are at (by key). Disabling pauses them where
 * they are; enabling again resumes them.
 */
export function updateAutomation(store: Store, team: string, id: string, body: AutomationRequest): Promise<AutomationRec> {
  const f = automationFields(body, 'update');
  return onAutomation(store, team, id, async (tx, cur, at) => {
    const status = f.status ?? cur.status;
    const enabling = status === 'enabled' && cur.status !== 'enabled';
    const def =
      f.steps || f.connections || enabling
        ? await checkDefinition(tx, team, f.steps ?? cur.steps, f.connections ?? cur.connections, status === 'enabled')
        : cur;
    const next: AutomationRec = {
      ...cur,
      name: f.name ?? cur.name,
      status,
      steps: def.steps,
      connections: def.connections,
      trigger: def.trigger,
      updated_at: at,
    };
    tx.automations.put(next);
    if (enabling) tx.automationCleanup.add(0, team, id);
    return next;
  });
}

/** A disabled copy named "<name> (copy)". */
export function duplicateAutomation(store: Store, team: string, id: string): Promise<AutomationRec> {
  return onAutomation(store, team, id, (tx, cur, at) => {
    const copy: AutomationRec = { ...cur, id: newId(), created_at: at, updated_at: null, name: `${cur.name} (copy)`, status: 'disabled', stopped_at: null };
    tx.automations.put(copy);
    return copy;
  });
}

/** Stop (docs/api.md §24.1): disabled, and every run in progress is cancelled (in the background). */
export function stopAutomation(store: Store, team: string, id: string): Promise<AutomationRec> {
  return onAutomation(store, team, id, (tx, cur, at) => {
    const next: AutomationRec = { ...cur, status: 'disabled', stopped_at: at, updated_at: at };
    tx.automations.put(next);
    tx.automationCleanup.add(0, team, id);
    return next;
  });
}

/** Delete; its runs go in the background. Resolves to its id. */
export function removeAutomation(store: Store, team: string, id: string): Promise<string> {
  return onAutomation(store, team, id, (tx, cur) => {
    tx.automations.remove(team, cur.id);
    tx.automationCleanup.add(0, team, id);
    return cur.id;
  });
}
