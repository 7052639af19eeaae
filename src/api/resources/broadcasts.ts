// Broadcasts (docs/api.md §13): drafts (create, get, list, update, delete, duplicate) and the
// send/cancel state changes. Rules live in src/broadcasts; units of work and wire shapes here.
import { t } from 'elysia';
import type { App, ApiContext } from '../app';
import type { BroadcastRec, StoreReader } from '../../store';
import { caller } from '../platform/context';
import { pathId, pageQuery, listOf } from '../platform/params';
import { errors } from '../../errors';
import { newId, nowIso } from '../../ids';
import { parseScheduledAt } from '../../sending/schedule';
import { broadcastRecipients, clickedLinks } from '../../analytics/broadcasts';
import { contentFields, checkSendable, startBroadcast, unschedule, checkEditable, checkCancelable, checkDeletable } from '../../broadcasts';

const tags = ['Broadcasts'];
const Str = (field: string) => t.String({ error: `The \`${field}\` field must be a string.` });
const NullableStr = (field: string) => t.Union([t.String(), t.Null()], { error: `The \`${field}\` field must be a string.` });

const content = {
  name: t.Optional(NullableStr('name')),
  segment_id: t.Optional(Str('segment_id')),
  audience_id: t.Optional(Str('audience_id')),
  from: Str('from'),
  subject: Str('subject'),
  reply_to: t.Optional(t.Union([t.String(), t.Array(t.String()), t.Null()], { error: 'The `reply_to` field must be a string or an array of strings.' })),
  preview_text: t.Optional(NullableStr('preview_text')),
  html: t.Optional(NullableStr('html')),
  text: t.Optional(NullableStr('text')),
  topic_id: t.Optional(NullableStr('topic_id')),
};
const ScheduledAt = t.Optional(NullableStr('scheduled_at'));

/** GET /broadcasts/{id}; `audience_id` always equals `segment_id`. */
const view = (b: BroadcastRec) => ({
  object: 'broadcast' as const,
  id: b.id,
  name: b.name,
  audience_id: b.segment_id,
  segment_id: b.segment_id,
  from: b.from,
  subject: b.subject,
  reply_to: b.reply_to,
  preview_text: b.preview_text,
  html: b.html,
  text: b.text,
  status: b.status,
  created_at: b.created_at,
  scheduled_at: b.scheduled_at,
  sent_at: b.sent_at,
  topic_id: b.topic_id,
});

const summary = (b: BroadcastRec) => ({
  id: b.id,
  name: b.name,
  audience_id: b.segment_id,
  segment_id: b.segment_id,
  status: b.status,
  created_at: b.created_at,
  scheduled_at: b.scheduled_at,
  sent_at: b.sent_at,
});

