// The Elysia application: global parse/error/response hooks, then one module per resource.
// Authentication, rate limiting and the request log wrap it in server.ts, because they must run
// before routing (api-reference §3.3).
import { Elysia } from 'elysia';
import { openapi } from '@elysiajs/openapi';
import { ApiError, errors } from './errors';
import { readJson } from './platform/body';
import { redact } from './platform/requestlog';
import { stateOf } from './platform/context';
import { jsonResponse, errorResponse } from './platform/json';
import { fromValidation } from './platform/validation';
import { IDEMPOTENT_ROUTES, idempotencyKey } from './platform/idempotency';
import { log } from '../log';
import type { Services } from '../services';
import { VERSION } from '../version';
import { apiKeysRoutes } from './resources/api-keys';
import { logsRoutes } from './resources/logs';
import { healthRoutes } from './resources/health';
import { domainsRoutes } from './resources/domains';
import { segmentsRoutes } from './resources/segments';
import { contactsRoutes } from './resources/contacts';
import { broadcastsRoutes } from './resources/broadcasts';
import { suppressionsRoutes } from './resources/suppressions';
import { emailsRoutes } from './resources/emails';
import { downloadsRoutes } from './resources/downloads';
import { receivingRoutes } from './resources/receiving';
import { webhooksRoutes } from './resources/webhooks';

/** Paths served without an API key: health, the OpenAPI document, signed links, the dashboard. */
export const PUBLIC_PREFIXES = ['/health', '/openapi', '/d/', '/t/', '/u/', '/dashboard'];

export function isPublic(path: string): boolean {
  return path === '/' || PUBLIC_PREFIXES.some((p) => path === p || path.startsWith(p.endsWith('/') ? p : `${p}/`));
}

export type App = ReturnType<typeof createBase>;

function createBase() {
  // 'typebox' normalisation strips unknown keys without coercing wrong types into shape (the
  // default mirror turns a string given for a record into {"0": …}).
  return new Elysia({ normalize: 'typebox' })
    .use(
      openapi({
        path: '/openapi',
        documentation: {
          info: { title: 'Posthorn API', version: VERSION, description: 'Resend-compatible email API' },
          components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
          security: [{ bearer: [] }],
        },
      }),
    )
    .onParse(async ({ request }) => {
      const s = stateOf(request);
      // The key's format is checked before the body is read (api-reference §3.3).
      if (s && IDEMPOTENT_ROUTES.has(`${request.method} ${s.path}`)) idempotencyKey(request.headers);
      const body = await readJson(request);
      // The request log keeps a redacted copy: validation below strips unknown keys in place.
      if (s) s.body = body === undefined ? undefined : redact(body);
      // Bodiless requests validate as an empty object, so a required field reads as "missing".
      return body === undefined ? {} : body;
    })
    .onError(({ code, error, request }) => {
      if (error instanceof ApiError) return errorResponse(request, error);
      if (code === 'VALIDATION') return errorResponse(request, fromValidation(error as never, stateOf(request)?.body));
      if (code === 'NOT_FOUND') return errorResponse(request, routeMiss(request));
      // Errors thrown while reading the body arrive wrapped in Elysia's ParseError.
      if (code === 'PARSE') {
        const cause = (error as Error).cause;
        return errorResponse(request, cause instanceof ApiError ? cause : errors.badJson());
      }
      log.error('api.unhandled', { method: request.method, url: request.url, error: String((error as Error)?.stack ?? error) });
      return errorResponse(request, errors.internal());
    })
    .mapResponse((ctx) => {
      const value = (ctx as unknown as { responseValue: unknown }).responseValue;
      if (value instanceof Response) return value;
      return jsonResponse(ctx.request, typeof ctx.set.status === 'number' ? ctx.set.status : 200, value);
    });
}

/** Routes by method, compiled once, to tell "no such path" (404) from "wrong method" (405). */
let routeTable: { method: string; re: RegExp }[] = [];

function routeMiss(request: Request): ApiError {
  const path = stateOf(request)?.path ?? new URL(request.url).pathname;
  const other = routeTable.some((r) => r.re.test(path) && r.method !== request.method);
  return other ? errors.methodNotAllowed(request.method) : errors.routeNotFound();
}

export function buildApp(svc: Services) {
  const app = createBase();
  healthRoutes(app);
  downloadsRoutes(app, svc);
  receivingRoutes(app, svc);
  emailsRoutes(app, svc);
  apiKeysRoutes(app, svc);
  domainsRoutes(app, svc);
  segmentsRoutes(app, svc);
  contactsRoutes(app, svc);
  broadcastsRoutes(app, svc);
  suppressionsRoutes(app, svc);
  logsRoutes(app, svc);
  webhooksRoutes(app, svc);
  routeTable = app.routes.map((r) => ({
    method: r.method,
    re: new RegExp(`^${r.path.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/:[^/]+/g, '[^/]+').replace(/\*/g, '.*')}$`),
  }));
  return app;
}
