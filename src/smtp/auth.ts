// SMTP AUTH (RFC 4954; PLAIN RFC 4616, LOGIN) for submission (docs/api.md §17): the username is
// the fixed `smtp.username` (Resend's `resend`), the password an API key of either permission —
// the same key check as the HTTP API's Bearer header. A sending_access key's domain binding is
// enforced later by the sending core, against the message's From domain.
import type { Config } from '../config';
import type { ApiKeyRec, Store } from '../store';
import { keyForToken, type KeyUsage } from '../accounts/keys';
import { replies } from './replies';
import { StoreUnavailable } from '../errors';

/** The key behind a username/password pair; throws the 535 reply otherwise. */
export async function smtpLogin(
  svc: { store: Store; keyUsage: KeyUsage; config: Pick<Config, 'smtp'> },
  username: string | null | undefined,
  password: string | null | undefined,
): Promise<ApiKeyRec> {
  if (username !== svc.config.smtp.username || !password) throw replies.authFailed();
  let key: ApiKeyRec;
  try {
    key = await keyForToken(svc.store, password);
  } catch (e) {
    // The database out of reach says nothing about the password: try again later.
    if (e instanceof StoreUnavailable) throw replies.authUnavailable();
    throw replies.authFailed();
  }
  svc.keyUsage.touch(key);
  return key;
}

/** The key as it is now: a key deleted after AUTH no longer sends (null). */
export async function currentKey(store: Store, key: Pick<ApiKeyRec, 'team_id' | 'id'>): Promise<ApiKeyRec | null> {
  return (await store.apiKeys.get(key.team_id, key.id)) ?? null;
}
