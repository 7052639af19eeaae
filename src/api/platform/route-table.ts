// Every declared route (route.ts), and the policy the server derives from them before and while
// routing (docs/api.md §1.2, §3.3): which paths need no credentials, which routes a sending key may
// call, which honour `Idempotency-Key`, which bodies are read, and whether a path that matches no
// route is unknown (404) or called with the wrong method (405).
import { errors, type ApiError } from '../../errors';
import type { Role } from '../../store';
import type { Access, Method, Route } from './route';

export interface TableRoute extends Route {
  tags: string[];
  /** Matches a concrete path. */
  re: RegExp;
}

/** `/emails/:id` → a regular expression matching `/emails/0190…`. */
export function pathPattern(path: string): RegExp {
  const escaped = path.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${escaped.replace(/:[^/]+/g, '[^/]+').replace(/\*/g, '.*')}$`);
}

/**
 * The least role a route's caller needs (docs/api.md §19.4): as declared, else `viewer` to read
 * (GET) and `member` to change anything; null for routes that take no key or session of the team
 * (`public`) or act on the signed-in user's own account (`session`).
 */
export function requiredRole(r: { access: Access; method: Method; role?: Role }): Role | null {
  if (r.access === 'public' || r.access === 'session') return null;
  return r.role ?? (r.method === 'GET' ? 'viewer' : 'member');
}

/** A path's literal part up to its first parameter or wildcard (`/d/:token` → `/d/`), or the whole path. */
const staticPrefix = (path: string) => {
  const i = path.search(/[:*]/);
  return i < 0 ? null : path.slice(0, i);
};

export class RouteTable {
  readonly routes: TableRoute[];
  private readonly byPattern = new Map<string, TableRoute>();
  private readonly publicExact = new Set<string>();
  private readonly publicPrefixes: string[] = [];
  private readonly sending = new Set<string>();

  /** `extraPublic`: paths served beside the declared routes (the OpenAPI document, app.ts). */
  constructor(routes: TableRoute[], extraPublic: string[] = []) {
    this.routes = routes;
    for (const r of routes) {
      const key = `${r.method} ${r.path}`;
      if (this.byPattern.has(key)) throw new Error(`route declared twice: ${key}`);
      this.byPattern.set(key, r);
      // Routes for sessions check the session themselves (register.ts): no API key is asked for.
      if (r.access === 'public' || r.access === 'session') this.addPublic(r.path);
      if (r.access === 'sending') this.sending.add(key);
    }
    for (const p of extraPublic) this.addPublic(p);
  }

  private addPublic(path: string) {
    const prefix = staticPrefix(path);
    if (prefix === null) this.publicExact.add(path);
    else if (!this.publicPrefixes.includes(prefix)) this.publicPrefixes.push(prefix);
  }

  /** The route Elysia matched (`method` and its path pattern, as onParse sees them). */
  find(method: string, pattern: string): TableRoute | undefined {
    return this.byPattern.get(`${method} ${pattern}`);
  }

  /** Whether the route Elysia matched reads a JSON body. */
  readsBody(r: TableRoute | undefined): r is TableRoute {
    return !!r && typeof r.body === 'object';
  }

  /** Served without an API key: the route needs none or checks its own credentials. Asked before routing. */
  isPublic(path: string): boolean {
    if (this.publicExact.has(path)) return true;
    for (let i = 0; i < this.publicPrefixes.length; i++) if (path.startsWith(this.publicPrefixes[i]!)) return true;
    return false;
  }

  /** May a `sending_access` key call this? (Before routing: `path` is concrete, a trailing slash allowed.) */
  allowsSendingKey(method: string, path: string): boolean {
    const p = path.length > 1 ? path.replace(/\/$/, '') : path;
    return this.sending.has(`${method} ${p}`);
  }

  /** A path no route serves for this method: 405 when another method serves it, else 404. */
  miss(method: string, path: string): ApiError {
    const other = this.routes.some((r) => r.method !== method && r.re.test(path));
    return other ? errors.methodNotAllowed(method) : errors.routeNotFound();
  }

  /**
   * Literal paths that a parameter route of another method would read as an id (`GET /emails/batch`
   * is not the email "batch"): for each, the methods that must answer 405 (docs/api.md §2 item 15).
   */
  literalShadows(): { method: string; path: string }[] {
    const literal = new Map<string, Set<string>>();
    for (const r of this.routes) if (!/[:*]/.test(r.path)) literal.set(r.path, (literal.get(r.path) ?? new Set()).add(r.method));
    const out: { method: string; path: string }[] = [];
    for (const [path, methods] of literal)
      for (const r of this.routes)
        if (/[:*]/.test(r.path) && r.re.test(path) && !methods.has(r.method)) {
          methods.add(r.method);
          out.push({ method: r.method, path });
        }
    return out;
  }
}
