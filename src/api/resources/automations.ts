// Automations (docs/api.md §24): create, list, retrieve, update, duplicate, stop and delete, and
// their runs with each run's step history. The logic lives in src/automations; the runs themselves
// are advanced by the back office (src/automations/runner.ts).
import type { ApiContext } from '../app';
import type { AutomationRec, AutomationRunRec } from '../../store';
import { pageQuery, listOf } from '../platform/params';
import { errors } from '../../errors';
import { createAutomation, duplicateAutomation, removeAutomation, stopAutomation, updateAutomation } from '../../automations';
import { findRun, runStatuses } from '../../automations/runs';
import { resource, route } from '../platform/route';
import { IgnoredBody, UuidParams } from '../../schemas/common';
import {
  Automation,
  AutomationDeleted,
  AutomationList,
  AutomationListQuery,
  AutomationRef,
  AutomationRun,
  AutomationRunList,
  type AutomationRunSummary,
  AutomationStopped,
  type AutomationSummary,
  CreateAutomationRequest,
  RunListQuery,
  UpdateAutomationRequest,
} from '../../schemas/automations';

// Views (docs/api.md §24.1, §24.7). `updated_at` is a time, as Resend's document says: the creation
// time until the first update (the record keeps null for "never updated").
const summary = (a: AutomationRec): AutomationSummary => ({
  id: a.id,
  name: a.name,
  status: a.status,
  created_at: a.created_at,
  updated_at: a.updated_at ?? a.created_at,
});
const view = (a: AutomationRec): Automation => ({
  object: 'automation',
  ...summary(a),
  steps: a.steps.map(({ key, type, config }) => ({ key, type, config })),
  connections: a.connections.map(({ from, to, type }) => ({ from, to, type })),
});
const runSummary = (r: AutomationRunRec): AutomationRunSummary => ({
  id: r.id,
  status: r.status,
  started_at: r.started_at,
  completed_at: r.completed_at,
  created_at: r.created_at,
  // Posthorn: whom the run is for.
  contact_id: r.contact_id,
});
const runView = (r: AutomationRunRec): AutomationRun => ({
  object: 'automation_run',
  ...runSummary(r),
  steps: r.steps.map((s) => ({
    key: s.key,
    type: s.type,
    status: s.status,
    output: s.output,
    error: s.error,
    started_at: s.started_at,
    completed_at: s.completed_at,
    created_at: s.created_at,
  })),
});

const Params = UuidParams('id');
const RunParams = UuidParams('id', 'run_id');

export const automationsResource = resource('Automations', ({ store }: ApiContext) => {
  /** The team's automation named by the path, or 404. */
  const load = async (team: string, id: string) => {
    const a = await store.automations.get(team, id);
    if (!a) throw errors.notFound('Automation');
    return a;
  };
  const ref = (a: AutomationRec) => ({ object: 'automation' as const, id: a.id });

  return [
    route({
      method: 'POST',
      path: '/automations',
      summary: 'Create an automation',
      access: 'team',
      body: CreateAutomationRequest,
      status: 201,
      response: AutomationRef,
      handler: async ({ caller, body }) => ref(await createAutomation(store, caller.team, body)),
    }),
    route({
      method: 'GET',
      path: '/automations',
      summary: 'List automations (optionally of one status)',
      access: 'team',
      query: AutomationListQuery,
      body: 'none',
      response: AutomationList,
      async handler({ caller, query }) {
        const { status } = query;
        return listOf(await store.automations.page(caller.team, pageQuery(query), 20, (a) => (status && a.status !== status ? undefined : summary(a))));
      },
    }),
    route({
      method: 'GET',
      path: '/automations/:id',
      summary: 'Retrieve an automation with its steps and connections',
      access: 'team',
      params: Params,
      body: 'none',
      response: Automation,
      handler: async ({ caller, params }) => view(await load(caller.team, params.id)),
    }),
    route({
      method: 'PATCH',
      path: '/automations/:id',
      summary: 'Update an automation',
      access: 'team',
      params: Params,
      body: UpdateAutomationRequest,
      response: AutomationRef,
      handler: async ({ caller, params, body }) => ref(await updateAutomation(store, caller.team, params.id, body)),
    }),
    route({
      method: 'DELETE',
      path: '/automations/:id',
      summary: 'Delete an automation (its runs end)',
      access: 'team',
      params: Params,
      body: IgnoredBody,
      response: AutomationDeleted,
      handler: async ({ caller, params }) => ({
        object: 'automation' as const,
        id: await removeAutomation(store, caller.team, params.id),
        deleted: true as const,
      }),
    }),
    route({
      method: 'POST',
      path: '/automations/:id/duplicate',
      summary: 'Duplicate an automation (a disabled copy)',
      access: 'team',
      params: Params,
      body: IgnoredBody,
      response: AutomationRef,
      handler: async ({ caller, params }) => ref(await duplicateAutomation(store, caller.team, params.id)),
    }),
    route({
      method: 'POST',
      path: '/automations/:id/stop',
      summary: 'Stop an automation: disabled, and its runs in progress cancelled',
      access: 'team',
      params: Params,
      body: IgnoredBody,
      response: AutomationStopped,
      async handler({ caller, params }) {
        const a = await stopAutomation(store, caller.team, params.id);
        return { object: 'automation' as const, id: a.id, status: a.status };
      },
    }),
    route({
      method: 'GET',
      path: '/automations/:id/runs',
      summary: "List an automation's runs (optionally of some statuses)",
      access: 'team',
      params: Params,
      query: RunListQuery,
      body: 'none',
      response: AutomationRunList,
      async handler({ caller, params, query }) {
        const { team } = caller;
        const q = pageQuery(query);
        const statuses = runStatuses(query.status);
        const a = await load(team, params.id);
        return listOf(
          await store.automationRuns.pageBy('automation', a.id, team, q, 20, (run) => (statuses && !statuses.has(run.status) ? undefined : runSummary(run))),
        );
      },
    }),
    route({
      method: 'GET',
      path: '/automations/:id/runs/:run_id',
      summary: 'Retrieve a run with its step history',
      access: 'team',
      params: RunParams,
      body: 'none',
      response: AutomationRun,
      async handler({ caller, params }) {
        const { team } = caller;
        const a = await load(team, params.id);
        const run = await findRun(store, team, a.id, params.run_id);
        if (!run) throw errors.notFound('Automation run');
        return runView(run);
      },
    }),
  ];
});
