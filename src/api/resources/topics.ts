// Topics (docs/api.md §12.8): create, list, retrieve, update, delete. A contact's choices are
// served under /contacts/{id_or_email}/topics (contact-topics.ts); the logic lives in src/topics.
import type { ApiContext } from '../app';
import type { TopicRec } from '../../store';
import { pageQuery, listOf } from '../platform/params';
import { errors } from '../../errors';
import { createTopic, deleteTopic, newTopic, updateTopic } from '../../topics';
import { writeOrRefuse } from '../../store';
import { resource, route } from '../platform/route';
import { Deleted, IgnoredBody, List, PageQuery, Ref, UuidParams } from '../../schemas/common';
import { CreateTopicRequest, Topic, UpdateTopicRequest } from '../../schemas/topics';

const topicView = (t: TopicRec): Topic => ({
  object: 'topic',
  id: t.id,
  name: t.name,
  description: t.description,
  default_subscription: t.default_subscription,
  visibility: t.visibility,
  created_at: t.created_at,
});

const Params = UuidParams('id');

export const topicsResource = resource('Topics', ({ store, events }: ApiContext) => [
  route({
    method: 'POST',
    path: '/topics',
    summary: 'Create a topic',
    access: 'team',
    body: CreateTopicRequest,
    status: 201,
    response: Ref('topic'),
    async handler({ caller, body }) {
      const topic = newTopic(caller.team, body);
      await store.write((tx) => createTopic(events, tx, topic));
      return { object: 'topic' as const, id: topic.id };
    },
  }),
  route({
    method: 'GET',
    path: '/topics',
    summary: 'List topics',
    access: 'team',
    query: PageQuery,
    body: 'none',
    response: List(Topic),
    handler: async ({ caller, query }) => listOf(await store.topics.page(caller.team, pageQuery(query), 20, topicView)),
  }),
  route({
    method: 'GET',
    path: '/topics/:id',
    summary: 'Retrieve a topic',
    access: 'team',
    params: Params,
    body: 'none',
    response: Topic,
    async handler({ caller, params }) {
      const topic = await store.topics.get(caller.team, params.id);
      if (!topic) throw errors.notFound('Topic');
      return topicView(topic);
    },
  }),
  route({
    method: 'PATCH',
    path: '/topics/:id',
    summary: 'Update a topic (its default subscription is fixed)',
    access: 'team',
    params: Params,
    body: UpdateTopicRequest,
    response: Ref('topic'),
    async handler({ caller, params, body }) {
      const { team } = caller;
      await writeOrRefuse(store, async (tx) => {
        const cur = await tx.topics.get(team, params.id);
        if (!cur) return errors.notFound('Topic');
        await updateTopic(events, tx, cur, body);
      });
      return { object: 'topic' as const, id: params.id };
    },
  }),
  route({
    method: 'DELETE',
    path: '/topics/:id',
    summary: 'Delete a topic',
    access: 'team',
    params: Params,
    body: IgnoredBody,
    response: Deleted('topic'),
    async handler({ caller, params }) {
      const { team } = caller;
      await writeOrRefuse(store, async (tx) => {
        const cur = await tx.topics.get(team, params.id);
        if (!cur) return errors.notFound('Topic');
        await deleteTopic(events, tx, cur);
      });
      return { object: 'topic' as const, id: params.id, deleted: true as const };
    },
  }),
]);
