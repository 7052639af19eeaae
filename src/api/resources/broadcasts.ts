// Broadcasts (docs/api.md §13): drafts (create, get, list, update, delete, duplicate) and the
// send/cancel state changes — a cancel while sending also cancels the broadcast's emails still in
// the delivery queue (the queue's controls) — and (Posthorn) the test send. Rules live in
// src/broadcasts; units of work and wire shapes here.
import type { ApiContext } from '../app';
import type { BroadcastRec, StoreReader } from '../../store';
import { pageQuery, listOf } from '../platform/params';
import { errors } from '../../errors';
import { newId, nowIso } from '../../ids';
import { parseScheduledAt } from '../../sending/schedule';
import { broadcastRecipients, clickedLinks } from '../../analytics/broadcasts';
import { contentFields, checkSendable, startBroadcast, unschedule, checkEditable, cancelBroadcast, checkDeletable } from '../../broadcasts';
import { contentFingerprint, reviewBroadcast, reviewForSend, reviewView } from '../../broadcasts/review';
import { BroadcastReview, ReviewRequest } from '../../schemas/insights';
import { sendTest, testRecipients } from '../../broadcasts/test-send';
import { QueueControls } from '../../delivery/controls';
import { broadcastForecast } from '../../delivery/forecast';
import { resource, route } from '../platform/route';
import { Deleted, IgnoredBody, List, PageQuery, Ref, UuidParams } from '../../schemas/common';
import {
  Broadcast,
  BroadcastCanceled,
  BroadcastRecipient,
  BroadcastSent,
  BroadcastSummary,
  BroadcastTestSent,
  ClickedLink,
  CreateBroadcastRequest,
  RecipientsQuery,
  SendBroadcastRequest,
  TestBroadcastRequest,
  UpdateBroadcastRequest,
} from '../../schemas/broadcasts';

