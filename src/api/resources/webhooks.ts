// Webhooks (docs/api.md §14.1): endpoints (create, get, list, update, delete, secret rotation),
// their events (list, get, replay) and each event's attempt log. The logic lives in src/events/webhooks.
import type { ApiContext } from '../app';
import type { WebhookEventRec, WebhookRec } from '../../store';
import { pageQuery, listOf } from '../platform/params';
import { errors } from '../../errors';
import { createWebhook, deleteWebhook, isMsgId, replayEvent, rotateSecret, updateWebhook } from '../../events/webhooks';
import { resource, route } from '../platform/route';
import { Deleted, IgnoredBody, PageQuery, Ref, UuidParams } from '../../schemas/common';
import {
  CreateWebhookRequest,
  UpdateWebhookRequest,
  Webhook,
  WebhookAttemptList,
  WebhookEvent,
  WebhookEventList,
  WebhookEventParams,
  type WebhookEventSummary,
  WebhookEventsQuery,
  WebhookList,
  WebhookSecret,
  type WebhookSummary,
} from '../../schemas/webhooks';

const webhookSummary = (w: WebhookRec): WebhookSummary => ({ id: w.id, created_at: w.created_at, status: w.status, endpoint: w.endpoint, events: w.events });
const webhookView = (w: WebhookRec): Webhook => ({
  object: 'webhook',
  ...webhookSummary(w),
  signing_secret: w.signing_secret,
  domain_ids: w.domain_ids ?? [],
  include_content: w.include_content ?? false,
});
const eventSummary = (e: WebhookEventRec): WebhookEventSummary => ({ id: e.id, type: e.type, created_at: e.created_at, status: e.status });
const eventView = (e: WebhookEventRec): WebhookEvent => ({
  object: 'webhook_event',
  ...eventSummary(e),
  next_attempt_at: e.due === null ? null : new Date(e.due).toISOString(),
  payload: e.payload,
});

const Params = UuidParams('id');

export const webhooksResource = resource('Webhooks', (svc: ApiContext) => {
  const { store } = svc;
  const allowPrivate = svc.config.security.allow_private_networks;
  const load = async (team: string, id: string) => {
    const w = await store.webhooks.get(team, id);
    if (!w) throw errors.notFound('Webhook');
    return w;
  };
  const loadEvent = async (team: string, params: { id: string; event_id: string }) => {
    const w = await load(team, params.id);
    const ev = await store.webhookEvents.get(w.team_id, params.event_id);
    if (!ev || ev.webhook_id !== w.id) throw errors.notFound('Webhook event');
    return ev;
  };

  return [
    route({
      method: 'POST',
      path: '/webhooks',
      summary: 'Create a webhook',
      access: 'team',
      audit: 'webhook.created',
      body: CreateWebhookRequest,
      status: 201,
      response: WebhookSecret,
      async handler({ caller, body }) {
        const w = await createWebhook(store, caller.team, body, allowPrivate);
        return { object: 'webhook' as const, id: w.id, signing_secret: w.signing_secret };
      },
    }),
    route({
      method: 'GET',
      path: '/webhooks',
      summary: 'List webhooks',
      access: 'team',
      query: PageQuery,
      body: 'none',
      response: WebhookList,
      handler: async ({ caller, query }) => listOf(await store.webhooks.page(caller.team, pageQuery(query), 20, webhookSummary)),
    }),
    route({
      method: 'GET',
      path: '/webhooks/:id',
      summary: 'Retrieve a webhook',
      access: 'team',
      params: Params,
      body: 'none',
      response: Webhook,
      handler: async ({ caller, params }) => webhookView(await load(caller.team, params.id)),
    }),
    route({
      method: 'PATCH',
      path: '/webhooks/:id',
      summary: 'Update a webhook (endpoint, events, status; Posthorn: domain_ids, include_content)',
      access: 'team',
      audit: 'webhook.updated',
      params: Params,
      body: UpdateWebhookRequest,
      response: Ref('webhook'),
      async handler({ caller, params, body }) {
        if (!(await updateWebhook(store, caller.team, params.id, body, allowPrivate))) throw errors.notFound('Webhook');
        return { object: 'webhook' as const, id: params.id };
      },
    }),
    route({
      method: 'DELETE',
      path: '/webhooks/:id',
      summary: 'Delete a webhook',
      access: 'team',
      audit: 'webhook.deleted',
      params: Params,
      body: IgnoredBody,
      response: Deleted('webhook'),
      async handler({ caller, params }) {
        if (!(await deleteWebhook(store, caller.team, params.id))) throw errors.notFound('Webhook');
        return { object: 'webhook' as const, id: params.id, deleted: true as const };
      },
    }),
    route({
      method: 'POST',
      path: '/webhooks/:id/signing-secret/rotate',
      summary: 'Rotate the signing secret (the old one keeps signing for 24 h)',
      access: 'team',
      audit: 'webhook.secret_rotated',
      params: Params,
      body: IgnoredBody,
      response: WebhookSecret,
      async handler({ caller, params }) {
        const w = await rotateSecret(store, caller.team, params.id);
        if (!w) throw errors.notFound('Webhook');
        return { object: 'webhook' as const, id: w.id, signing_secret: w.signing_secret };
      },
    }),
    route({
      method: 'GET',
      path: '/webhooks/:id/events',
      summary: "List a webhook's events (limit, after)",
      access: 'team',
      params: Params,
      query: WebhookEventsQuery,
      body: 'none',
      response: WebhookEventList,
      async handler({ caller, params, query }) {
        const q = pageQuery(query, { cursor: isMsgId, before: false });
        const w = await load(caller.team, params.id);
        return listOf(await store.webhookEvents.pageBy('webhook', w.id, w.team_id, q, 20, eventSummary));
      },
    }),
    route({
      method: 'GET',
      path: '/webhooks/:id/events/:event_id',
      summary: 'Retrieve a webhook event with its payload',
      access: 'team',
      params: WebhookEventParams,
      body: 'none',
      response: WebhookEvent,
      handler: async ({ caller, params }) => eventView(await loadEvent(caller.team, params)),
    }),
    route({
      method: 'GET',
      path: '/webhooks/:id/events/:event_id/attempts',
      summary: "List a webhook event's delivery attempts",
      access: 'team',
      params: WebhookEventParams,
      query: PageQuery,
      body: 'none',
      response: WebhookAttemptList,
      async handler({ caller, params, query }) {
        const q = pageQuery(query);
        const ev = await loadEvent(caller.team, params);
        return listOf(
          await store.webhookAttempts.pageBy('event', ev.id, ev.team_id, q, 20, (a) => ({
            id: a.id,
            http_status_code: a.http_status_code,
            response: a.response,
            sent_at: a.created_at,
          })),
        );
      },
    }),
    route({
      method: 'POST',
      path: '/webhooks/:id/events/:event_id/replay',
      summary: 'Replay a webhook event (one immediate extra attempt)',
      access: 'team',
      params: WebhookEventParams,
      body: IgnoredBody,
      response: Ref('webhook_event'),
      async handler({ caller, params }) {
        const ev = await loadEvent(caller.team, params);
        await replayEvent(store, ev.team_id, ev.webhook_id, ev.id);
        return { object: 'webhook_event' as const, id: ev.id };
      },
    }),
  ];
});