export function broadcastsRoutes(app: App, svc: ApiContext) {
  const { store } = svc;
  /** The team's broadcast or 404 (inside a unit of work, or outside one). */
  const load = async (r: StoreReader, team: string, id: string) => {
    const b = await r.broadcasts.get(team, id);
    if (!b) throw errors.notFound('Broadcast');
    return b;
  };

  app.post(
    '/broadcasts',
    async ({ request, body, set }) => {
      const { team } = caller(request);
      const c = await contentFields(store, team, body);
      if (c.segment_id === undefined) throw errors.missingField('segment_id');
      if (body.scheduled_at != null && body.send !== true) throw errors.validation('The `scheduled_at` field can only be used with `send: true`.');
      const at = body.scheduled_at != null ? parseScheduledAt(body.scheduled_at) : null;
      const b: BroadcastRec = {
        id: newId(),
        team_id: team,
        created_at: nowIso(),
        name: null,
        reply_to: null,
        preview_text: null,
        html: null,
        text: null,
        topic_id: null,
        ...c,
        segment_id: c.segment_id,
        from: body.from,
        subject: body.subject,
        status: 'draft',
        scheduled_at: null,
        sent_at: null,
      };
      if (body.send) await checkSendable(store, b);
      await store.write(async (tx) => void (body.send ? startBroadcast(tx, b, at) : tx.broadcasts.put(b)));
      // The emails are created in the background: the answer does not wait for thousands of them.
      if (body.send && !at) svc.broadcasts.start(team, b.id);
      set.status = 201;
      return { object: 'broadcast', id: b.id };
    },
    {
      body: t.Object({ ...content, send: t.Optional(t.Boolean({ error: 'The `send` field must be a boolean.' })), scheduled_at: ScheduledAt }),
      detail: { summary: 'Create a broadcast (a draft, or sent at once with `send: true`)', tags },
    },
  );

  app.get('/broadcasts', async ({ request, query }) => listOf(await store.broadcasts.page(caller(request).team, pageQuery(query), null, summary)), {
    detail: { summary: 'List broadcasts', tags },
  });

  app.get('/broadcasts/:id', async ({ request, params }) => view(await load(store, caller(request).team, pathId(params.id))), {
    detail: { summary: 'Retrieve a broadcast', tags },
  });

  app.patch(
    '/broadcasts/:id',
    async ({ request, params, body }) => {
      const { team } = caller(request);
      const id = pathId(params.id);
      const c = await contentFields(store, team, body);
      await store.write(async (tx) => {
        const cur = await load(tx, team, id);
        checkEditable(cur);
        tx.broadcasts.put({ ...cur, ...c });
      });
      return { object: 'broadcast', id };
    },
    { body: t.Partial(t.Object(content)), detail: { summary: 'Update a draft broadcast', tags } },
  );

  app.delete(
    '/broadcasts/:id',
    async ({ request, params }) => {
      const { team } = caller(request);
      const id = pathId(params.id);
      await store.write(async (tx) => {
        const b = await load(tx, team, id);
        checkDeletable(b);
        unschedule(tx, b);
        tx.broadcasts.remove(team, id);
        await tx.broadcastProgress.clear(team, id);
      });
      return { object: 'broadcast', id, deleted: true };
    },
    { detail: { summary: 'Delete a draft or scheduled broadcast', tags } },
  );

  app.post(
    '/broadcasts/:id/send',
    async ({ request, params, body }) => {
      const { team } = caller(request);
      const id = pathId(params.id);
      const at = body.scheduled_at != null ? parseScheduledAt(body.scheduled_at) : null;
      await store.write(async (tx) => {
        const b = await load(tx, team, id);
        await checkSendable(tx, b);
        startBroadcast(tx, b, at);
      });
      if (!at) svc.broadcasts.start(team, id);
      return { id };
    },
    { body: t.Object({ scheduled_at: ScheduledAt }), detail: { summary: 'Send or schedule a draft broadcast', tags } },
  );

  app.post(
    '/broadcasts/:id/cancel',
    async ({ request, params }) => {
      const { team } = caller(request);
      const id = pathId(params.id);
      await store.write(async (tx) => {
        const b = await load(tx, team, id);
        checkCancelable(b);
        unschedule(tx, b);
        tx.broadcasts.put({ ...b, status: 'draft', scheduled_at: null });
      });
      return { object: 'broadcast', id };
    },
    { detail: { summary: 'Cancel a scheduled broadcast (back to draft)', tags } },
  );

  app.post(
    '/broadcasts/:id/duplicate',
    async ({ request, params }) => {
      const { team } = caller(request);
      const id = pathId(params.id);
      const copy = await store.write(async (tx) => {
        const b: BroadcastRec = { ...(await load(tx, team, id)), id: newId(), created_at: nowIso(), status: 'draft', scheduled_at: null, sent_at: null };
        tx.broadcasts.put(b);
        return b;
      });
      return { object: 'broadcast', id: copy.id };
    },
    { detail: { summary: 'Duplicate a broadcast as a new draft', tags } },
  );

  app.get(
    '/broadcasts/:id/recipients',
    async ({ request, params, query }) => {
      const { team } = caller(request);
      const b = await load(store, team, pathId(params.id));
      const q = query as Record<string, string | undefined>;
      return listOf(await broadcastRecipients(store, team, b.id, { type: q.type, email: q.email, bounce_type: q.bounce_type }, pageQuery(q)));
    },
    { detail: { summary: "A broadcast's recipients that reached a state (sent, delivered, opened, clicked, …)", tags } },
  );

  app.get(
    '/broadcasts/:id/clicked-links',
    async ({ request, params, query }) => {
      const { team } = caller(request);
      const b = await load(store, team, pathId(params.id));
      // Cursors are the opaque ids of earlier rows (64 hex digits).
      const page = pageQuery(query as Record<string, string | undefined>, { cursor: (v) => /^[0-9a-f]{64}$/.test(v) });
      return listOf(await clickedLinks(store, team, b.id, page));
    },
    { detail: { summary: "A broadcast's clicked links with clicks and unique clicks", tags } },
  );
}
