// Creating API keys — one path for `POST /api-keys` and `posthorn keys create` (docs/api.md §10).
// Both check the request against its schema first (src/schemas/api-keys.ts: the name); what the key
// may do is checked here.
import type { Store, ApiKeyRec, Permission } from '../store';
import type { CreateApiKeyRequest } from '../schemas/api-keys';
import { errors } from '../errors';
import { newId, nowIso } from '../ids';
import { newToken, hashToken } from './keys';

/** Check what the key may do and persist it; resolves after the flushed commit with the one-time token. */
export async function createApiKey(store: Store, team: string, input: CreateApiKeyRequest): Promise<{ key: ApiKeyRec; token: string }> {
  // A permission Resend does not know is its own error, `invalid_access` (docs/api.md §10).
  const permission = (input.permission ?? 'full_access') as Permission;
  if (permission !== 'full_access' && permission !== 'sending_access') throw errors.invalidAccess();
  const domainId = input.domain_id ?? null;
  if (domainId !== null) {
    if (permission !== 'sending_access') throw errors.validation('The `domain_id` field can only be used with `sending_access` permission.');
    if (!(await store.domains.get(team, domainId.toLowerCase()))) throw errors.validation('The `domain_id` field must name a domain of this team.');
  }
  const token = newToken();
  const key: ApiKeyRec = {
    id: newId(),
    team_id: team,
    created_at: nowIso(),
    name: input.name,
    permission,
    domain_id: domainId ? domainId.toLowerCase() : null,
    token_hash: hashToken(token),
    last_used_at: null,
  };
  await store.write(async (tx) => tx.apiKeys.put(key));
  return { key, token };
}
