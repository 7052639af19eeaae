// API key tokens and their check (docs/api.md §1.2, §10), shared by both ways in: the HTTP API's
// `Authorization: Bearer` header and SMTP AUTH's password. Tokens are `re_` + 8 + `_` + 24
// alphanumerics; only their SHA-256 is stored, and the lookup is an exact index hit on that hash.
import type { ApiKeyRec, Store, StoreReader } from '../store';
import { errors } from '../errors';
import { sha256hex, randomAlnum, nowIso } from '../ids';
import { inBackground } from '../store/guarded';

export const TOKEN_RE = /^re_[A-Za-z0-9]{8}_[A-Za-z0-9]{24}$/;

export function newToken(): string {
  return `re_${randomAlnum(8)}_${randomAlnum(24)}`;
}

export function hashToken(token: string): string {
  return sha256hex(token);
}

/** The live key a token stands for; throws 403 invalid_api_key otherwise. */
export async function keyForToken(store: StoreReader, token: string): Promise<ApiKeyRec> {
  if (!TOKEN_RE.test(token)) throw errors.invalidApiKey();
  const key = await store.apiKeys.find('hash', hashToken(token));
  if (!key) throw errors.invalidApiKey();
  return key;
}

/** Resolve an Authorization header to a live key, or throw the documented 401/403. */
export function authenticate(store: StoreReader, header: string | null): Promise<ApiKeyRec> {
  const m = header ? /^\s*bearer\s+(\S*)\s*$/i.exec(header) : null;
  if (!m?.[1]) throw errors.missingApiKey();
  return keyForToken(store, m[1]);
}

const TOUCH_EVERY_MS = 60_000;

/**
 * Keys' `last_used_at`, recorded at most once a minute per key, without holding up the request:
 * usage stamps are not accepted data, so they ride along with the next commit. One for both ways
 * in (HTTP and SMTP AUTH), made by the composition root (services.ts).
 */
export class KeyUsage {
  /** When this process last recorded each key's use. */
  private readonly touched = new Map<string, number>();

  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
  ) {}

  /** `key` was just used. */
  touch(key: ApiKeyRec): void {
    const now = this.now();
    if (now - (this.touched.get(key.id) ?? 0) < TOUCH_EVERY_MS) return;
    this.touched.set(key.id, now);
    inBackground(
      'api key last_used_at',
      this.store.write(async (tx) => {
        const cur = await tx.apiKeys.get(key.team_id, key.id);
        if (cur) tx.apiKeys.put({ ...cur, last_used_at: nowIso() });
      }),
    );
  }
}
