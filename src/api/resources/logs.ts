// API request logs (docs/api.md §15). Entries are written behind responses: each read flushes them
// first, so a client always sees its own requests.
import type { App, ApiContext } from '../app';
import type { LogRec } from '../../store';
import { caller } from '../platform/context';
import { pathId, pageQuery, listOf } from '../platform/params';
import { errors } from '../../errors';
import { isUuid } from '../../ids';

const tags = ['Logs'];

const summary = (l: LogRec) => ({
  id: l.id,
  created_at: l.created_at,
  endpoint: l.endpoint,
  method: l.method,
  response_status: l.response_status,
  user_agent: l.user_agent,
  // Posthorn: which key made the request (docs/api.md §15).
  api_key_id: l.api_key_id,
});

const parse = (json: string | null) => (json === null ? null : JSON.parse(json));

export function logsRoutes(app: App, { store, requestLog }: ApiContext) {
  app.get(
    '/logs',
    async ({ request, query }) => {
      const { team } = caller(request);
      await requestLog.flush();
      const match = logFilter(query);
      return listOf(await store.logs.page(team, pageQuery(query), 20, match ? (l) => (match(l) ? summary(l) : undefined) : summary));
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

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * Posthorn's filters on GET /logs (docs/api.md §15): `method`, `status` (a code such as 422, or a
 * class such as 4xx) and `api_key_id`. Null when none is given.
 */
function logFilter(query: Record<string, string | undefined>): ((l: LogRec) => boolean) | null {
  const method = query.method?.toUpperCase();
  const { status, api_key_id: key } = query;
  if (method !== undefined && !METHODS.has(method)) throw errors.validation(`\`method\` must be one of ${[...METHODS].join(', ')}.`);
  if (status !== undefined && !/^[1-5](\d\d|xx)$/i.test(status)) throw errors.validation('`status` must be a status code such as 422 or a class such as 4xx.');
  if (key !== undefined && !isUuid(key)) throw errors.invalidParameter('The `api_key_id` must be a valid UUID.');
  if (!method && !status && !key) return null;
  return (l) =>
    (!method || l.method === method) &&
    (!status || (/xx$/i.test(status) ? String(l.response_status)[0] === status[0] : l.response_status === Number(status))) &&
    (!key || l.api_key_id === key.toLowerCase());
}
