// API request logs (api-reference §15).
import type { App } from '../app';
import type { Services } from '../../services';
import type { LogRec, Store } from '../../store';
import { caller } from '../platform/context';
import { pathId, pageQuery, listOf } from '../platform/params';
import { errors } from '../errors';
import { flushRequestLog } from '../platform/requestlog';

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

/** Entries are written behind responses: flush them and wait for every pending commit. */
async function settled(store: Store) {
  await flushRequestLog(store);
  await store.env.committed;
}

export function logsRoutes(app: App, { store }: Services) {
  app.get(
    '/logs',
    async ({ request, query }) => {
      const { team } = caller(request);
      await settled(store);
      return listOf(store.logs.page(team, pageQuery(query), 20, summary));
    },
    { detail: { summary: 'List API request logs', tags } },
  );

  app.get(
    '/logs/:id',
    async ({ request, params }) => {
      const { team } = caller(request);
      const id = pathId(params.id);
      await settled(store);
      const l = store.logs.get(team, id);
      if (!l) throw errors.notFound('Log');
      return { object: 'log', ...summary(l), duration_ms: l.duration_ms, request_body: parse(l.request_json), response_body: parse(l.response_json) };
    },
    { detail: { summary: 'Retrieve an API request log', tags } },
  );
}
