// API request logs (docs/api.md §15). Entries are written behind responses: each read flushes them
// first, so a client always sees its own requests.
import type { App, ApiContext } from '../app';
import type { LogRec } from '../../store';
import { caller } from '../platform/context';
import { pathId, pageQuery, listOf } from '../platform/params';
import { errors } from '../../errors';

const tags = ['Logs'];

const summary = (l: LogRec) => ({
  id: l.id,
  created_at: l.created_at,
  endpoint: l.endpoint,
  method: l.method,
  response_status: l.response_status,
  user_agent: l.user_agent,
});

const parse = (json: string | null) => (json === null ? null : JSON.parse(json));

export function logsRoutes(app: App, { store, requestLog }: ApiContext) {
  app.get(
    '/logs',
    async ({ request, query }) => {
      const { team } = caller(request);
      await requestLog.flush();
      return listOf(await store.logs.page(team, pageQuery(query), 20, summary));
    },
    { detail: { summary: 'List API request logs', tags } },
  );

  app.get(
    '/logs/:id',
    async ({ request, params }) => {
      const { team } = caller(request);
      const id = pathId(params.id);
      await requestLog.flush();
      const l = await store.logs.get(team, id);
      if (!l) throw errors.notFound('Log');
      return { object: 'log', ...summary(l), duration_ms: l.duration_ms, request_body: parse(l.request_json), response_body: parse(l.response_json) };
    },
    { detail: { summary: 'Retrieve an API request log', tags } },
  );
}
