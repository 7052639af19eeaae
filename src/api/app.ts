// The Elysia application: every resource's declared routes (one file per resource in resources/,
// route.ts), the table of them the server's policy reads (route-table.ts), the parse/error/response
// hooks, and the OpenAPI document made from the declarations. Authentication, rate limiting and
// the request log wrap it in server.ts, because they must run before routing (docs/api.md §3.3).
import type { InboxListeners } from '../inboxes/hooks';
import { Elysia } from 'elysia';
import { ApiError, errors } from '../errors';
import { readJsonText } from './platform/body';
import { loggedBody, type RequestLog } from './platform/requestlog';
import { clientIp, stateOf } from './platform/context';
import { jsonResponse, errorResponse } from './platform/json';
import { idempotencyKey } from './platform/idempotency';
import { RouteTable, pathPattern, type TableRoute } from './platform/route-table';
import { CHECK_RESPONSES_ENV, registerRoutes, registerShadows } from './platform/register';
import { settle } from '../sending/incoming';
import { openApiDocument } from './platform/openapi';
import type { LiveFeed } from '../events/live';
import type { Resource } from './platform/route';
import { log } from '../log';
import type { Config } from '../config';
import type { Resolver } from '../dns/resolver';
import type { Doctor } from '../health';
import type { DmarcSummaries } from '../health/dmarc';
import type { ApiKeyRec, Store } from '../store';
import { isObject } from '../schemas/common';
import type { Events } from '../events';
import type { DomainVerifier } from '../domains/verify';
import type { DomainClaims } from '../domains/claims';
import type { BroadcastSender } from '../broadcasts/runner';
import type { ImportRunner } from '../imports';
import type { RateLimiter } from '../limits/ratelimit';
import type { GroupCommit } from '../sending/submit';
import type { Idempotency } from '../sending/idempotency';
import type { KeyUsage } from '../accounts/keys';
import type { Telemetry } from '../telemetry';
import type { Insights } from '../insights';
import type { Auth } from '../accounts/auth';
import type { DashboardAssets } from '../dashboard/assets';
import { SignedLinks } from '../links/signed';
import { requireSession } from './platform/session';
import { VERSION } from '../version';
import { RESOURCES } from './resources';
import type { BounceClassifier } from '../mail/bounce-class';

/** Where the OpenAPI document is served (public): `/openapi/json`, and `/openapi` sends there. */
const OPENAPI_PATH = '/openapi';

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
  /** Deliverability insights (GET /emails/{id}/insights) and broadcast reviews. */
  insights: Insights;
  /** The bounce classes' rules (POST /suppressions/lift). */
  bounces: BounceClassifier;
  /** Dashboard sign-in: sessions, passwords, TOTP, OpenID Connect, team members. */
  auth: Auth;
  /** The dashboard's static files. */
  dashboard: DashboardAssets;
  /** Inboxes' listeners on this thread (hook and search index, docs/api.md §25). */
  inboxes: InboxListeners;
  /** The deliverability checks: GET /deliverability/checks shows the last run. */
  doctor: Doctor;
  /** The resolver (GET /ips looks up a sending IP's reverse DNS the doctor has not checked). */
  dns: Resolver;
  /** What a domain's DMARC reports say: GET /domains/{id}/dmarc. */
  dmarc: DmarcSummaries;
  /** The dashboard sessions' live streams (GET /auth/session/events). */
  live: LiveFeed;
}

/** What every resource module receives: the service, the request log (GET /logs flushes it) and the signed links under `public_url`. */
export interface ApiContext extends ApiDeps {
  requestLog: RequestLog;
  links: SignedLinks;
}

export type App = ReturnType<typeof createBase>;

/** The API: its Elysia app, and the table of its routes that the server asks before routing. */
export interface Api {
  app: App;
  table: RouteTable;
}

/**
 * Literal path segments of Resend routes Posthorn does not serve yet (docs/api.md §18): they
 * must answer 404, not be read as an id or email by the `{id}` routes beside them (docs/api.md
 * §2 item 15).
 */
const RESERVED = ['/segments/metrics'];

export function buildApp(deps: ApiDeps & { requestLog: RequestLog }): Api {
  const svc: ApiContext = { ...deps, links: new SignedLinks(deps.store.secret('links'), deps.config.public_url) };
  const routes: TableRoute[] = (RESOURCES as Resource<ApiContext>[]).flatMap((res) =>
    res.routes(svc).map((r) => ({ ...r, tags: [res.tag], re: pathPattern(r.path) })),
  );
  const table = new RouteTable(routes, [OPENAPI_PATH, `${OPENAPI_PATH}/*`]);
  const app = createBase(table);
  for (const path of RESERVED)
    app.all(
      path,
      () => {
        throw errors.routeNotFound();
      },
      { detail: { hide: true } },
    );
  registerRoutes(app as never, table, {
    checkResponses: process.env[CHECK_RESPONSES_ENV] === '1',
    session: (request) => requireSession(svc.auth.sessions, request),
    settle: (team) => settle(svc.store, svc.events, team),
    // The entry of an administrative action (docs/api.md §19.11): the target is the path's `id`, or the id the route answers.
    audit: async (r, request, caller, { params, body, out }) => {
      const idOf = (v: unknown) => (isObject(v) && typeof v.id === 'string' ? v.id : null);
      await svc.auth.audit.record({
        team: caller.team,
        action: r.audit!,
        actor: caller.user ? { user: caller.user } : { key: (caller as { key: ApiKeyRec }).key },
        ip: clientIp(request) || null,
        targetId: idOf(params) ?? idOf(out),
        details: typeof r.body === 'object' && r.body.type === 'object' && isObject(body) ? body : null,
      });
    },
  });
  registerShadows(app as never, table);
  return { app, table };
}

function createBase(table: RouteTable) {
  // Validation is the registrar's (register.ts), so Elysia is given no schemas: it neither checks
  // nor reshapes bodies. The OpenAPI document is made from the routes once, and served as JSON only:
  // no reference page, whose script would load from another host (README "Security").
  // Made on its first request (about 20 ms of start otherwise), then kept.
  let document: string | null = null;
  return new Elysia()
    .get(`${OPENAPI_PATH}/json`, () => {
      document ??= JSON.stringify(openApiDocument(table, VERSION));
      return new Response(document, { headers: { 'content-type': 'application/json; charset=utf-8', 'x-content-type-options': 'nosniff' } });
    })
    .get(OPENAPI_PATH, () => new Response(null, { status: 302, headers: { location: `${OPENAPI_PATH}/json` } }))
    .onParse(async ({ request, route }) => {
      // Route and method come before the body (docs/api.md §3.3): routes that only refuse read none,
      // and routes that stream their body (uploads, forms) read it themselves.
      const r = table.find(request.method, route);
      if (!table.readsBody(r)) return {};
      const s = stateOf(request);
      // The key's format is checked before the body is read (docs/api.md §3.3).
      if (s && r.idempotent) idempotencyKey(request.headers);
      const read = await readJsonText(request, r.largeBody);
      // The request log's copy is taken now: validation drops unknown keys.
      if (s && read) {
        s.body = read.body;
        s.bodyJson = loggedBody(read.body, read.text);
      }
      // Bodiless requests validate as an empty object, so a required field reads as "missing".
      return read === undefined ? {} : read.body;
    })
    .onError(({ code, error, request }) => {
      if (error instanceof ApiError) return errorResponse(request, error);
      if (code === 'NOT_FOUND') return errorResponse(request, table.miss(request.method, stateOf(request)?.path ?? new URL(request.url).pathname));
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
