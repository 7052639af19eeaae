// Creating API keys — one path for `POST /api-keys` and `posthorn keys create` (docs/api.md §10).
// Both check the request against its schema first (src/schemas/api-keys.ts: the name); what the key
// may do is checked here. A key carries the authority of whoever made it (roles.ts): its role is
// its maker's, or less when asked, never more.
import type { Store, ApiKeyRec, Permission, Role } from '../store';
import type { CreateApiKeyRequest } from '../schemas/api-keys';
import { ApiError, errors } from '../errors';
import { newId, nowIso } from '../ids';
import { newToken, hashToken } from './keys';
import { atLeast } from './roles';

/** Who makes a key: a signed-in user or a key (their role), or the command line (an owner's). */
export interface KeyMaker {
  role: Role;
  user_id: string | null;
  key_id: string | null;
}

/** `posthorn init` and `posthorn keys create`: whoever runs them holds the data directory, and so the team. */
export const COMMAND_LINE: KeyMaker = { role: 'owner', user_id: null, key_id: null };

/** Check what the key may do and persist it; resolves after the flushed commit with the one-time token. */
export async function createApiKey(store: Store, team: string, input: CreateApiKeyRequest, maker: KeyMaker): Promise<{ key: ApiKeyRec; token: string }> {
  const role = input.role ?? maker.role;
  if (!atLeast(maker.role, role))
    throw new ApiError(403, 'restricted_role', `A key can carry at most the role of whoever makes it (${maker.role}), not ${role}.`);
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
    role,
    made_by: { user_id: maker.user_id, key_id: maker.key_id },
    domain_id: domainId ? domainId.toLowerCase() : null,
    token_hash: hashToken(token),
    last_used_at: null,
  };
  await store.write(async (tx) => tx.apiKeys.put(key));
  return { key, token };
}
