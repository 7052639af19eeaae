// SMTP AUTH (RFC 4954; PLAIN RFC 4616, LOGIN) for submission (api-reference §17): the username is
// the fixed `smtp.username` (Resend's `resend`), the password an API key of either permission —
// the same key check as the HTTP API's Bearer header. A sending_access key's domain binding is
// enforced later by the sending core, against the message's From domain.
import type { Services } from '../services';
import type { ApiKeyRec } from '../store';
import { authenticate, touchKey } from '../api/platform/auth';
import { replies } from './replies';

/** The key behind a username/password pair; throws the 535 reply otherwise. */
export function smtpLogin(svc: Services, username: string | null | undefined, password: string | null | undefined): ApiKeyRec {
  if (username !== svc.config.smtp.username || !password) throw replies.authFailed();
  let key: ApiKeyRec;
  try {
    key = authenticate(svc.store, `Bearer ${password}`);
  } catch {
    throw replies.authFailed();
  }
  touchKey(svc.store, key);
  return key;
}

/** The key as it is now: a key deleted after AUTH no longer sends (null). */
export function currentKey(svc: Services, key: Pick<ApiKeyRec, 'team_id' | 'id'>): ApiKeyRec | null {
  return svc.store.apiKeys.get(key.team_id, key.id) ?? null;
}
