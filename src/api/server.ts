// The HTTP front door. Order of checks (docs/api.md §3.3): the URL parsed once (a malformed Host: 400) → authentication
// (401/403, before routing) → rate limit (429) → routing and handlers (Elysia). Every
// authenticated request gets the ratelimit-* headers and an entry in the request log.
import { buildApp, type ApiDeps } from './app';
import { setClientIp, setState, type RequestState } from './platform/context';
import { TrustedProxies } from '../net/client-address';
import { errorResponse } from './platform/json';
import { RequestLog } from './platform/requestlog';
import { RateLimiter } from '../limits/ratelimit';
import { routable } from './platform/request-url';
import { authenticate } from '../accounts/keys';
import { requireSession, sessionToken } from './platform/session';
import { ApiError, errors } from '../errors';
import { log } from '../log';
import type { SignedIn } from '../accounts/sessions';
import type { ApiKeyRec } from '../store';

/** What Bun passes to `fetch` beside the request: the connection's address. */
type PeerSource = { requestIP(r: Request): { address: string } | null };

export function createHandler(svc: ApiDeps, requestLog = new RequestLog(svc.store)) {
  const { app, table } = buildApp({ ...svc, requestLog });
  // The team's limit is shared with SMTP submission (docs/api.md §6): one instance, made by the root.
  const limiter = svc.limiter;
  const rps = svc.config.limits.requests_per_second;
  const proxies = new TrustedProxies(svc.config.http.trusted_proxies);
  // Sessions are not counted against the team's API limit, but each has a generous one of its own
  // (docs/api.md §19.2): a page stuck in a loop must not be free.
  const sessionLimiter = new RateLimiter(svc.config.limits.session_requests_per_second);
  const sessionRps = svc.config.limits.session_requests_per_second;

  return async function handle(incoming: Request, server?: PeerSource): Promise<Response> {
    const startedAt = performance.now();
    const res = await route(incoming, startedAt, server);
    svc.telemetry.request(incoming.method, res.status, (performance.now() - startedAt) / 1000);
    return res;
  };

  async function route(incoming: Request, startedAt: number, server?: PeerSource): Promise<Response> {
    // One parse of the URL: the path judged here is the path the router routes (request-url.ts).
    let req: Request;
    let path: string;
    try {
      ({ req, path } = routable(incoming));
    } catch (e) {
      if (e instanceof ApiError) return errorResponse(null, e);
      throw e;
    }
    const peer = server?.requestIP(incoming)?.address;
    const ip = peer ? proxies.clientAddress(peer, req.headers.get('x-forwarded-for')) : '';
    setClientIp(req, ip);
    const cookie = sessionToken(req) !== null;
    if (table.isPublic(path)) return cookie ? privateToSession(await app.handle(req)) : app.handle(req);

    // A dashboard session: the cookie names it, the CSRF header proves the page is ours
    // (docs/api.md §19.2). Not counted against the team's API limit (it has its own, per session)
    // nor written to the request log, which record what API keys do.
    if (!req.headers.has('authorization') && cookie) {
      let signedIn: SignedIn;
      try {
        signedIn = await requireSession(svc.auth.sessions, req);
        // The team's sign-in switches (require TOTP, require OpenID Connect) hold for sessions already open.
        const refused = await svc.auth.switches.refusal(signedIn);
        if (refused) throw refused;
      } catch (e) {
        if (e instanceof ApiError) return errorResponse(null, e);
        throw e;
      }
      const rl = sessionLimiter.take(signedIn.session.id);
      if (!rl.allowed)
        return errorResponse(
          null,
          new ApiError(429, 'rate_limit_exceeded', `Too many requests. A dashboard session can make ${sessionRps} requests per second.`, rl.headers),
        );
      setState(req, { team: signedIn.user.team_id, key: null, user: signedIn.user, session: signedIn.session, path });
      return privateToSession(await app.handle(req));
    }

    let key: ApiKeyRec;
    try {
      key = await authenticate(svc.store, req.headers.get('authorization'));
    } catch (e) {
      if (e instanceof ApiError) return errorResponse(null, e);
      throw e;
    }
    const s: RequestState = { team: key.team_id, key, path };
    setState(req, s);
    svc.keyUsage.touch(key);

    let res: Response;
    // A sending_access key may call only the routes that say so (docs/api.md §1.2).
    if (key.permission !== 'full_access' && !table.allowsSendingKey(req.method, path)) {
      // Not counted against the team (an authorisation failure), but it shows the window all the same.
      s.responseHeaders = limiter.peek(key.team_id).headers;
      res = errorResponse(req, errors.restrictedApiKey());
    } else {
      const rl = limiter.take(key.team_id);
      s.responseHeaders = rl.headers;
      if (!rl.allowed) {
        res = errorResponse(req, new ApiError(429, 'rate_limit_exceeded', `Too many requests. You can only make ${rps} requests per second.`));
      } else {
        res = await app.handle(req);
      }
    }
    // Responses not made by jsonResponse (files, redirects) get them here.
    if (s.headersIn !== res) for (const k in s.responseHeaders) res.headers.set(k, s.responseHeaders[k]!);
    requestLog.record({
      key,
      method: req.method,
      path,
      ip,
      status: res.status,
      userAgent: req.headers.get('user-agent'),
      startedAt,
      requestJson: s.bodyJson,
      responseJson: s.responseJson,
    });
    return res;
  }
}

/**
 * A JSON answer to a request with the session cookie is the signed-in user's (their team's data,
 * the CSRF token of GET /auth/session): no cache, shared or the browser's, may keep it (RFC 9111
 * §5.2.2.5). The dashboard's files keep their own caching.
 */
function privateToSession(res: Response): Response {
  if (!res.headers.has('cache-control') && res.headers.get('content-type')?.startsWith('application/json')) res.headers.set('cache-control', 'no-store');
  return res;
}

export interface HttpServer {
  port: number;
  url: string;
  /** Stop listening (dropping open connections when `force`), then write the request log's last entries. */
  stop(force?: boolean): Promise<void>;
}

export function startHttp(svc: ApiDeps): HttpServer {
  const requestLog = new RequestLog(svc.store);
  const handle = createHandler(svc, requestLog);
  const { http } = svc.config;
  const tls = http.tls_cert && http.tls_key ? { cert: Bun.file(http.tls_cert), key: Bun.file(http.tls_key) } : undefined;
  const server = Bun.serve({
    hostname: http.host,
    port: http.port,
    tls,
    // Our own limit (50 MB, answered as JSON 413) is enforced while reading; Bun's must be higher.
    maxRequestBodySize: 1024 * 1024 * 1024,
    idleTimeout: 120,
    fetch: handle,
    error(err) {
      log.error('http.error', { error: String(err?.stack ?? err) });
      return errorResponse(null, errors.internal());
    },
  });
  const url = `${tls ? 'https' : 'http'}://${http.host}:${server.port}`;
  log.info('http.listening', { url });
  return {
    port: server.port!,
    url,
    async stop(force = false) {
      await server.stop(force);
      await requestLog.flush();
    },
  };
}
