// Per-request state shared between the outer server (auth, rate limit, request log) and the
// Elysia handlers. Keyed by the Request object, which Elysia passes through untouched.
import type { ApiKeyRec, SessionRec, UserRec } from '../../store';

export interface RequestState {
  team: string;
  /** The API key of a Bearer request; null for a dashboard session. */
  key: ApiKeyRec | null;
  /** The signed-in user and session of a dashboard request (cookie + CSRF header). */
  user?: UserRec;
  session?: SessionRec;
  /** Path after slash-collapsing, without the query. */
  path: string;
  /** Parsed JSON body as received, undefined when there was none. */
  body?: unknown;
  /** The body as the request log keeps it (JSON text, redacted). */
  bodyJson?: string;
  /** The response body as sent, JSON text (for the request log). */
  responseJson?: string;
  /** Headers every answer to this request carries (the rate limit's, docs/api.md §6), set by the server before routing. */
  responseHeaders?: Record<string, string>;
  /** The response made with `responseHeaders` already in it (jsonResponse): the server need not add them. */
  headersIn?: Response;
}

const states = new WeakMap<Request, RequestState>();

export function setState(req: Request, s: RequestState): void {
  states.set(req, s);
}

export function stateOf(req: Request): RequestState | undefined {
  return states.get(req);
}

/** The authenticated caller of a request; every API handler runs behind authentication. */
export function caller(req: Request): RequestState {
  const s = states.get(req);
  if (!s) throw new Error('request reached an API handler without authentication');
  return s;
}

const clients = new WeakMap<Request, string>();

/** The client's address, as the server found it (net/client-address.ts: the connection's, or a trusted proxy's forward). */
export function setClientIp(req: Request, address: string): void {
  clients.set(req, address);
}

/**
 * The client's address: the one function sign-in limits, sessions, tracking events and the request
 * log read it through; '' when the server noted none (a request made in-process).
 */
export function clientIp(req: Request): string {
  return clients.get(req) ?? '';
}
