// Which routes a key may call over HTTP (docs/api.md §1.2). The key check itself is shared with
// SMTP AUTH (src/accounts/keys.ts).
import type { ApiKeyRec } from '../../store';

/** Routes a sending_access key may call (SMTP is checked by the SMTP server itself). */
export function allowedFor(key: ApiKeyRec, method: string, path: string): boolean {
  if (key.permission === 'full_access') return true;
  const route = path.length > 1 ? path.replace(/\/$/, '') : path; // the router takes `/emails/` too
  return method === 'POST' && (route === '/emails' || route === '/emails/batch');
}
