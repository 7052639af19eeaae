// Every route of the HTTP API is declared once (src/api/platform/route.ts) with the schemas of what
// it reads and answers, and nothing is routed that is not declared: the route table, the OpenAPI
// document and the policy the server applies before routing are all made from the declarations
// (docs/ARCHITECTURE.md §2, "The HTTP API"). Responses are checked against their schemas by every
// test that makes a request (POSTHORN_CHECK_RESPONSES, set by `npm test`).
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { Kind } from '@sinclair/typebox';
import { startPosthorn, type Running } from '../helpers/posthorn';
import { buildApp } from '../../src/api/app';
import { RequestLog } from '../../src/api/platform/requestlog';
import { isRaw } from '../../src/api/platform/route';
import { routeIndex, withIndex } from '../../src/api/platform/route-index';
import { readFileSync } from 'node:fs';
import { RawText, ROUTES } from '../../src/schemas/routes';

let p: Running;
let api: ReturnType<typeof buildApp>;
beforeAll(async () => {
  p = await startPosthorn();
  api = buildApp({ ...p.svc, requestLog: new RequestLog(p.svc.store) });
});
afterAll(() => p.stop());

const isSchema = (s: unknown) => !!s && typeof s === 'object' && Kind in (s as object);
/** A schema as comparable text: its JSON Schema, with the TypeBox kind of every node. */
const shape = (s: unknown) => JSON.stringify(s, (_k, v) => (v && typeof v === 'object' && Kind in v ? { kind: v[Kind], ...v } : v));
const pathParams = (path: string) => [...path.matchAll(/:([^/]+)|(\*)/g)].map((m) => m[1] ?? m[2]).sort();

describe('schema coverage', () => {
  test('every declared route names its parameters, body and answer with schemas', () => {
    const problems: string[] = [];
    for (const r of api.table.routes) {
      const name = `${r.method} ${r.path}`;
      const wanted = pathParams(r.path);
      const declared = r.params ? Object.keys((r.params as unknown as { properties: object }).properties).sort() : [];
      if (wanted.join() !== declared.join()) problems.push(`${name}: path parameters ${wanted} but params schema names ${declared}`);
      if (r.params && !isSchema(r.params)) problems.push(`${name}: params is not a schema`);
      if (r.query && !isSchema(r.query)) problems.push(`${name}: query is not a schema`);
      if (r.method === 'GET' && r.body !== 'none') problems.push(`${name}: a GET reads no body`);
      if (r.body !== 'none' && r.body !== 'stream' && !isSchema(r.body)) problems.push(`${name}: body is neither a schema, 'none' nor 'stream'`);
      if (!isRaw(r.response) && !isSchema(r.response)) problems.push(`${name}: the answer has no schema`);
      if (!r.summary.trim()) problems.push(`${name}: no summary`);
    }
    expect(problems).toEqual([]);
  });

  test('nothing is routed that is not declared (but the known refusals and the OpenAPI document)', () => {
    const declared = new Set(api.table.routes.map((r) => `${r.method} ${r.path}`));
    const shadows = new Set(api.table.literalShadows().map((s) => `${s.method} ${s.path}`));
    const undeclared = api.app.routes
      .map((r) => `${r.method} ${r.path}`)
      .filter((k) => !declared.has(k) && !shadows.has(k) && !k.startsWith('GET /openapi') && k !== 'ALL /segments/metrics');
    expect(undeclared).toEqual([]);
  });

  test("the dashboard's route map names declared routes, with the schemas of their answers", () => {
    const declared = new Map(api.table.routes.map((r) => [`${r.method} ${r.path}`, r]));
    const problems: string[] = [];
    for (const [name, schema] of Object.entries(ROUTES)) {
      const r = declared.get(name);
      if (!r) problems.push(`${name}: no such route is declared`);
      else if (isRaw(r.response) ? schema !== RawText : shape(schema) !== shape(r.response))
        problems.push(`${name}: the map's answer differs from the declaration's (src/api/resources)`);
    }
    expect(problems).toEqual([]);
  });

  test('the OpenAPI document has every route that is not hidden, with its schemas', async () => {
    const r = await p.api('GET', '/openapi/json', { key: null });
    expect(r.status).toBe(200);
    const paths = r.body.paths as Record<string, Record<string, { responses: Record<string, unknown>; requestBody?: unknown }>>;
    const missing: string[] = [];
    for (const route of api.table.routes) {
      if (route.hidden) continue;
      const op = paths[route.path.replace(/:([^/]+)/g, '{$1}')]?.[route.method.toLowerCase()];
      if (!op) missing.push(`${route.method} ${route.path}`);
      else if (typeof route.body === 'object' && !op.requestBody) missing.push(`${route.method} ${route.path}: requestBody`);
    }
    expect(missing).toEqual([]);
  });

  test('docs/api.md §26 lists the declared routes (npm run docs:api writes it)', () => {
    const doc = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
    expect(withIndex(doc, routeIndex(api.table))).toBe(doc);
  });
});
