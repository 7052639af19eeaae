// Contacts (docs/api.md §12): the top-level `/contacts` routes, segment memberships under
// `/contacts/{id_or_email}/segments`, and the legacy audience-scoped contact routes of SDK ≤ 6.3
// (and of later SDKs when an `audienceId` is passed). The logic lives in src/contacts.
import { t } from 'elysia';
import type { App, ApiContext } from '../app';
import { caller } from '../platform/context';
import { pathId, idOrEmail, pageQuery, listOf } from '../platform/params';
import { ApiError, errors } from '../../errors';
import { isUuid, nowIso } from '../../ids';
import {
  addToSegment,
  contactView,
  deleteContact,
  findContact,
  findInAudience,
  listContacts,
  segmentSummary,
  updateContact,
  upsertContact,
  type SegmentTarget,
} from '../../contacts';
import { writeOrRefuse } from '../../store';
import { propertyDefs } from '../../contacts/properties';
import { choicesField } from '../../topics';

const tags = ['Contacts'];

const Name = t.Union([t.String(), t.Null()], { error: 'The `{field}` field must be a string or null.' });
const Email = t.String({ error: 'The `email` field must be a string.' });
const Unsubscribed = t.Boolean({ error: 'The `unsubscribed` field must be a boolean.' });
// `properties` (src/contacts) and the `segments` items (POST /contacts) are checked by hand:
// Elysia's default body normaliser reshapes a wrongly typed value given for a t.Record or an array
// of unions before validating it (a string would pass as {"0": …} or an array of characters).
const Properties = t.Unknown();

// Fields the legacy routes take (docs/api.md §12.2, §12.4); the top-level ones take more.
const names = {
  first_name: t.Optional(Name),
  last_name: t.Optional(Name),
  unsubscribed: t.Optional(Unsubscribed),
};
const legacyUpdate = { ...names, properties: t.Optional(Properties) };
const legacyCreate = { email: Email, ...legacyUpdate };

