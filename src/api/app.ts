// The Elysia application: global parse/error/response hooks, then one module per resource.
// Authentication, rate limiting and the request log wrap it in server.ts, because they must run
// before routing (docs/api.md §3.3).
import { Elysia } from 'elysia';
import { openapi } from '@elysiajs/openapi';
import { ApiError, errors } from '../errors';
import { readJsonText } from './platform/body';
import { loggedBody, type RequestLog } from './platform/requestlog';
import { stateOf } from './platform/context';
import { jsonResponse, errorResponse } from './platform/json';
import { fromValidation } from './platform/validation';
import { IDEMPOTENT_ROUTES, idempotencyKey } from './platform/idempotency';
import { log } from '../log';
import type { Config } from '../config';
import type { Store } from '../store';
import type { Events } from '../events';
import type { DomainVerifier } from '../domains/verify';
import type { DomainClaims } from '../domains/claims';
import type { BroadcastSender } from '../broadcasts/runner';
import type { ImportRunner } from '../imports';
import type { RateLimiter } from '../limits/ratelimit';
import type { GroupCommit } from '../sending/submit';
import type { Idempotency } from '../sending/idempotency';
import type { KeyUsage } from '../accounts/keys';
import { VERSION } from '../version';
import { apiKeysRoutes } from './resources/api-keys';
import { logsRoutes } from './resources/logs';
import { healthRoutes } from './resources/health';
import { domainsRoutes } from './resources/domains';
import { segmentsRoutes } from './resources/segments';
import { contactsRoutes } from './resources/contacts';
import { contactTopicsRoutes } from './resources/contact-topics';
import { topicsRoutes } from './resources/topics';
import { contactPropertiesRoutes } from './resources/contact-properties';
import { contactImportsRoutes } from './resources/contact-imports';
import { domainClaimsRoutes } from './resources/domain-claims';
import { broadcastsRoutes } from './resources/broadcasts';
import { suppressionsRoutes } from './resources/suppressions';
import { emailsRoutes } from './resources/emails';
import { downloadsRoutes } from './resources/downloads';
import { receivingRoutes } from './resources/receiving';
import { webhooksRoutes } from './resources/webhooks';
import { unsubscribeRoutes } from './resources/unsubscribe';
import { trackingRoutes } from './resources/tracking';
import { metricsRoutes } from './resources/metrics';
import { prometheusRoutes } from './resources/prometheus';
import type { Telemetry } from '../telemetry';
import type { Auth } from '../accounts/auth';
import type { DashboardAssets } from '../dashboard/assets';
import { authRoutes } from './resources/auth';
import { teamRoutes } from './resources/team';
import { dashboardRoutes } from './resources/dashboard';
import { queueRoutes } from './resources/queue';
import { tlsReportsRoutes } from './resources/tls-reports';
import { templatesRoutes } from './resources/templates';
import { sharedRoutes } from './resources/shared';
import { usageRoutes } from './resources/usage';
import { oauthGrantsRoutes } from './resources/oauth-grants';
import { eventsRoutes } from './resources/events';
import { automationsRoutes } from './resources/automations';
import { UNSUBSCRIBE_PATH } from '../links/signed';

/** Paths served without an API key: health, the OpenAPI document, signed links (downloads, tracking, unsubscribe, shared emails), the dashboard. */
export const PUBLIC_PREFIXES = ['/health', '/metrics', '/openapi', '/d/', '/t/', '/u/', '/s/', '/dashboard', '/auth'];

/** Each prefix as a path below it starts: `/health/…`, `/d/…`. */
const PUBLIC_BELOW = PUBLIC_PREFIXES.map((p) => (p.endsWith('/') ? p : `${p}/`));

export function isPublic(path: string): boolean {
  if (path === '/') return true;
  for (let i = 0; i < PUBLIC_PREFIXES.length; i++) if (path === PUBLIC_PREFIXES[i] || path.startsWith(PUBLIC_BELOW[i]!)) return true;
  return false;
}

export type App = ReturnType<typeof createBase>;

/** What the HTTP API needs of the running service. */
export interface ApiDeps {
  config: Config;
  store: Store;
  events: Events;
  /** Domain verification runs in the background after POST /domains/{id}/verify. */
  domains: DomainVerifier;
  /** Domain claims: their TXT records are looked up in the background after a verify request. */
  claims: DomainClaims;
  /** Broadcast sends run in the background after they are accepted. */
  broadcasts: BroadcastSender;
  /** Contact imports run in the background after their file is stored. */
  imports: ImportRunner;
  /** The team request limit, shared with SMTP submission. */
  limiter: RateLimiter;
  /** The sending core's group commit, and the idempotency keys in flight (shared with SMTP). */
  commits: GroupCommit;
  idempotency: Idempotency;
  /** API keys' `last_used_at` (shared with SMTP AUTH). */
  keyUsage: KeyUsage;
  /** Operator metrics: GET /metrics, and the request latency the server observes. */
  telemetry: Telemetry;
  /** Dashboard sign-in: sessions, passwords, TOTP, OpenID Connect, team members. */
  auth: Auth;
  /** The dashboard's static files. */
  dashboard: DashboardAssets;
}

