// The Inboxes pages' requests (docs/api.md §25), the paths the SDK builds (`/inboxes/{id}/…`).
import { page } from '../api';
import { type Loaded, useGet } from '../ui';

/** The API path of an inbox, or of something under it: inboxPath(id, 'threads', thread). */
export const inboxPath = (id: string, ...rest: string[]): string => ['/inboxes', id, ...rest].map((s, i) => (i ? encodeURIComponent(s) : s)).join('/');

/** TEMPORARY: `useGet` for a route not yet in src/schemas/routes.ts. */
export function useInboxGet<T>(path: string | null): Loaded<T> {
  return useGet(path as never) as unknown as Loaded<T>;
}

/** The mailbox page of an inbox, with a thread open or not; the query keeps the list's folder, label and search. */
export function mailboxHref(inbox: string, q: { folder?: string | null; label?: string | null; q?: string | null; thread?: string | null }): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v) p.set(k, v);
  const s = p.toString();
  return page`/dashboard/inboxes/${inbox}` + (s ? `?${s}` : '');
}