export function contactsRoutes(app: App, svc: ApiContext) {
  const { store } = svc;
  /** A contact by id or email, or 404. */
  const load = async (team: string, raw: string | undefined) => {
    const c = await findContact(store, team, idOrEmail(raw));
    if (!c) throw errors.notFound('Contact');
    return c;
  };

  app.post(
    '/contacts',
    async ({ request, body, set }) => {
      const { team } = caller(request);
      const topics = body.topics === undefined ? [] : choicesField(body.topics);
      // `segments` comes as [{id}] (SDK) or [id] (Resend spec); `audience_id` names one more (docs/api.md §2 item 9).
      const targets: SegmentTarget[] = (body.segments ?? []).map((s, i) => {
        if (typeof s === 'string') return target(s, `segments[${i}]`);
        const id = (s as { id?: unknown } | null)?.id;
        if (typeof id === 'string') return target(id, `segments[${i}].id`);
        throw errors.validation(`The \`segments[${i}]\` field must be a segment id or an object with an \`id\`.`);
      });
      if (body.audience_id !== undefined) targets.push(target(body.audience_id, 'audience_id'));
      const id = await upsertContact(svc, team, body, targets, topics);
      set.status = 201;
      return { object: 'contact', id };
    },
    {
      body: t.Object({
        ...legacyCreate,
        segments: t.Optional(t.Array(t.Unknown(), { error: 'The `segments` field must be an array.' })),
        audience_id: t.Optional(t.String({ error: 'The `audience_id` field must be a string.' })),
        // Checked by hand (src/topics choicesField), for the same reason as `segments`.
        topics: t.Optional(t.Unknown()),
      }),
      detail: { summary: 'Create a contact (or update the one with this email)', tags },
    },
  );

  app.get(
    '/contacts',
    async ({ request, query }) => {
      const { team } = caller(request);
      const q = pageQuery(query);
      const raw = query.segment_id ?? query.audience_id;
      const search = query.q?.trim();
      if (search && search.length > 200) throw errors.validation('`q` must be at most 200 characters.');
      if (search) return listOf(await listContacts(store, team, q, undefined, search));
      if (raw === undefined) return listOf(await listContacts(store, team, q));
      const segmentId = pathId(raw, query.segment_id !== undefined ? 'segment_id' : 'audience_id');
      if (!(await store.segments.get(team, segmentId))) throw errors.notFound('Segment');
      return listOf(await listContacts(store, team, q, segmentId));
    },
    { detail: { summary: 'List contacts (optionally of one segment; Posthorn: `q` searches email and name)', tags } },
  );

  app.get(
    '/contacts/:id_or_email',
    async ({ request, params }) => {
      const { team } = caller(request);
      return contactView(await load(team, params.id_or_email), await propertyDefs(store, team));
    },
    {
      detail: { summary: 'Retrieve a contact by id or email', tags },
    },
  );

  app.patch(
    '/contacts/:id_or_email',
    async ({ request, params, body }) => ({
      object: 'contact',
      id: await updateContact(svc, caller(request).team, idOrEmail(params.id_or_email), body),
    }),
    {
      body: t.Object({ email: t.Optional(Email), ...legacyUpdate }),
      detail: { summary: 'Update a contact by id or email', tags },
    },
  );

  app.delete(
    '/contacts/:id_or_email',
    async ({ request, params }) => {
      const id = await deleteContact(store, caller(request).team, idOrEmail(params.id_or_email));
      // Unknown contacts are deleted too, echoing the path value (docs/api.md §12.5).
      return { object: 'contact', contact: id ?? params.id_or_email, deleted: true };
    },
    { detail: { summary: 'Delete a contact and its memberships', tags } },
  );

  app.get(
    '/contacts/:id_or_email/segments',
    async ({ request, params, query }) => {
      const { team } = caller(request);
      const q = pageQuery(query);
      const c = await load(team, params.id_or_email);
      const page = await store.memberships.pageSegments(team, c.id, q, 20);
      return listOf({ has_more: page.has_more, data: page.data.map(segmentSummary) });
    },
    { detail: { summary: "List a contact's segments", tags } },
  );

  /** Check contact and segment inside the unit of work, then add or remove the membership. */
  const membership = async (request: Request, params: { id_or_email: string; segment_id: string }, add: boolean) => {
    const { team } = caller(request);
    const ref = idOrEmail(params.id_or_email);
    const segmentId = pathId(params.segment_id, 'segment_id');
    const contactId = await writeOrRefuse(store, async (tx) => {
      const c = await findContact(tx, team, ref);
      if (!c) return errors.notFound('Contact');
      if (!(await tx.segments.get(team, segmentId))) return errors.notFound('Segment');
      // Adding an existing membership or removing a missing one is a no-op (docs/api.md §12.6).
      if (add) await addToSegment(svc.events, tx, team, segmentId, c.id, nowIso());
      else await tx.memberships.remove(team, segmentId, c.id);
      return c.id;
    });
    return { object: 'contact_segment', contact_id: contactId, segment_id: segmentId };
  };

  // Resend's shapes (docs/api.md §12.1): adding answers the segment as `id`; removing names the
  // contact as `id` and the segment as `audienceId` (sic, camelCase).
  app.post(
    '/contacts/:id_or_email/segments/:segment_id',
    async ({ request, params }) => {
      const m = await membership(request, params, true);
      return { ...m, id: m.segment_id };
    },
    { detail: { summary: 'Add a contact to a segment', tags } },
  );

  app.delete(
    '/contacts/:id_or_email/segments/:segment_id',
    async ({ request, params }) => {
      const m = await membership(request, params, false);
      return { ...m, id: m.contact_id, audienceId: m.segment_id, deleted: true };
    },
    { detail: { summary: 'Remove a contact from a segment', tags } },
  );

  // Legacy audience-scoped routes. The contact list (`GET /audiences/{id}/contacts`) is served with
  // the segments (segments.ts).
  app.post(
    '/audiences/:id/contacts',
    async ({ request, params, body, set }) => {
      const audienceId = pathId(params.id);
      const id = await upsertContact(svc, caller(request).team, body, [{ id: audienceId, ifMissing: errors.notFound('Audience') }]);
      set.status = 201;
      return { object: 'contact', id };
    },
    { body: t.Object(legacyCreate), detail: { summary: 'Create a contact in an audience (legacy)', tags } },
  );

  app.get(
    '/audiences/:id/contacts/:id_or_email',
    async ({ request, params }) => {
      const { team } = caller(request);
      const c = await findInAudience(store, team, pathId(params.id), idOrEmail(params.id_or_email));
      if (c instanceof ApiError) throw c;
      return contactView(c, await propertyDefs(store, team));
    },
    { detail: { summary: 'Retrieve a contact of an audience (legacy)', tags } },
  );

  app.patch(
    '/audiences/:id/contacts/:id_or_email',
    async ({ request, params, body }) => {
      const audienceId = pathId(params.id);
      const ref = idOrEmail(params.id_or_email);
      // Picked one by one: `email` is not for this route.
      const fields = { first_name: body.first_name, last_name: body.last_name, unsubscribed: body.unsubscribed, properties: body.properties };
      return { object: 'contact', id: await updateContact(svc, caller(request).team, ref, fields, audienceId) };
    },
    { body: t.Object(legacyUpdate), detail: { summary: 'Update a contact of an audience (legacy)', tags } },
  );

  app.delete(
    '/audiences/:id/contacts/:id_or_email',
    async ({ request, params }) => {
      const { team } = caller(request);
      const audienceId = pathId(params.id);
      const ref = idOrEmail(params.id_or_email);
      // Only the membership goes; unknown audiences and contacts answer the same (docs/api.md §12.5).
      await store.write(async (tx) => {
        const c = await findContact(tx, team, ref);
        if (c) await tx.memberships.remove(team, audienceId, c.id);
      });
      return { object: 'contact', contact: params.id_or_email, deleted: true };
    },
    { detail: { summary: 'Remove a contact from an audience (legacy)', tags } },
  );
}

/** A segment named in a request body: unknown → 422 naming the field (docs/api.md §1.6). */
function target(id: string, field: string): SegmentTarget {
  return { id: isUuid(id) ? id.toLowerCase() : id, ifMissing: errors.invalidField(field, 'no segment with this id exists.') };
}
