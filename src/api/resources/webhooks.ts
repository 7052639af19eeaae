// Webhooks (docs/api.md §14.1): endpoints (create, get, list, update, delete, secret rotation),
// their events (list, get, replay) and each event's attempt log. The logic lives in src/events/webhooks.
import { t } from 'elysia';
import type { App, ApiContext } from '../app';
import { caller } from '../platform/context';
import { pathId, pageQuery, listOf } from '../platform/params';
import { errors } from '../../errors';
import {
  createWebhook,
  deleteWebhook,
  eventSummary,
  eventView,
  isMsgId,
  replayEvent,
  rotateSecret,
  updateWebhook,
  webhookSummary,
  webhookView,
} from '../../events/webhooks';

const tags = ['Webhooks'];
const Events = t.Array(t.String(), { error: 'The `events` field must be an array of event types.' });
const Endpoint = t.String({ error: 'The `endpoint` field must be a URL string.' });
const Status = t.Union([t.Literal('enabled'), t.Literal('disabled')], { error: 'The `status` field must be "enabled" or "disabled".' });

export function webhooksRoutes(app: App, svc: ApiContext) {
  const { store } = svc;
  const allowPrivate = svc.config.security.allow_private_networks;
  const load = async (request: Request, raw: string) => {
    const w = await store.webhooks.get(caller(request).team, pathId(raw));
    if (!w) throw errors.notFound('Webhook');
    return w;
  };
  const loadEvent = async (request: Request, params: { id: string; event_id: string }) => {
    const w = await load(request, params.id);
    if (!isMsgId(params.event_id)) throw errors.invalidParameter('The `event_id` must be a valid webhook event id (`msg_…`).');
    const ev = await store.webhookEvents.get(w.team_id, params.event_id);
    if (!ev || ev.webhook_id !== w.id) throw errors.notFound('Webhook event');
    return ev;
  };

  app.post(
    '/webhooks',
    async ({ request, body, set }) => {
      const w = await createWebhook(store, caller(request).team, body, allowPrivate);
      set.status = 201;
      return { object: 'webhook', id: w.id, signing_secret: w.signing_secret };
    },
    { body: t.Object({ endpoint: Endpoint, events: Events }), detail: { summary: 'Create a webhook', tags } },
  );

  app.get('/webhooks', async ({ request, query }) => listOf(await store.webhooks.page(caller(request).team, pageQuery(query), 20, webhookSummary)), {
    detail: { summary: 'List webhooks', tags },
  });

  app.get('/webhooks/:id', async ({ request, params }) => webhookView(await load(request, params.id)), { detail: { summary: 'Retrieve a webhook', tags } });

  app.patch(
    '/webhooks/:id',
    async ({ request, params, body }) => {
      const id = pathId(params.id);
      if (!(await updateWebhook(store, caller(request).team, id, body, allowPrivate))) throw errors.notFound('Webhook');
      return { object: 'webhook', id };
    },
    {
      body: t.Object({ endpoint: t.Optional(Endpoint), events: t.Optional(Events), status: t.Optional(Status) }),
      detail: { summary: 'Update a webhook (endpoint, events, status)', tags },
    },
  );

  app.delete(
    '/webhooks/:id',
    async ({ request, params }) => {
      const id = pathId(params.id);
      if (!(await deleteWebhook(store, caller(request).team, id))) throw errors.notFound('Webhook');
      return { object: 'webhook', id, deleted: true };
    },
    { detail: { summary: 'Delete a webhook', tags } },
  );

  app.post(
    '/webhooks/:id/signing-secret/rotate',
    async ({ request, params }) => {
      const w = await rotateSecret(store, caller(request).team, pathId(params.id));
      if (!w) throw errors.notFound('Webhook');
      return { object: 'webhook', id: w.id, signing_secret: w.signing_secret };
    },
    { detail: { summary: 'Rotate the signing secret (the old one keeps signing for 24 h)', tags } },
  );

  app.get(
    '/webhooks/:id/events',
    async ({ request, query, params }) => {
      const q = pageQuery(query, { cursor: isMsgId, before: false });
      const w = await load(request, params.id);
      return listOf(await store.webhookEvents.pageBy('webhook', w.id, w.team_id, q, 20, eventSummary));
    },
    { detail: { summary: "List a webhook's events (limit, after)", tags } },
  );

  app.get('/webhooks/:id/events/:event_id', async ({ request, params }) => eventView(await loadEvent(request, params)), {
    detail: { summary: 'Retrieve a webhook event with its payload', tags },
  });

  app.get(
    '/webhooks/:id/events/:event_id/attempts',
    async ({ request, query, params }) => {
      const q = pageQuery(query);
      const ev = await loadEvent(request, params);
      return listOf(
        await store.webhookAttempts.pageBy('event', ev.id, ev.team_id, q, 20, (a) => ({
          id: a.id,
          http_status_code: a.http_status_code,
          response: a.response,
          sent_at: a.created_at,
        })),
      );
    },
    { detail: { summary: "List a webhook event's delivery attempts", tags } },
  );

  app.post(
    '/webhooks/:id/events/:event_id/replay',
    async ({ request, params }) => {
      const ev = await loadEvent(request, params);
      await replayEvent(store, ev.team_id, ev.webhook_id, ev.id);
      return { object: 'webhook_event', id: ev.id };
    },
    { detail: { summary: 'Replay a webhook event (one immediate extra attempt)', tags } },
  );
}
