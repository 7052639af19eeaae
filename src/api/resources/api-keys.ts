// API keys (docs/api.md §10): create (token shown once), list, rename, delete. A key carries the
// role of whoever made it (accounts/roles.ts): nobody renames or deletes a key above their role.
import type { ApiContext } from '../app';
import type { ApiKeyRec } from '../../store';
import { pageQuery, listOf } from '../platform/params';
import { errors } from '../../errors';
import { createApiKey } from '../../accounts/api-keys';
import { actingRole, keyRole, requireRole } from '../../accounts/roles';
import type { Caller } from '../platform/route';
import { resource, route } from '../platform/route';
import { Deleted, IgnoredBody, PageQuery, Ref, UuidParams } from '../../schemas/common';
import { ApiKeyCreated, ApiKeyList, type ApiKeySummary, CreateApiKeyRequest, RenameApiKeyRequest } from '../../schemas/api-keys';

const summary = (k: ApiKeyRec): ApiKeySummary => ({ id: k.id, name: k.name, created_at: k.created_at, last_used_at: k.last_used_at });

const Params = UuidParams('id');

/** A key above the caller's role is not theirs to change. */
const mayTouch = (caller: Caller, key: ApiKeyRec) => requireRole(caller, keyRole(key), `Changing a key with the ${keyRole(key)} role`);

export const apiKeysResource = resource('API keys', ({ store }: ApiContext) => [
  route({
    method: 'POST',
    path: '/api-keys',
    summary: 'Create an API key',
    access: 'team',
    body: CreateApiKeyRequest,
    audit: 'api_key.created',
    status: 201,
    response: ApiKeyCreated,
    async handler({ caller, body }) {
      const maker = { role: actingRole(caller), user_id: caller.user?.id ?? null, key_id: caller.key?.id ?? null };
      const { key, token } = await createApiKey(store, caller.team, body, maker);
      return { object: 'api_key' as const, id: key.id, token };
    },
  }),
  route({
    method: 'GET',
    path: '/api-keys',
    summary: 'List API keys',
    access: 'team',
    query: PageQuery,
    body: 'none',
    response: ApiKeyList,
    handler: async ({ caller, query }) => listOf(await store.apiKeys.page(caller.team, pageQuery(query), null, summary)),
  }),
  route({
    method: 'PATCH',
    path: '/api-keys/:id',
    summary: 'Rename an API key',
    access: 'team',
    audit: 'api_key.renamed',
    params: Params,
    body: RenameApiKeyRequest,
    response: Ref('api_key'),
    async handler({ caller, params, body }) {
      const { team } = caller;
      const updated = await store.write(async (tx) => {
        const cur = await tx.apiKeys.get(team, params.id);
        if (!cur) return false;
        mayTouch(caller, cur);
        tx.apiKeys.put({ ...cur, name: body.name });
        return true;
      });
      if (!updated) throw errors.notFound('API key');
      return { object: 'api_key' as const, id: params.id };
    },
  }),
  route({
    method: 'DELETE',
    path: '/api-keys/:id',
    summary: 'Delete (revoke) an API key',
    access: 'team',
    audit: 'api_key.deleted',
    params: Params,
    body: IgnoredBody,
    response: Deleted('api_key'),
    async handler({ caller, params }) {
      const { team } = caller;
      const removed = await store.write(async (tx) => {
        const cur = await tx.apiKeys.get(team, params.id);
        if (!cur) return false;
        mayTouch(caller, cur);
        tx.apiKeys.remove(team, params.id);
        return true;
      });
      if (!removed) throw errors.notFound('API key');
      return { object: 'api_key' as const, id: params.id, deleted: true as const };
    },
  }),
]);