/** GET /broadcasts/{id}; `audience_id` always equals `segment_id`. */
const view = (b: BroadcastRec): Broadcast => ({
  object: 'broadcast',
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

const summary = (b: BroadcastRec): BroadcastSummary => ({
  id: b.id,
  name: b.name,
  audience_id: b.segment_id,
  segment_id: b.segment_id,
  status: b.status,
  created_at: b.created_at,
  scheduled_at: b.scheduled_at,
  sent_at: b.sent_at,
});

const Params = UuidParams('id');

/** A broadcast's emails read per page when it is stopped while being sent. */
const STOP_PAGE = 500;

export const broadcastsResource = resource('Broadcasts', (svc: ApiContext) => {
  const { store } = svc;
  const controls = new QueueControls(svc);
  /**
   * After a stop: the broadcast's emails still in the delivery queue are canceled as the queue's
   * cancel does (an attempt under way may still deliver), page by page; the counts of the answer.
   */
  const stopEmails = async (team: string, id: string) => {
    let sent = 0;
    let canceled = 0;
    for (let after: string | undefined; ; ) {
      const page = await store.emails.pageBy('broadcast', id, team, { limit: STOP_PAGE, after }, STOP_PAGE);
      const now = await controls.cancelQueued(
        team,
        page.data.map((e) => e.id),
      );
      for (const e of page.data)
        if (now.has(e.id) || e.last_event === 'canceled') canceled++;
        else sent++;
      after = page.data.at(-1)?.id;
      if (!page.has_more || !after) return { sent, canceled };
    }
  };
  /** The team's broadcast or 404 (inside a unit of work, or outside one). */
  const load = async (r: StoreReader, team: string, id: string) => {
    const b = await r.broadcasts.get(team, id);
    if (!b) throw errors.notFound('Broadcast');
    return b;
  };

  return [
    route({
      method: 'POST',
      path: '/broadcasts',
      summary: 'Create a broadcast (a draft, or sent at once with `send: true`)',
      access: 'team',
      body: CreateBroadcastRequest,
      status: 201,
      response: Ref('broadcast'),
      async handler({ caller, body }) {
        const { team } = caller;
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
        if (body.send) {
          await checkSendable(store, b);
          // Posthorn: reviewed before it goes out (docs/api.md §13.6); held → 422 and nothing is made.
          b.review = await reviewForSend(svc, b, body.review === 'accepted');
        }
        await store.write(async (tx) => void (body.send ? startBroadcast(tx, b, at) : tx.broadcasts.put(b)));
        // The emails are created in the background: the answer does not wait for thousands of them.
        if (body.send && !at) svc.broadcasts.start(team, b.id);
        return { object: 'broadcast' as const, id: b.id };
      },
    }),
    route({
      method: 'GET',
      path: '/broadcasts',
      summary: 'List broadcasts',
      access: 'team',
      query: PageQuery,
      body: 'none',
      response: List(BroadcastSummary),
      handler: async ({ caller, query }) => listOf(await store.broadcasts.page(caller.team, pageQuery(query), null, summary)),
    }),
    route({
      method: 'GET',
      path: '/broadcasts/:id',
      summary: 'Retrieve a broadcast',
      access: 'team',
      params: Params,
      body: 'none',
      response: Broadcast,
      handler: async ({ caller, params }) => {
        const b = await load(store, caller.team, params.id);
        // Posthorn: spilling into the next days on warm-up allowances, when it will have gone (§19.17).
        const forecast = await broadcastForecast(store, svc.config, b, Date.now());
        return forecast ? { ...view(b), delivery_forecast: forecast } : view(b);
      },
    }),
    route({
      method: 'PATCH',
      path: '/broadcasts/:id',
      summary: 'Update a draft broadcast',
      access: 'team',
      params: Params,
      body: UpdateBroadcastRequest,
      response: Ref('broadcast'),
      async handler({ caller, params, body }) {
        const { team } = caller;
        const c = await contentFields(store, team, body);
        await store.write(async (tx) => {
          const cur = await load(tx, team, params.id);
          checkEditable(cur);
          tx.broadcasts.put({ ...cur, ...c });
        });
        return { object: 'broadcast' as const, id: params.id };
      },
    }),
    route({
      method: 'DELETE',
      path: '/broadcasts/:id',
      summary: 'Delete a draft or scheduled broadcast',
      access: 'team',
      params: Params,
      body: IgnoredBody,
      response: Deleted('broadcast'),
      async handler({ caller, params }) {
        const { team } = caller;
        await store.write(async (tx) => {
          const b = await load(tx, team, params.id);
          checkDeletable(b);
          unschedule(tx, b);
          tx.broadcasts.remove(team, params.id);
          await tx.broadcastProgress.clear(team, params.id);
        });
        return { object: 'broadcast' as const, id: params.id, deleted: true as const };
      },
    }),
    route({
      method: 'POST',
      path: '/broadcasts/:id/send',
      summary: 'Send or schedule a draft broadcast',
      access: 'team',
      params: Params,
      body: SendBroadcastRequest,
      response: BroadcastSent,
      async handler({ caller, params, body }) {
        const { team } = caller;
        const at = body.scheduled_at != null ? parseScheduledAt(body.scheduled_at) : null;
        // Posthorn: reviewed first (docs/api.md §13.6), outside the unit of work (rspamd may take a while).
        const before = await load(store, team, params.id);
        await checkSendable(store, before);
        const review = await reviewForSend(svc, before, body.review === 'accepted');
        await store.write(async (tx) => {
          const b = await load(tx, team, params.id);
          await checkSendable(tx, b);
          if (contentFingerprint(b) !== review.fingerprint) throw errors.validation('The broadcast changed while it was being reviewed: send it again.');
          startBroadcast(tx, { ...b, review }, at);
        });
        if (!at) svc.broadcasts.start(team, params.id);
        return { id: params.id };
      },
    }),
    route({
      method: 'POST',
      path: '/broadcasts/:id/review',
      summary: "Review a draft broadcast before sending: a sample recipient's insights and spam score (Posthorn)",
      description:
        "One recipient's email is rendered and scored as it would be sent; a failing insight (a spam score at or above `spam.review_threshold` among them) holds the broadcast, and `accept: true` lets it be sent all the same (docs/api.md §13.6). Not a draft → 422 `validation_error`.",
      access: 'team',
      params: Params,
      body: ReviewRequest,
      response: BroadcastReview,
      async handler({ caller, params, body }) {
        const { team } = caller;
        const b = await load(store, team, params.id);
        if (b.status !== 'draft') throw errors.validation('Only draft broadcasts can be reviewed.');
        const made = await reviewBroadcast(svc, b);
        const review = body.accept ? { ...made, accepted_at: made.reviewed_at } : made;
        const saved = await store.write(async (tx) => {
          const cur = await load(tx, team, params.id);
          // Edited or sent meanwhile: the review answered, not kept.
          if (cur.status !== 'draft' || contentFingerprint(cur) !== review.fingerprint) return cur;
          const next = { ...cur, review };
          tx.broadcasts.put(next);
          return next;
        });
        return reviewView(saved, review);
      },
    }),
    route({
      method: 'POST',
      path: '/broadcasts/:id/cancel',
      summary: 'Cancel a scheduled broadcast (back to draft), or stop one being sent (its queued emails canceled)',
      access: 'team',
      params: Params,
      body: IgnoredBody,
      response: BroadcastCanceled,
      async handler({ caller, params }) {
        const { team } = caller;
        const b = await store.write(async (tx) => cancelBroadcast(tx, await load(tx, team, params.id)));
        if (b.status !== 'canceled') return { object: 'broadcast' as const, id: params.id };
        return { object: 'broadcast' as const, id: params.id, status: 'canceled' as const, ...(await stopEmails(team, b.id)) };
      },
    }),
    route({
      method: 'POST',
      path: '/broadcasts/:id/duplicate',
      summary: 'Duplicate a broadcast as a new draft',
      access: 'team',
      params: Params,
      body: IgnoredBody,
      response: Ref('broadcast'),
      async handler({ caller, params }) {
        const { team } = caller;
        const copy = await store.write(async (tx) => {
          // A copy is a new draft: its review is its own to make.
          const { review: _review, ...source } = await load(tx, team, params.id);
          const b: BroadcastRec = {
            ...source,
            id: newId(),
            created_at: nowIso(),
            status: 'draft',
            scheduled_at: null,
            sent_at: null,
          };
          tx.broadcasts.put(b);
          return b;
        });
        return { object: 'broadcast' as const, id: copy.id };
      },
    }),
    route({
      method: 'POST',
      path: '/broadcasts/:id/test',
      summary: 'Send a test of a broadcast to up to 5 addresses (Posthorn)',
      access: 'team',
      params: Params,
      body: TestBroadcastRequest,
      response: BroadcastTestSent,
      async handler({ caller, params, body }) {
        const to = testRecipients(body.to);
        const b = await load(store, caller.team, params.id);
        return { object: 'broadcast_test' as const, id: b.id, emails: await sendTest(svc, b, to) };
      },
    }),
    route({
      method: 'GET',
      path: '/broadcasts/:id/recipients',
      summary: "A broadcast's recipients that reached a state (sent, delivered, opened, clicked, …)",
      access: 'team',
      params: Params,
      query: RecipientsQuery,
      body: 'none',
      response: List(BroadcastRecipient),
      async handler({ caller, params, query }) {
        const { team } = caller;
        const b = await load(store, team, params.id);
        return listOf(await broadcastRecipients(store, team, b.id, { type: query.type, email: query.email, bounce_type: query.bounce_type }, pageQuery(query)));
      },
    }),
    route({
      method: 'GET',
      path: '/broadcasts/:id/clicked-links',
      summary: "A broadcast's clicked links with clicks and unique clicks",
      access: 'team',
      params: Params,
      query: PageQuery,
      body: 'none',
      response: List(ClickedLink),
      async handler({ caller, params, query }) {
        const { team } = caller;
        const b = await load(store, team, params.id);
        // Cursors are the opaque ids of earlier rows (64 hex digits).
        const page = pageQuery(query, { cursor: (v) => /^[0-9a-f]{64}$/.test(v) });
        return listOf(await clickedLinks(store, team, b.id, page));
      },
    }),
  ];
});
