// A small history-API router: the location as state, links that do not reload the page, and
// path patterns with `:params`.
import { useEffect, useState } from 'preact/hooks';

const listeners = new Set<() => void>();

/**
 * A page with unsaved changes registers a guard: a navigation away (a link, navigate(), the back
 * button) first asks it, and goes on only when it resolves true. Query-only changes of the same
 * page (filters, tabs) are not leaving.
 */
type Guard = () => Promise<boolean>;
let guard: Guard | null = null;
export function setLeaveGuard(g: Guard | null): void {
  guard = g;
}

export function navigate(to: string, opts: { replace?: boolean; force?: boolean } = {}): void {
  if (guard && !opts.force && new URL(to, location.href).pathname !== location.pathname) {
    const g = guard;
    void g().then((ok) => {
      if (!ok) return;
      if (guard === g) guard = null;
      navigate(to, { ...opts, force: true });
    });
    return;
  }
  if (opts.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  shownPath = location.pathname + location.search;
  for (const l of listeners) l();
  window.scrollTo(0, 0);
}

let shownPath = location.pathname + location.search;
window.addEventListener('popstate', () => {
  // Back or forward past a guard: return to the page shown, then ask; go on only when told to.
  const wanted = location.pathname + location.search;
  if (guard && location.pathname !== new URL(shownPath, location.href).pathname) {
    history.pushState(null, '', shownPath);
    navigate(wanted);
    return;
  }
  shownPath = wanted;
  for (const l of listeners) l();
});

export function useLocation(): { path: string; query: URLSearchParams } {
  const [, tick] = useState(0);
  useEffect(() => {
    const l = () => tick((n) => n + 1);
    listeners.add(l);
    return () => void listeners.delete(l);
  }, []);
  return { path: location.pathname, query: new URLSearchParams(location.search) };
}

/** `pattern` like `/dashboard/emails/:id` against `path`: the params, or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const p = pattern.split('/');
  const s = path.replace(/\/+$/, '').split('/');
  if (p.length !== s.length) return null;
  const out: Record<string, string> = {};
  for (let i = 0; i < p.length; i++) {
    if (p[i].startsWith(':')) out[p[i].slice(1)] = decodeURIComponent(s[i]);
    else if (p[i] !== s[i]) return null;
  }
  return out;
}

/** Replace the query string without a new history entry (filters, paging). */
export function setQuery(params: Record<string, string | null | undefined>): void {
  const q = new URLSearchParams(location.search);
  for (const [k, v] of Object.entries(params)) {
    if (v === null || v === undefined || v === '') q.delete(k);
    else q.set(k, v);
  }
  const s = q.toString();
  navigate(`${location.pathname}${s ? `?${s}` : ''}`, { replace: true });
}

/** Same-page navigation for a left click on a local link; other clicks behave as usual. */
export function onLinkClick(e: MouseEvent): void {
  const a = (e.target as HTMLElement).closest('a');
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const href = a.getAttribute('href');
  if (!href?.startsWith('/dashboard') || a.target || a.hasAttribute('download')) return;
  e.preventDefault();
  navigate(href);
}
