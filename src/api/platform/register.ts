// Declared routes (route.ts) put on the Elysia app: each handler runs behind the checks its
// declaration asks for, in the documented order (docs/api.md §3.3) — the body's fields (after the
// key's lookup on idempotent routes: their handler checks them), the query, the path parameters —
// and under `npm test` every JSON answer is checked against the route's response schema, so a
// schema that drifts from what the handler sends fails the test that made the request.
import type { Elysia } from 'elysia';
import type { TSchema } from '@sinclair/typebox';
import { ApiError, errors } from '../../errors';
import { compile, validate } from '../../schemas/validate';
import { ErrorBody } from '../../schemas/common';
import { stateOf } from './context';
import { type HandlerContext, isRaw, type Access, type Caller, type SessionCaller } from './route';
import type { SignedIn } from '../../accounts/sessions';
import { actingRole, atLeast, roleRefused } from '../../accounts/roles';
import { requiredRole, type RouteTable, type TableRoute } from './route-table';

/** Set by `npm test` (scripts/test.ts): answers that do not match their schema become a 500 naming the mismatch. */
export const CHECK_RESPONSES_ENV = 'POSTHORN_CHECK_RESPONSES';

type ElysiaContext = {
  request: Request;
  params: Record<string, string>;
  query: Record<string, string | undefined>;
  body: unknown;
  set: HandlerContext<Access, undefined, undefined, 'none'>['set'];
};

export interface RegisterOptions {
  checkResponses: boolean;
  /** The signed-in user of a request (cookie and CSRF header), or the documented 401: routes for sessions only. */
  session(request: Request): Promise<SignedIn>;
  /** Write the audit log's entry of a route that declares one (`audit`), after it succeeded. */
  audit(r: TableRoute, request: Request, caller: Caller | SessionCaller, done: { params: unknown; body: unknown; out: unknown }): Promise<void>;
  /**
   * Before a team's route reads: the batches the team sent that still wait in the incoming queue
   * are written as their emails (src/sending/incoming.ts `settle`), so every read sees them.
   */
  settle(team: string): Promise<void>;
}

export function registerRoutes(app: Elysia, table: RouteTable, opts: RegisterOptions): void {
  for (const r of table.routes) {
    // Compiled now, not on the first request; a response's schema only where responses are checked
    // (tests): compiling the 200-odd response schemas was most of the start's route registration.
    const response = opts.checkResponses && !isRaw(r.response) ? r.response : undefined;
    for (const s of [r.params, r.query, typeof r.body === 'object' ? r.body : undefined, response]) if (s) compile(s);
    app.route(r.method, r.path, handlerOf(r, opts) as never, { detail: { hide: true } });
  }
}

/** The 405s of literal paths that a parameter route of another method would read as an id (after every route is on the app). */
export function registerShadows(app: Elysia, table: RouteTable): void {
  for (const { method, path } of table.literalShadows())
    app.route(
      method,
      path,
      ({ request }: { request: Request }) => {
        throw errors.methodNotAllowed(request.method);
      },
      { detail: { hide: true } },
    );
}

function handlerOf(r: TableRoute, { checkResponses, session, audit, settle }: RegisterOptions) {
  const bodySchema = typeof r.body === 'object' ? r.body : null;
  const need = requiredRole(r);
  return async (ctx: ElysiaContext) => {
    // Authentication comes first (docs/api.md §3.3); API keys were checked by the server before routing.
    const signedIn = r.access === 'session' ? await session(ctx.request) : null;
    const caller = r.access === 'public' ? undefined : signedIn ? sessionCaller(signedIn) : callerOf(ctx.request);
    // Then the caller's role (a session's user's, a key's maker's): 403 restricted_role before the request is read.
    if (need && caller && !atLeast(actingRole(caller as Caller), need)) throw roleRefused(caller as Caller, need);
    // The sending routes only add to the incoming queue: every other route of a team reads as if it were empty.
    if (r.access === 'team' && caller) await settle(caller.team);
    const body = bodySchema ? (r.idempotent ? topLevel(bodySchema, ctx.body) : validate(bodySchema, ctx.body, 'body')) : undefined;
    const query = r.query ? validate(r.query, ctx.query, 'query') : ctx.query;
    const params = r.params ? validate(r.params, ctx.params, 'params') : ctx.params;
    if (r.status !== undefined) ctx.set.status = r.status;
    const out = await r.handler({ request: ctx.request, params, query, body, set: ctx.set, caller } as never);
    if (r.audit && caller && !(typeof ctx.set.status === 'number' && ctx.set.status >= 400)) await audit(r, ctx.request, caller, { params, body, out });
    if (checkResponses) checkResponse(r, out, ctx.set.status);
    return out;
  };
}

/** An idempotent route's body before the key's lookup: only its top-level type (400, docs/api.md §1.4). */
function topLevel(schema: TSchema, body: unknown): unknown {
  const want = schema.type;
  const got = Array.isArray(body) ? 'array' : body === null ? 'null' : typeof body;
  if ((want === 'object' || want === 'array') && got !== want) throw errors.badJson(`The request body must be a JSON ${want}.`);
  return body;
}

function sessionCaller({ user, session }: SignedIn): SessionCaller & { key: null } {
  return { team: user.team_id, user, session, key: null };
}

function callerOf(request: Request): Caller {
  const s = stateOf(request);
  if (!s) throw new Error('request reached an API handler without authentication');
  return { team: s.team, key: s.key, user: s.user, session: s.session, state: s };
}

function checkResponse(r: TableRoute, out: unknown, status: unknown): void {
  // A Response the handler made itself (a file, a page, a redirect) is the raw answer it declares.
  if (out instanceof Response) return;
  // An error answered as a value (an idempotent request's remembered 422) has the error shape (docs/api.md §3.1);
  // a route may also answer its own shape with an error status (GET /health's 503).
  if (typeof status === 'number' && status >= 400 && compile(ErrorBody).check.Check(out)) return;
  if (isRaw(r.response)) throw mismatch(r, 'the route declares a raw response but answered JSON');
  const c = compile(r.response);
  if (c.check.Check(out)) return;
  const e = c.check.Errors(out).First();
  throw mismatch(r, `${e?.path || '/'}: ${e?.message} (got ${JSON.stringify(e?.value)?.slice(0, 200)})`);
}

function mismatch(r: TableRoute, why: string): ApiError {
  return new ApiError(500, 'application_error', `The answer of ${r.method} ${r.path} does not match its response schema: ${why}`);
}
