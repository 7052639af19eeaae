// API keys (docs/api.md §10): create (token shown once), list, rename, delete.
import { t } from 'elysia';
import type { App, ApiContext } from '../app';
import { caller } from '../platform/context';
import { pathId, pageQuery, listOf } from '../platform/params';
import { errors } from '../../errors';
import { createApiKey } from '../../accounts/api-keys';

const tags = ['API keys'];

export function apiKeysRoutes(app: App, { store }: ApiContext) {
  app.post(
    '/api-keys',
    async ({ request, body, set }) => {
      const { team } = caller(request);
      const { key, token } = await createApiKey(store, team, body);
      set.status = 201;
      return { object: 'api_key', id: key.id, token };
    },
    {
      body: t.Object({
        name: t.String({ maxLength: 50, error: 'The `name` field must be a string of at most 50 characters.' }),
        permission: t.Optional(t.String()),
        domain_id: t.Optional(t.Union([t.String(), t.Null()])),
      }),
      detail: { summary: 'Create an API key', tags },
    },
  );

  app.get(
    '/api-keys',
    async ({ request, query }) => {
      const { team } = caller(request);
      return listOf(
        await store.apiKeys.page(team, pageQuery(query), null, (k) => ({
          id: k.id,
          name: k.name,
          created_at: k.created_at,
          last_used_at: k.last_used_at,
        })),
      );
    },
    { detail: { summary: 'List API keys', tags } },
  );

  app.patch(
    '/api-keys/:id',
    async ({ request, params, body }) => {
      const { team } = caller(request);
      const id = pathId(params.id);
      const updated = await store.write(async (tx) => {
        const cur = await tx.apiKeys.get(team, id);
        if (!cur) return false;
        tx.apiKeys.put({ ...cur, name: body.name });
        return true;
      });
      if (!updated) throw errors.notFound('API key');
      return { object: 'api_key', id };
    },
    {
      body: t.Object({ name: t.String({ maxLength: 50, error: 'The `name` field must be a string of at most 50 characters.' }) }),
      detail: { summary: 'Rename an API key', tags },
    },
  );

  app.delete(
    '/api-keys/:id',
    async ({ request, params }) => {
      const { team } = caller(request);
      const id = pathId(params.id);
      const removed = await store.write(async (tx) => {
        if (!(await tx.apiKeys.get(team, id))) return false;
        tx.apiKeys.remove(team, id);
        return true;
      });
      if (!removed) throw errors.notFound('API key');
      return { object: 'api_key', id, deleted: true };
    },
    { detail: { summary: 'Delete (revoke) an API key', tags } },
  );
}
