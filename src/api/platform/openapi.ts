// The OpenAPI 3 document's operations, made from the declared routes (route.ts): each route's path
// and query parameters, body and success answer are its own schemas; every error answers in the
// documented shape (docs/api.md §3.1). Nothing here is written by hand per route. The document is
// served as JSON only (`GET /openapi/json`): no HTML reference page, whose script would come from
// another host and run on the dashboard's origin (README "Security", issue 34 finding 2).
import type { TSchema } from '@sinclair/typebox';
import { isRaw } from './route';
import { requiredRole, type RouteTable, type TableRoute } from './route-table';

type Json = Record<string, unknown>;

/** The wording options of validate.ts are no JSON Schema keywords: left out of the document. */
const WORDING = new Set(['error', 'errorName', 'errorStatus']);

/** A schema as plain JSON Schema: TypeBox's symbols and Posthorn's wording options dropped. */
export function jsonSchema(schema: TSchema): Json {
  return JSON.parse(JSON.stringify(schema, (k, v) => (WORDING.has(k) && typeof v !== 'object' ? undefined : v)));
}

const ERROR: Json = {
  type: 'object',
  required: ['statusCode', 'name', 'message'],
  properties: { statusCode: { type: 'integer' }, name: { type: 'string' }, message: { type: 'string' } },
};

function parameters(r: TableRoute): Json[] {
  const out: Json[] = [];
  for (const [where, schema] of [
    ['path', r.params],
    ['query', r.query],
  ] as const) {
    if (!schema) continue;
    const s = jsonSchema(schema) as { properties?: Record<string, Json>; required?: string[] };
    for (const [name, p] of Object.entries(s.properties ?? {}))
      out.push({
        name,
        in: where,
        required: where === 'path' || (s.required ?? []).includes(name),
        schema: p,
        ...(p.description ? { description: p.description } : {}),
      });
  }
  return out;
}

function success(r: TableRoute): Json {
  const status = String(r.status ?? 200);
  if (isRaw(r.response)) {
    if (r.response.raw === 'redirect') return { 302: { description: r.response.description } };
    return { [status]: { description: r.response.description, content: { [r.response.raw]: {} } } };
  }
  return { [status]: { description: 'Success', content: { 'application/json': { schema: jsonSchema(r.response) } } } };
}

function operation(r: TableRoute): Json {
  const op: Json = {
    operationId: `${r.method.toLowerCase()}${r.path.replace(/[:*]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
    summary: r.summary,
    tags: r.tags,
    parameters: parameters(r),
    responses: { ...success(r), default: { description: 'An error (docs/api.md §3)', content: { 'application/json': { schema: ERROR } } } },
  };
  if (r.description) op.description = r.description;
  if (r.access === 'public') op.security = [];
  if (r.access === 'session') op.security = [{ session: [] }];
  if (r.access === 'sending') op['x-posthorn-sending-key'] = true;
  // The least role of the caller (docs/api.md §19.4): a session's user's, or an API key's.
  const role = requiredRole(r);
  if (role) op['x-posthorn-role'] = role;
  if (r.idempotent) op['x-posthorn-idempotent'] = true;
  if (typeof r.body === 'object') op.requestBody = { required: true, content: { 'application/json': { schema: jsonSchema(r.body) } } };
  if (r.body === 'stream') op.requestBody = { required: true, content: { 'application/octet-stream': {} } };
  return op;
}

/** The whole OpenAPI 3.1 document: the API's description, its two ways to authenticate, and `paths`. */
export function openApiDocument(table: RouteTable, version: string): Json {
  return {
    openapi: '3.1.2',
    info: { title: 'Posthorn API', description: 'Resend-compatible email API', version },
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer' },
        // The dashboard's session (docs/api.md §19.2): the cookie, with its CSRF token in the X-CSRF-Token header.
        session: { type: 'apiKey', in: 'cookie', name: 'posthorn_session' },
      },
      schemas: {},
    },
    security: [{ bearer: [] }],
    paths: openApiPaths(table),
  };
}

/** The document's `paths`, from every route that is not hidden. */
export function openApiPaths(table: RouteTable): Record<string, Json> {
  const paths: Record<string, Json> = {};
  for (const r of table.routes) {
    if (r.hidden) continue;
    const path = r.path.replace(/:([^/]+)/g, '{$1}');
    paths[path] ??= {};
    paths[path][r.method.toLowerCase()] = operation(r);
  }
  return paths;
}
