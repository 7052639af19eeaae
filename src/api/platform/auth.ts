// Bearer API keys (api-reference §1.2). Tokens are `re_` + 8 + `_` + 24 alphanumerics; only their
// SHA-256 is stored, and the lookup is an exact index hit on that hash.
import type { Store, ApiKeyRec } from '../../store';
import { errors } from '../errors';
import { sha256hex, randomAlnum, nowIso } from '../../ids';

export const TOKEN_RE = /^re_[A-Za-z0-9]{8}_[A-Za-z0-9]{24}$/;

export function newToken(): string {
  return `re_${randomAlnum(8)}_${randomAlnum(24)}`;
}

export function hashToken(token: string): string {
  return sha256hex(token);
}

/** Resolve an Authorization header to a live key, or throw the documented 401/403. */
export function authenticate(store: Store, header: string | null): ApiKeyRec {
  const m = header ? /^\s*bearer\s+(\S*)\s*$/i.exec(header) : null;
  if (!m || !m[1]) throw errors.missingApiKey();
  if (!TOKEN_RE.test(m[1])) throw errors.invalidApiKey();
  const key = store.apiKeys.find('hash', hashToken(m[1]));
  if (!key) throw errors.invalidApiKey();
  return key;
}

/** Routes a sending_access key may call (SMTP is checked by the SMTP server itself). */
export function allowedFor(key: ApiKeyRec, method: string, path: string): boolean {
  if (key.permission === 'full_access') return true;
  const route = path.length > 1 ? path.replace(/\/$/, '') : path; // the router takes `/emails/` too
  return method === 'POST' && (route === '/emails' || route === '/emails/batch');
}

const TOUCH_EVERY_MS = 60_000;
const lastTouch = new Map<string, number>();

/**
 * Record `last_used_at`, at most once a minute per key, without holding up the request:
 * usage stamps are not accepted data, so they ride along with the next commit.
 */
export function touchKey(store: Store, key: ApiKeyRec): void {
  const now = Date.now();
  if (now - (lastTouch.get(key.id) ?? 0) < TOUCH_EVERY_MS) return;
  lastTouch.set(key.id, now);
  void store.transaction(() => {
    const cur = store.apiKeys.get(key.team_id, key.id);
    if (cur) store.apiKeys.putInTxn({ ...cur, last_used_at: nowIso() });
  });
}
