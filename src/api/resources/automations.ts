// Automations (docs/api.md §24): create, list, retrieve, update, duplicate, stop and delete, and
// their runs with each run's step history. The logic lives in src/automations; the runs themselves
// are advanced by the back office (src/automations/runner.ts).
import type { App, ApiContext } from '../app';
import { caller } from '../platform/context';
import { objectBody } from '../platform/body';
import { pageQuery, pathId, listOf } from '../platform/params';
import { errors } from '../../errors';
import { automationView, createAutomation, duplicateAutomation, listAutomations, removeAutomation, stopAutomation, updateAutomation } from '../../automations';
import { findRun, listRuns, runStatuses, runView } from '../../automations/runs';

const tags = ['Automations'];

export function automationsRoutes(app: App, { store }: ApiContext) {
  /** The team's automation named by the path, or 404. */
  const load = async (team: string, raw: string | undefined) => {
    const a = await store.automations.get(team, pathId(raw));
    if (!a) throw errors.notFound('Automation');
    return a;
  };

  app.post(
    '/automations',
    async ({ request, body, set }) => {
      const a = await createAutomation(store, caller(request).team, objectBody(body));
      set.status = 201;
      return { object: 'automation', id: a.id };
    },
    { detail: { summary: 'Create an automation', tags } },
  );

  app.get('/automations', async ({ request, query }) => listOf(await listAutomations(store, caller(request).team, pageQuery(query), query.status)), {
    detail: { summary: 'List automations (optionally of one status)', tags },
  });

  app.get('/automations/:id', async ({ request, params }) => automationView(await load(caller(request).team, params.id)), {
    detail: { summary: 'Retrieve an automation with its steps and connections', tags },
  });

  app.patch(
    '/automations/:id',
    async ({ request, params, body }) => ({
      object: 'automation',
      id: (await updateAutomation(store, caller(request).team, pathId(params.id), objectBody(body))).id,
    }),
    { detail: { summary: 'Update an automation', tags } },
  );

  app.delete(
    '/automations/:id',
    async ({ request, params }) => ({ object: 'automation', id: await removeAutomation(store, caller(request).team, pathId(params.id)), deleted: true }),
    { detail: { summary: 'Delete an automation (its runs end)', tags } },
  );

  app.post(
    '/automations/:id/duplicate',
    async ({ request, params }) => ({ object: 'automation', id: (await duplicateAutomation(store, caller(request).team, pathId(params.id))).id }),
    { detail: { summary: 'Duplicate an automation (a disabled copy)', tags } },
  );

  app.post(
    '/automations/:id/stop',
    async ({ request, params }) => {
      const a = await stopAutomation(store, caller(request).team, pathId(params.id));
      return { object: 'automation', id: a.id, status: a.status };
    },
    { detail: { summary: 'Stop an automation: disabled, and its runs in progress cancelled', tags } },
  );

  app.get(
    '/automations/:id/runs',
    async ({ request, params, query }) => {
      const { team } = caller(request);
      const q = pageQuery(query);
      const statuses = runStatuses(query.status);
      const a = await load(team, params.id);
      return listOf(await listRuns(store, team, a.id, q, statuses));
    },
    { detail: { summary: "List an automation's runs (optionally of some statuses)", tags } },
  );

  app.get(
    '/automations/:id/runs/:run_id',
    async ({ request, params }) => {
      const { team } = caller(request);
      const a = await load(team, params.id);
      const run = await findRun(store, team, a.id, pathId(params.run_id, 'run_id'));
      if (!run) throw errors.notFound('Automation run');
      return runView(run);
    },
    { detail: { summary: 'Retrieve a run with its step history', tags } },
  );
}
