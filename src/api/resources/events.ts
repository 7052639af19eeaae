// Custom events (docs/api.md §23): definitions — create, list, retrieve, update (the schema) and
// delete by id or name — and POST /events/send, which commits an automation trigger before its
// 202. The logic lives in src/automations/custom-events.ts.
import type { App, ApiContext } from '../app';
import { caller } from '../platform/context';
import { objectBody } from '../platform/body';
import { pageQuery, listOf } from '../platform/params';
import { errors } from '../../errors';
import { createEvent, eventSummary, eventView, findEvent, removeEvent, sendEvent, updateEvent } from '../../automations/custom-events';

const tags = ['Events'];

export function eventsRoutes(app: App, svc: ApiContext) {
  const { store } = svc;

  // Before `/events/{id_or_name}`: a literal path wins (docs/api.md §2 item 15).
  app.post(
    '/events/send',
    async ({ request, body, set }) => {
      const sent = await sendEvent(svc, caller(request).team, objectBody(body));
      set.status = 202;
      return { object: 'event', event: sent.event };
    },
    { detail: { summary: 'Send an event for a contact: automations it triggers start (202 once committed)', tags } },
  );

  app.post(
    '/events',
    async ({ request, body, set }) => {
      const e = await createEvent(store, caller(request).team, objectBody(body));
      set.status = 201;
      return { object: 'event', id: e.id };
    },
    { detail: { summary: 'Create an event definition', tags } },
  );

  app.get('/events', async ({ request, query }) => listOf(await store.customEvents.page(caller(request).team, pageQuery(query), 20, eventSummary)), {
    detail: { summary: 'List event definitions', tags },
  });

  app.get(
    '/events/:id_or_name',
    async ({ request, params }) => {
      const e = params.id_or_name ? await findEvent(store, caller(request).team, params.id_or_name) : undefined;
      if (!e) throw errors.notFound('Event');
      return eventView(e);
    },
    { detail: { summary: 'Retrieve an event definition by id or name', tags } },
  );

  app.patch(
    '/events/:id_or_name',
    async ({ request, params, body }) => ({
      object: 'event',
      id: (await updateEvent(store, caller(request).team, params.id_or_name ?? '', objectBody(body))).id,
    }),
    { detail: { summary: "Update an event definition's schema", tags } },
  );

  app.delete(
    '/events/:id_or_name',
    async ({ request, params }) => ({ object: 'event', id: await removeEvent(store, caller(request).team, params.id_or_name ?? ''), deleted: true }),
    { detail: { summary: 'Delete an event definition', tags } },
  );
}
