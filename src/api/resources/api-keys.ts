// API keys (docs/api.md §10): create (token shown once), list, rename, delete.
import type { ApiContext } from '../app';
import type { ApiKeyRec } from '../../store';
import { pageQuery, listOf } from '../platform/params';
import { errors } from '../../errors';
import { createApiKey } from '../../accounts/api-keys';
import { resource, route } from '../platform/route';
import { Deleted, IgnoredBody, PageQuery, Ref, UuidParams } from '../../schemas/common';
import { ApiKeyCreated, ApiKeyList, type ApiKeySummary, CreateApiKeyRequest, RenameApiKeyRequest } from '../../schemas/api-keys';

const summary = (k: ApiKeyRec): ApiKeySummary => ({ id: k.id, name: k.name, created_at: k.created_at, last_used_at: k.last_used_at });

const Params = UuidParams('id');

export const apiKeysResource = resource('API keys', ({ store }: ApiContext) => [
  route({
    method: 'POST',
    path: '/api-keys',
    summary: 'Create an API key',
    access: 'team',
    body: CreateApiKeyRequest,
    status: 201,
    response: ApiKeyCreated,
    async handler({ caller, body }) {
      const { key, token } = await createApiKey(store, caller.team, body);
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
    params: Params,
    body: RenameApiKeyRequest,
    response: Ref('api_key'),
    async handler({ caller, params, body }) {
      const { team } = caller;
      const updated = await store.write(async (tx) => {
        const cur = await tx.apiKeys.get(team, params.id);
        if (!cur) return false;
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
    params: Params,
    body: IgnoredBody,
    response: Deleted('api_key'),
    async handler({ caller, params }) {
      const { team } = caller;
      const removed = await store.write(async (tx) => {
        if (!(await tx.apiKeys.get(team, params.id))) return false;
        tx.apiKeys.remove(team, params.id);
        return true;
      });
      if (!removed) throw errors.notFound('API key');
      return { object: 'api_key' as const, id: params.id, deleted: true as const };
    },
  }),
]);
