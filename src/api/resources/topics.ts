// Topics (docs/api.md §12.8): create, list, retrieve, update, delete. A contact's choices are
// served under /contacts/{id_or_email}/topics (contact-topics.ts); the logic lives in src/topics.
import type { App, ApiContext } from '../app';
import { caller } from '../platform/context';
import { pathId, pageQuery, listOf } from '../platform/params';
import { objectBody } from '../platform/body';
import { errors } from '../../errors';
import { newTopic, topicChanges, topicView } from '../../topics';
import { writeOrRefuse } from '../../store';

const tags = ['Topics'];

export function topicsRoutes(app: App, { store }: ApiContext) {
  const load = async (request: Request, raw: string) => {
    const topic = await store.topics.get(caller(request).team, pathId(raw));
    if (!topic) throw errors.notFound('Topic');
    return topic;
  };

  app.post(
    '/topics',
    async ({ request, body, set }) => {
      const topic = newTopic(caller(request).team, objectBody(body));
      await store.write(async (tx) => tx.topics.put(topic));
      set.status = 201;
      return { object: 'topic', id: topic.id };
    },
    { detail: { summary: 'Create a topic', tags } },
  );

  app.get('/topics', async ({ request, query }) => listOf(await store.topics.page(caller(request).team, pageQuery(query), 20, topicView)), {
    detail: { summary: 'List topics', tags },
  });

  app.get('/topics/:id', async ({ request, params }) => topicView(await load(request, params.id)), { detail: { summary: 'Retrieve a topic', tags } });

  app.patch(
    '/topics/:id',
    async ({ request, params, body }) => {
      const { team } = caller(request);
      const id = pathId(params.id);
      const changes = objectBody(body);
      await writeOrRefuse(store, async (tx) => {
        const cur = await tx.topics.get(team, id);
        if (!cur) return errors.notFound('Topic');
        tx.topics.put(topicChanges(cur, changes));
      });
      return { object: 'topic', id };
    },
    { detail: { summary: 'Update a topic (its default subscription is fixed)', tags } },
  );

  app.delete(
    '/topics/:id',
    async ({ request, params }) => {
      const { team } = caller(request);
      const id = pathId(params.id);
      await writeOrRefuse(store, async (tx) => {
        if (!(await tx.topics.get(team, id))) return errors.notFound('Topic');
        // The contacts' choices about it go with it.
        await tx.topicChoices.removeTopic(team, id);
        tx.topics.remove(team, id);
      });
      return { object: 'topic', id, deleted: true };
    },
    { detail: { summary: 'Delete a topic', tags } },
  );
}
