// Custom events (docs/api.md §23): definitions — create, list, retrieve, update (the schema) and
// delete by id or name — and POST /events/send, which commits an automation trigger before its
// 202. The logic lives in src/automations/custom-events.ts.
import type { ApiContext } from '../app';
import type { CustomEventRec } from '../../store';
import { pageQuery, listOf } from '../platform/params';
import { errors } from '../../errors';
import { createEvent, findEvent, removeEvent, sendEvent, updateEvent } from '../../automations/custom-events';
import { resource, route } from '../platform/route';
import { IgnoredBody, PageQuery } from '../../schemas/common';
import {
  CreateEventRequest,
  EventDefinition,
  EventDeleted,
  EventList,
  EventParams,
  EventRef,
  EventSent,
  type EventSummary,
  SendEventRequest,
  UpdateEventRequest,
} from '../../schemas/events';

const summary = (e: CustomEventRec): EventSummary => ({ id: e.id, name: e.name, schema: e.schema, created_at: e.created_at, updated_at: e.updated_at });
const view = (e: CustomEventRec): EventDefinition => ({ object: 'event', ...summary(e) });

export const eventsResource = resource('Events', (svc: ApiContext) => {
  const { store } = svc;
  return [
    // A literal path: `send` is never the name of a definition (docs/api.md §2 item 15).
    route({
      method: 'POST',
      path: '/events/send',
      summary: 'Send an event for a contact: automations it triggers start (202 once committed)',
      access: 'team',
      body: SendEventRequest,
      status: 202,
      response: EventSent,
      async handler({ caller, body }) {
        const sent = await sendEvent(svc, caller.team, body);
        return { object: 'event' as const, event: sent.event };
      },
    }),
    route({
      method: 'POST',
      path: '/events',
      summary: 'Create an event definition',
      access: 'team',
      body: CreateEventRequest,
      status: 201,
      response: EventRef,
      async handler({ caller, body }) {
        const e = await createEvent(store, caller.team, body);
        return { object: 'event' as const, id: e.id };
      },
    }),
    route({
      method: 'GET',
      path: '/events',
      summary: 'List event definitions',
      access: 'team',
      query: PageQuery,
      body: 'none',
      response: EventList,
      handler: async ({ caller, query }) => listOf(await store.customEvents.page(caller.team, pageQuery(query), 20, summary)),
    }),
    route({
      method: 'GET',
      path: '/events/:id_or_name',
      summary: 'Retrieve an event definition by id or name',
      access: 'team',
      params: EventParams,
      body: 'none',
      response: EventDefinition,
      async handler({ caller, params }) {
        const e = params.id_or_name ? await findEvent(store, caller.team, params.id_or_name) : undefined;
        if (!e) throw errors.notFound('Event');
        return view(e);
      },
    }),
    route({
      method: 'PATCH',
      path: '/events/:id_or_name',
      summary: "Update an event definition's schema",
      access: 'team',
      params: EventParams,
      body: UpdateEventRequest,
      response: EventRef,
      handler: async ({ caller, params, body }) => ({ object: 'event' as const, id: (await updateEvent(store, caller.team, params.id_or_name, body)).id }),
    }),
    route({
      method: 'DELETE',
      path: '/events/:id_or_name',
      summary: 'Delete an event definition',
      access: 'team',
      params: EventParams,
      body: IgnoredBody,
      response: EventDeleted,
      handler: async ({ caller, params }) => ({
        object: 'event' as const,
        id: await removeEvent(store, caller.team, params.id_or_name),
        deleted: true as const,
      }),
    }),
  ];
});
