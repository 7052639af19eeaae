// API request logs (docs/api.md §15). Entries are written behind responses: each read flushes them
// first, so a client always sees its own requests.
import type { ApiContext } from '../app';
import type { LogRec } from '../../store';
import { pageQuery, listOf } from '../platform/params';
import { errors } from '../../errors';
import { isUuid } from '../../ids';
import { resource, route } from '../platform/route';
import { EXPORT_ANSWER, List, UuidParams } from '../../schemas/common';
import { Log, LogExportQuery, LogSummary, LogQuery } from '../../schemas/operations';
import { exportResponse } from '../platform/export';

const summary = (l: LogRec): LogSummary => ({
  id: l.id,
  created_at: l.created_at,
  endpoint: l.endpoint,
  method: l.method,
  response_status: l.response_status,
  user_agent: l.user_agent,
  // Posthorn: which key made the request (docs/api.md §15).
  api_key_id: l.api_key_id,
});

const parse = (json: string | null): unknown => (json === null ? null : JSON.parse(json));

export const logsResource = resource('Logs', ({ store, requestLog }: ApiContext) => [
  route({
    method: 'GET',
    path: '/logs',
    summary: 'List API request logs',
    access: 'team',
    query: LogQuery,
    body: 'none',
    response: List(LogSummary),
    async handler({ caller, query }) {
      await requestLog.flush();
      const match = logFilter(query);
      return listOf(await store.logs.page(caller.team, pageQuery(query), 20, match ? (l) => (match(l) ? summary(l) : undefined) : summary));
    },
  }),
  route({
    method: 'GET',
    path: '/logs/export',
    summary: "Export API request logs as CSV or NDJSON, with the list's filters (Posthorn, docs/api.md §4.1)",
    access: 'team',
    query: LogExportQuery,
    body: 'none',
    response: EXPORT_ANSWER,
    async handler({ caller, query }) {
      await requestLog.flush();
      return exportResponse({
        name: 'logs',
        format: query.format ?? 'csv',
        page: (q) => store.logs.page(caller.team, q, null),
        keep: logFilter(query),
        row: summary,
        columns: ['id', 'created_at', 'method', 'endpoint', 'response_status', 'api_key_id', 'user_agent'],
      });
    },
  }),
  route({
    method: 'GET',
    path: '/logs/:id',
    summary: 'Retrieve an API request log',
    access: 'team',
    params: UuidParams('id'),
    body: 'none',
    response: Log,
    async handler({ caller, params }) {
      await requestLog.flush();
      const l = await store.logs.get(caller.team, params.id);
      if (!l) throw errors.notFound('Log');
      return { object: 'log' as const, ...summary(l), duration_ms: l.duration_ms, request_body: parse(l.request_json), response_body: parse(l.response_json) };
    },
  }),
]);

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * Posthorn's filters on GET /logs (docs/api.md §15): `method`, `status` (a code such as 422, or a
 * class such as 4xx) and `api_key_id`. Null when none is given.
 */
function logFilter(query: { method?: string; status?: string; api_key_id?: string }): ((l: LogRec) => boolean) | null {
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