/** What every resource module receives: the service, and the request log (GET /logs flushes it). */
export interface ApiContext extends ApiDeps {
  requestLog: RequestLog;
}

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
    .onParse(async ({ request, route }) => {
      // Route and method come before the body (docs/api.md §3.3): routes that only refuse read none,
      // and routes that stream their body (uploads) read it themselves.
      if (BODILESS.has(`${request.method} ${route}`) || BODILESS.has(`ALL ${route}`) || STREAMED.has(`${request.method} ${route}`)) return {};
      const s = stateOf(request);
      // RFC 8058 one-click unsubscribe posts a form, not JSON; that route reads no body. (A request
      // with state came through authentication: the server has its path.)
      if ((s?.path ?? new URL(request.url).pathname).startsWith(UNSUBSCRIBE_PATH)) return {};
      // The key's format is checked before the body is read (docs/api.md §3.3).
      if (s && IDEMPOTENT_ROUTES.has(`${request.method} ${s.path}`)) idempotencyKey(request.headers);
      const read = await readJsonText(request);
      // The request log's copy is taken now: validation below strips unknown keys in place.
      if (s && read) {
        s.body = read.body;
        s.bodyJson = loggedBody(read.body, read.text);
      }
      // Bodiless requests validate as an empty object, so a required field reads as "missing".
      return read === undefined ? {} : read.body;
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

/**
 * Routes (`METHOD path`) whose handlers only refuse (reserved literals, wrong methods on literal
 * paths): their body is never read, so an upload or broken JSON sent there still gets the route's
 * 404/405.
 */
const BODILESS = new Set<string>();

/** Routes that read their own body as a stream (multipart uploads, docs/api.md §12.9). */
const STREAMED = new Set(['POST /contacts/imports']);

/** Routes by method, compiled once, to tell "no such path" (404) from "wrong method" (405). */
let routeTable: { method: string; path: string; re: RegExp }[] = [];

function routeMiss(request: Request): ApiError {
  const path = stateOf(request)?.path ?? new URL(request.url).pathname;
  const other = routeTable.some((r) => r.re.test(path) && r.method !== request.method);
  return other ? errors.methodNotAllowed(request.method) : errors.routeNotFound();
}

/**
 * Literal path segments of Resend routes Posthorn does not serve yet (docs/api.md §18): they
 * must answer 404, not be read as an id or email by the `{id}` routes beside them (docs/api.md
 * §2 item 15).
 */
const RESERVED = ['/segments/metrics'];

export function buildApp(svc: ApiContext) {
  const app = createBase();
  for (const path of RESERVED) BODILESS.add(`ALL ${path}`);
  for (const path of RESERVED)
    app.all(
      path,
      () => {
        throw errors.routeNotFound();
      },
      { detail: { hide: true } },
    );
  healthRoutes(app, svc);
  dashboardRoutes(app, svc);
  authRoutes(app, svc);
  teamRoutes(app, svc);
  queueRoutes(app, svc);
  tlsReportsRoutes(app, svc);
  prometheusRoutes(app, svc);
  downloadsRoutes(app, svc);
  unsubscribeRoutes(app, svc);
  sharedRoutes(app, svc);
  trackingRoutes(app, svc);
  receivingRoutes(app, svc);
  metricsRoutes(app, svc);
  emailsRoutes(app, svc);
  apiKeysRoutes(app, svc);
  domainClaimsRoutes(app, svc);
  domainsRoutes(app, svc);
  segmentsRoutes(app, svc);
  contactImportsRoutes(app, svc);
  contactsRoutes(app, svc);
  contactTopicsRoutes(app, svc);
  topicsRoutes(app, svc);
  contactPropertiesRoutes(app, svc);
  broadcastsRoutes(app, svc);
  suppressionsRoutes(app, svc);
  logsRoutes(app, svc);
  webhooksRoutes(app, svc);
  templatesRoutes(app, svc);
  usageRoutes(app, svc);
  oauthGrantsRoutes(app);
  eventsRoutes(app, svc);
  automationsRoutes(app, svc);
  routeTable = app.routes.map((r) => ({
    method: r.method,
    path: r.path,
    re: new RegExp(
      `^${r.path
        .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
        .replace(/:[^/]+/g, '[^/]+')
        .replace(/\*/g, '.*')}$`,
    ),
  }));
  // A literal path wins over `{id}` (docs/api.md §2 item 15) for every method: `GET /emails/batch` is a wrong
  // method on /emails/batch (405), not an email whose id is "batch".
  const literal = new Map<string, Set<string>>();
  for (const r of routeTable) if (!r.path.includes(':') && !r.path.includes('*')) literal.set(r.path, (literal.get(r.path) ?? new Set()).add(r.method));
  for (const [path, methods] of literal) {
    if (methods.has('ALL')) continue;
    for (const r of routeTable)
      if (r.path.includes(':') && r.re.test(path) && !methods.has(r.method)) {
        methods.add(r.method);
        BODILESS.add(`${r.method} ${path}`);
        app.route(
          r.method,
          path,
          ({ request }) => {
            throw errors.methodNotAllowed(request.method);
          },
          { detail: { hide: true } },
        );
      }
  }
  return app;
}
