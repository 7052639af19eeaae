// The dashboard's only way to the server: the same REST API the SDKs call, authenticated by the
// session cookie plus its CSRF token in a header (docs/api.md §19.2). Answers are typed by the
// server's schemas: `get('/emails')`, `post(url('/emails/:id/cancel', { id }))` name a route of
// src/schemas/routes.ts, whose answer type they return (types only: no schema is bundled).
import type { ErrorBody } from '../../src/schemas/common';
import type { RouteName, Routes } from '../../src/schemas/routes';

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

let csrf: string | null = null;
let onSignedOut: () => void = () => {};

/** The long-lived answers open now (openStream): a sign-out ends them. */
const streams = new Set<AbortController>();

export function setCsrf(token: string | null): void {
  csrf = token;
  if (token === null) for (const s of streams) s.abort();
}

/** Whether a session is signed in on this page. */
export const signedIn = (): boolean => csrf !== null;

export function whenSignedOut(fn: () => void): void {
  onSignedOut = fn;
}

const ENDED = new Set(['session_expired', 'missing_csrf_token', 'not_signed_in']);

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/**
 * A request, its answer as parsed (JSON, else text); an `ApiFailure` for an error answer. Pages
 * call `get`, `post`, `patch`, `del`, which type the answer by the route.
 */
export function request(method: Method, path: string, body?: unknown): Promise<unknown> {
  return settling(send(method, path, body));
}

/** The page's own work under way, and when the last of it ended: `quiet` waits for the page to settle. */
let inFlight = 0;
let lastDone = 0;

/**
 * `work` counted as the page's own until it ends: every request, and each chunk of code a page
 * loads with `import()` (the block editor, the automation builder), which can take longer than the
 * requests beside it.
 */
export async function settling<T>(work: Promise<T>): Promise<T> {
  inFlight++;
  try {
    return await work;
  } finally {
    inFlight--;
    lastDone = Date.now();
  }
}

// A file the browser loaded for the page outside `settling` (a style sheet, an image) ends a quiet
// spell too (Resource Timing: an entry is recorded when its response has ended).
if (typeof PerformanceObserver !== 'undefined') {
  new PerformanceObserver(() => {
    lastDone = Date.now();
  }).observe({ type: 'resource' });
}

/**
 * Resolves once none of the page's own work has been under way for `ms`: the live stream opens
 * then, after the page's first answers and chunks — a page does not need it before, and the
 * browser's network-idle signal (and tools waiting for it: 500 ms without a request) is reached
 * before a request that never ends begins.
 */
export async function quiet(ms: number): Promise<void> {
  for (;;) {
    const wait = inFlight ? ms : lastDone + ms - Date.now();
    if (!inFlight && wait <= 0 && document.readyState === 'complete') return;
    await new Promise((r) => setTimeout(r, Math.max(50, wait)));
  }
}

async function send(method: Method, path: string, body?: unknown): Promise<unknown> {
  const headers: Record<string, string> = {};
  if (csrf) headers['x-csrf-token'] = csrf;
  // A form (an upload) goes as multipart/form-data, its boundary set by the browser.
  const form = body instanceof FormData;
  if (body !== undefined && !form) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(path, { method, headers, credentials: 'same-origin', body: body === undefined ? undefined : form ? body : JSON.stringify(body) });
  } catch {
    throw new ApiFailure(0, 'network_error', 'Posthorn cannot be reached. Check your connection and try again.');
  }
  const type = res.headers.get('content-type') ?? '';
  const payload: unknown = type.includes('json') ? await res.json().catch(() => null) : await res.text();
  if (!res.ok) throw failure(res, path, payload);
  return payload;
}

/**
 * A long-lived answer read as it comes (the live stream, docs/api.md §19.15), authenticated like
 * every request: the cookie and the CSRF header (which a browser's EventSource cannot send).
 */
export async function openStream(path: '/auth/session/events', abort: AbortController): Promise<Response> {
  streams.add(abort);
  abort.signal.addEventListener('abort', () => streams.delete(abort));
  const res = await fetch(path, { headers: csrf ? { 'x-csrf-token': csrf } : {}, credentials: 'same-origin', signal: abort.signal });
  if (!res.ok || !res.body) {
    const type = res.headers.get('content-type') ?? '';
    throw failure(res, path, type.includes('json') ? await res.json().catch(() => null) : null);
  }
  return res;
}

