// One route of the HTTP API, declared once: its path, who may call it, what it reads, what it
// answers, and its handler. Everything else about the route is derived from this declaration by
// the registrar (register.ts): the policy the server applies before routing (public or not, keys
// that may send, idempotency, whether a body is read), request validation, the OpenAPI document,
// the route index of docs/api.md, and — under `npm test` — the check of every response against
// its schema (docs/ARCHITECTURE.md §2, "The HTTP API").
import type { Static, StaticDecode, TSchema } from '@sinclair/typebox';
import type { ApiKeyRec, Role, SessionRec, UserRec } from '../../store';
import type { AuditAction } from '../../accounts/audit';
import type { RequestState } from './context';
import type { LargeBody } from './streamed-json';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Who may call a route (docs/api.md §1.2, §19.2). */
export type Access =
  /** Anyone: the route needs no credentials, or checks its own (a signed token, a session, the metrics token). */
  | 'public'
  /** A `full_access` API key, or a dashboard session (cookie and CSRF header). */
  | 'team'
  /** A `sending_access` key too: the two sending routes (docs/api.md §1.2). */
  | 'sending'
  /**
   * A dashboard session only (cookie and CSRF header, docs/api.md §19.2): the signed-in user's own
   * sessions, password and second factor. No API key reaches these.
   */
  | 'session';

/**
 * What a route reads as its body: a schema (a JSON body, validated), `'none'` (never read — GET,
 * and routes that only refuse, so an upload sent there still gets their 404/405), or `'stream'`
 * (the handler reads `request.body` itself: uploads and forms).
 */
export type BodySpec = TSchema | 'none' | 'stream';

/** A response that is not JSON: a file, a page, a redirect, an image. */
export interface RawResponse {
  /** Its content type (`image/gif`, `text/html`, …); `redirect` for a 302 without a body. */
  raw: string;
  description: string;
}

/** What a route answers on success: a JSON schema (status 200 unless `status` says otherwise), or a raw response. */
export type ResponseSpec = TSchema | RawResponse;

/** What a handler of a route that needs credentials knows of its caller. */
export interface Caller {
  team: string;
  /** The API key of a Bearer request; null for a dashboard session. */
  key: ApiKeyRec | null;
  user?: UserRec;
  session?: SessionRec;
  state: RequestState;
}

/** The signed-in user of a route for sessions only. */
export interface SessionCaller {
  team: string;
  user: UserRec;
  session: SessionRec;
}

type In<S, Fallback> = S extends TSchema ? StaticDecode<S> : Fallback;

export interface HandlerContext<A extends Access, P, Q, B, I extends boolean = false> {
  request: Request;
  params: In<P, Record<string, never>>;
  query: In<Q, Record<string, string | undefined>>;
  /** The body as its schema reads it; as parsed for an idempotent route, which checks it after the key's lookup. */
  body: I extends true ? unknown : In<B, undefined>;
  /** The response's status and headers (a handler sets them when they vary). */
  set: { status?: number | string; headers: Record<string, string | number> };
  /** The authenticated caller; routes that need none have none. */
  caller: A extends 'public' ? undefined : A extends 'session' ? SessionCaller : Caller;
}

type Answer<R> = R extends TSchema ? Static<R> | Response : Response;

export interface RouteDef<A extends Access, P, Q, B extends BodySpec, R extends ResponseSpec, I extends boolean> {
  method: Method;
  /** Elysia's syntax: `/emails/:id`, `/dashboard/*`. */
  path: string;
  /** One line for the OpenAPI document and the route index; Posthorn extensions say so. */
  summary: string;
  description?: string;
  access: A;
  /**
   * The least role a caller needs (docs/api.md §19.4): a session's user's role, or an API key's —
   * its maker's role when it was made. Unset: `viewer` for GET, `member` for every other method
   * (route-table.ts `requiredRole`); team administration declares `admin` or `owner`. Routes for
   * anyone or for the signed-in user's own account (`public`, `session`) need none.
   */
  role?: Role;
  /**
   * An administrative action written to the team's audit log when the route succeeds (docs/api.md
   * §19.11): who (the user or key), when, from which address, through the API or the dashboard.
   */
  audit?: AuditAction;
  /** The path parameters: required when the path has any. */
  params?: P;
  /** The query parameters the route reads (unknown ones are ignored, as Resend does). */
  query?: Q;
  body: B;
  /**
   * The `Idempotency-Key` header is honoured (docs/api.md §5): its format is checked before the body
   * is read, and the body's fields after the key's lookup (§3.3) — by the handler, so the registrar
   * checks only the body's top-level type.
   */
  idempotent?: I;
  /**
   * Where a send's attachments are in the body (a send's `attachments`, or each batch item's): a
   * large body is then parsed as it arrives, their base64 decoded as it comes (body.ts).
   */
  largeBody?: LargeBody;
  response: R;
  /** The success status when it does not vary (default 200). */
  status?: number;
  /** Left out of the OpenAPI document (the dashboard's files, refusals). */
  hidden?: boolean;
  handler(ctx: HandlerContext<A, P, Q, B, I>): Answer<R> | Promise<Answer<R>>;
}

/** A declared route, its types erased: what resources hand the registrar. */
export interface Route {
  method: Method;
  path: string;
  summary: string;
  description?: string;
  access: Access;
  role?: Role;
  audit?: AuditAction;
  params?: TSchema;
  query?: TSchema;
  body: BodySpec;
  idempotent?: boolean;
  largeBody?: LargeBody;
  response: ResponseSpec;
  status?: number;
  hidden?: boolean;
  handler(ctx: HandlerContext<Access, TSchema | undefined, TSchema | undefined, BodySpec>): unknown;
}

/** Declare a route. TypeScript checks the handler against the route's own schemas here; the registrar sees them erased. */
export function route<
  A extends Access,
  P extends TSchema | undefined = undefined,
  Q extends TSchema | undefined = undefined,
  B extends BodySpec = 'none',
  R extends ResponseSpec = ResponseSpec,
  I extends boolean = false,
>(def: RouteDef<A, P, Q, B, R, I>): Route {
  return def as unknown as Route;
}

/** The routes of one resource (one file of src/api/resources/), and the tag that groups them in the OpenAPI document. */
export interface Resource<Ctx> {
  tag: string;
  routes(ctx: Ctx): Route[];
}

export function resource<Ctx>(tag: string, routes: (ctx: Ctx) => Route[]): Resource<Ctx> {
  return { tag, routes };
}

export const isRaw = (r: ResponseSpec): r is RawResponse => typeof (r as RawResponse).raw === 'string';
