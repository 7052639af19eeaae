// The one parse of a request's URL (issue 34, finding 3). Authentication, the rate limit and the
// request log judge the path the server parsed here, and Elysia must route that same path — but
// Elysia finds a path by looking for the first `/` after the URL's 11th character (`http://` plus a
// host of 4), so behind a shorter `Host` it routed another path than the one judged. The request
// handed on is therefore rebuilt from the parsed URL whenever Elysia's reading would differ.
import { errors } from '../../errors';

/** Where Elysia starts looking for the path (its `standardHostname`). */
const ROUTER_PATH_FROM = 11;
/** The host a request with a shorter one is routed under; its own `Host` header is kept. */
const STAND_IN_HOST = 'localhost';

export interface Routable {
  /** The request to hand to the router: the incoming one, or one rebuilt from the parsed URL. */
  req: Request;
  /** Its path: repeated slashes collapsed, no query. */
  path: string;
}

/**
 * The request as the router will read it, and its path; throws the documented 400 when the `Host`
 * header makes no URL (Bun then gives a bare path: a space, `/`, `@` or a bad port in it, or none).
 */
export function routable(incoming: Request): Routable {
  let url: URL;
  try {
    url = new URL(incoming.url);
  } catch {
    throw errors.badHost();
  }
  let rebuild = url.href !== incoming.url;
  // Repeated slashes (an SDK base URL with a trailing slash gives `//emails`) are collapsed.
  if (url.pathname.includes('//')) {
    url.pathname = url.pathname.replace(/\/{2,}/g, '/');
    rebuild = true;
  }
  if (url.href.indexOf('/', ROUTER_PATH_FROM) !== url.origin.length) {
    url.hostname = STAND_IN_HOST;
    rebuild = true;
  }
  return { req: rebuild ? new Request(url, incoming) : incoming, path: url.pathname };
}