/** The `ApiFailure` of an error answer (docs/api.md §3.1); an ended session signs the page out. */
function failure(res: Response, path: string, payload: unknown): ApiFailure {
  const error: Partial<ErrorBody> = typeof payload === 'object' && payload !== null ? payload : {};
  const code = error.name ?? 'error';
  if (res.status === 401 && ENDED.has(code) && !path.startsWith('/auth/sign-in')) onSignedOut();
  // The team now signs in through its OpenID Connect provider only (docs/api.md §19.4): back to the sign-in page.
  if (code === 'oidc_required' && !path.startsWith('/auth/sign-in')) onSignedOut();
  return new ApiFailure(res.status, code, error.message ?? `The request failed (${res.status}).`);
}

/**
 * GET a file (an export, docs/api.md §4.1) and hand it to the browser as a download, named as the
 * answer's Content-Disposition names it. Fetched rather than linked: the session's CSRF header
 * must go with it (docs/api.md §19.2). The browser holds the file before saving it; the server
 * streams it.
 */
export async function download<T extends Target<'GET'>>(path: T): Promise<void> {
  let res: Response;
  try {
    res = await fetch(path, { headers: csrf ? { 'x-csrf-token': csrf } : {}, credentials: 'same-origin' });
  } catch {
    throw new ApiFailure(0, 'network_error', 'Posthorn cannot be reached. Check your connection and try again.');
  }
  if (!res.ok) throw failure(res, path, await res.json().catch(() => null));
  const file = URL.createObjectURL(await res.blob());
  const link = document.createElement('a');
  link.href = file;
  link.download = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? 'export';
  document.body.append(link);
  link.click();
  link.remove();
  // Revoked later: a download still starting may need the URL.
  setTimeout(() => URL.revokeObjectURL(file), 60_000);
}

/** The paths of the map's routes of method `M`: `/emails/:id` of `GET /emails/:id`. */
type PathOf<M extends Method> = RouteName extends infer K ? (K extends `${M} ${infer P}` ? P : never) : never;

/** The parameters of a path: `id` and `event_id` of `/webhooks/:id/events/:event_id`. */
type ParamNames<P extends string> = P extends `${string}:${infer N}/${infer Rest}` ? N | ParamNames<Rest> : P extends `${string}:${infer N}` ? N : never;

declare const route: unique symbol;
/** A path of the map with its parameters filled in (`url`): a string that remembers its route. */
export type Url<P extends string> = string & { readonly [route]: P };

/** What a request of method `M` takes: a path without parameters as written, or a `url()`. */
export type Target<M extends Method> = { [P in PathOf<M>]: [ParamNames<P>] extends [never] ? P | Url<P> : Url<P> }[PathOf<M>];

/** The answer of the route that `M` and the target `T` name. */
export type Answer<M extends Method, T> = `${M} ${T extends Url<infer P> ? P : T & string}` extends infer R extends RouteName ? Routes[R] : never;

/** Values for a query string; unset ones are left out. */
export type Query = Record<string, string | number | null | undefined>;

/**
 * `pattern` (a path of the map) with its `:parameters` taken from `values`, encoded; the other
 * values make the query string: `url('/emails/:id/events', { id, limit: 100 })`.
 */
export function url<P extends PathOf<Method>>(pattern: P, values: { [N in ParamNames<P>]: string } & Query): Url<P> {
  const rest: Query = { ...values };
  const path = pattern.replace(/:(\w+)/g, (_, name: string) => {
    delete rest[name];
    return encodeURIComponent(String(values[name as ParamNames<P>]));
  });
  return (path + qs(rest)) as Url<P>;
}

/**
 * A dashboard page's path with every interpolated value encoded as one path segment:
 * page`/dashboard/emails/${id}`. The one helper for links and navigation, as `url` is for requests:
 * a value with `/`, `..` or `?` in it stays one segment of the page it names.
 */
export function page(parts: TemplateStringsArray, ...values: (string | number)[]): string {
  return parts.reduce((out, part, i) => out + part + (i < values.length ? encodeURIComponent(String(values[i])) : ''), '');
}

export const get = <T extends Target<'GET'>>(path: T) => request('GET', path) as Promise<Answer<'GET', T>>;
export const post = <T extends Target<'POST'>>(path: T, body: unknown = {}) => request('POST', path, body) as Promise<Answer<'POST', T>>;
export const patch = <T extends Target<'PATCH'>>(path: T, body: unknown) => request('PATCH', path, body) as Promise<Answer<'PATCH', T>>;
export const del = <T extends Target<'DELETE'>>(path: T, body?: unknown) => request('DELETE', path, body) as Promise<Answer<'DELETE', T>>;

/** A query string from the set values of `params`. */
export function qs(params: Query): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined && v !== '') p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
}
