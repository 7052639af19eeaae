// Contacts (docs/api.md §12): the top-level `/contacts` routes, segment memberships under
// `/contacts/{id_or_email}/segments`, and the legacy audience-scoped contact routes of SDK ≤ 6.3
// (and of later SDKs when an `audienceId` is passed). The logic lives in src/contacts.
import { writeOrRefuse } from '../../store';
import type { ApiContext } from '../app';
import type { ContactRec } from '../../store';
import { pathId, idOrEmail, pageQuery, listOf } from '../platform/params';
import { ApiError, errors } from '../../errors';
import { isUuid, nowIso } from '../../ids';
import {
  addToSegment,
  contactMatches,
  contactSummary,
  deleteContact,
  findContact,
  findInAudience,
  listContacts,
  segmentSummary,
  updateContact,
  upsertContact,
  type SegmentTarget,
} from '../../contacts';
import { propertyDefs, visibleProperties, type PropertyDefs } from '../../contacts/properties';
import { resource, route } from '../platform/route';
import { EXPORT_ANSWER, IgnoredBody, List, PageQuery, Ref, UuidParams } from '../../schemas/common';
import { type Column, exportResponse } from '../platform/export';
import { SegmentSummary } from '../../schemas/segments';
import {
  AudienceContactParams,
  Contact,
  ContactDeleted,
  ContactExportQuery,
  ContactListQuery,
  ContactParams,
  ContactSegmentAdded,
  ContactSegmentParams,
  ContactSegmentRemoved,
  ContactSummary,
  CreateContactRequest,
  LegacyCreateContactRequest,
  LegacyUpdateContactRequest,
  UpdateContactRequest,
} from '../../schemas/contacts';

/** GET /contacts/{id_or_email}: `properties` holds the contact's values of the team's properties (docs/api.md §12.7). */
const contactView = (c: ContactRec, defs: PropertyDefs): Contact => ({
  object: 'contact',
  id: c.id,
  email: c.email,
  first_name: c.first_name,
  last_name: c.last_name,
  created_at: c.created_at,
  unsubscribed: c.unsubscribed,
  properties: visibleProperties(c, defs),
});

/** A contact as exported: the list's item and the contact's properties (as GET /contacts/{id_or_email} shows them). */
type ExportedContact = ContactSummary & Pick<Contact, 'properties'>;

/** Posthorn's `q` on contacts, trimmed (the trimmed text counts); undefined when empty. */
function searchOf(q: string | undefined): string | undefined {
  const search = q?.trim();
  if (search && search.length > 200) throw errors.validation('`q` must be at most 200 characters.');
  return search || undefined;
}

export const contactsResource = resource('Contacts', (svc: ApiContext) => {
  const { store } = svc;
  /** A contact by id or email, or 404. */
  const load = async (team: string, raw: string) => {
    const c = await findContact(store, team, idOrEmail(raw));
    if (!c) throw errors.notFound('Contact');
    return c;
  };

  /** Check contact and segment inside the unit of work, then add or remove the membership. */
  const membership = async (team: string, params: { id_or_email: string; segment_id: string }, add: boolean) => {
    const ref = idOrEmail(params.id_or_email);
    const segmentId = params.segment_id;
    const contactId = await writeOrRefuse(store, async (tx) => {
      const c = await findContact(tx, team, ref);
      if (!c) return errors.notFound('Contact');
      if (!(await tx.segments.get(team, segmentId))) return errors.notFound('Segment');
      // Adding an existing membership or removing a missing one is a no-op (docs/api.md §12.6).
      if (add) await addToSegment(svc.events, tx, team, segmentId, c.id, nowIso());
      else await tx.memberships.remove(team, segmentId, c.id);
      return c.id;
    });
    return { object: 'contact_segment' as const, contact_id: contactId, segment_id: segmentId };
  };

  return [
    route({
      method: 'POST',
      path: '/contacts',
      summary: 'Create a contact (or update the one with this email)',
      access: 'team',
      body: CreateContactRequest,
      status: 201,
      response: Ref('contact'),
      async handler({ caller, body }) {
        const { segments, audience_id, topics, ...fields } = body;
        // `segments` comes as [{id}] (SDK) or [id] (Resend spec); `audience_id` names one more (docs/api.md §2 item 9).
        const targets: SegmentTarget[] = (segments ?? []).map((s, i) => {
          if (typeof s === 'string') return target(s, `segments[${i}]`);
          if (s.id !== undefined) return target(s.id, `segments[${i}].id`);
          throw errors.validation(`The \`segments[${i}]\` field must be a segment id or an object with an \`id\`.`);
        });
        if (audience_id !== undefined) targets.push(target(audience_id, 'audience_id'));
        const id = await upsertContact(svc, caller.team, fields, targets, topics);
        return { object: 'contact' as const, id };
      },
    }),
    route({
      method: 'GET',
      path: '/contacts',
      summary: 'List contacts (optionally of one segment; Posthorn: `q` searches email and name)',
      access: 'team',
      query: ContactListQuery,
      body: 'none',
      response: List(ContactSummary),
      async handler({ caller, query }) {
        const { team } = caller;
        const q = pageQuery(query);
        // Checked by hand: the trimmed text counts, and which of `segment_id`/`audience_id` is read
        // (none with `q`) decides whether it is checked at all.
        const search = searchOf(query.q);
        if (search) return listOf(await listContacts(store, team, q, undefined, search));
        const raw = query.segment_id ?? query.audience_id;
        if (raw === undefined) return listOf(await listContacts(store, team, q));
        const segmentId = pathId(raw, query.segment_id !== undefined ? 'segment_id' : 'audience_id');
        if (!(await store.segments.get(team, segmentId))) throw errors.notFound('Segment');
        return listOf(await listContacts(store, team, q, segmentId));
      },
    }),
    route({
      method: 'GET',
      path: '/contacts/export',
      summary: "Export contacts as CSV or NDJSON, with the list's filters (Posthorn, docs/api.md §4.1)",
      access: 'team',
      query: ContactExportQuery,
      body: 'none',
      response: EXPORT_ANSWER,
      async handler({ caller, query }) {
        const { team } = caller;
        const search = searchOf(query.q);
        const segmentId = query.segment_id === undefined ? undefined : pathId(query.segment_id, 'segment_id');
        if (segmentId !== undefined && !(await store.segments.get(team, segmentId))) throw errors.notFound('Segment');
        // The team's properties now: one column each, named `properties.<key>`.
        const defs = await propertyDefs(store, team);
        const propertyColumns = [...defs.values()].map((d): Column<ExportedContact> => [`properties.${d.key}`, (c) => c.properties[d.key]?.value]);
        return exportResponse({
          name: 'contacts',
          format: query.format ?? 'csv',
          page: (q) => (segmentId === undefined ? store.contacts.page(team, q, null) : store.memberships.pageContacts(team, segmentId, q)),
          keep: search ? contactMatches(search) : null,
          row: (c): ExportedContact => ({ ...contactSummary(c), properties: visibleProperties(c, defs) }),
          columns: ['id', 'email', 'first_name', 'last_name', 'unsubscribed', 'created_at', ...propertyColumns],
        });
      },
    }),
    route({
      method: 'GET',
      path: '/contacts/:id_or_email',
      summary: 'Retrieve a contact by id or email',
      access: 'team',
      params: ContactParams,
      body: 'none',
      response: Contact,
      async handler({ caller, params }) {
        return contactView(await load(caller.team, params.id_or_email), await propertyDefs(store, caller.team));
      },
    }),
    route({
      method: 'PATCH',
      path: '/contacts/:id_or_email',
      summary: 'Update a contact by id or email',
      access: 'team',
      params: ContactParams,
      body: UpdateContactRequest,
      response: Ref('contact'),
      handler: async ({ caller, params, body }) => ({
        object: 'contact' as const,
        id: await updateContact(svc, caller.team, idOrEmail(params.id_or_email), body),
      }),
    }),
    route({
      method: 'DELETE',
      path: '/contacts/:id_or_email',
      summary: 'Delete a contact and its memberships',
      access: 'team',
      params: ContactParams,
      body: IgnoredBody,
      response: ContactDeleted,
      async handler({ caller, params }) {
        const id = await deleteContact(svc, caller.team, idOrEmail(params.id_or_email));
        // Unknown contacts are deleted too, echoing the path value (docs/api.md §12.5).
        return { object: 'contact' as const, contact: id ?? params.id_or_email, deleted: true as const };
      },
    }),
    route({
      method: 'GET',
      path: '/contacts/:id_or_email/segments',
      summary: "List a contact's segments",
      access: 'team',
      params: ContactParams,
      query: PageQuery,
      body: 'none',
      response: List(SegmentSummary),
      async handler({ caller, params, query }) {
        const q = pageQuery(query);
        const c = await load(caller.team, params.id_or_email);
        const page = await store.memberships.pageSegments(caller.team, c.id, q, 20);
        return listOf({ has_more: page.has_more, data: page.data.map(segmentSummary) });
      },
    }),
    route({
      method: 'POST',
      path: '/contacts/:id_or_email/segments/:segment_id',
      summary: 'Add a contact to a segment',
      access: 'team',
      params: ContactSegmentParams,
      body: IgnoredBody,
      response: ContactSegmentAdded,
      async handler({ caller, params }) {
        const m = await membership(caller.team, params, true);
        return { ...m, id: m.segment_id };
      },
    }),
    route({
      method: 'DELETE',
      path: '/contacts/:id_or_email/segments/:segment_id',
      summary: 'Remove a contact from a segment',
      access: 'team',
      params: ContactSegmentParams,
      body: IgnoredBody,
      response: ContactSegmentRemoved,
      async handler({ caller, params }) {
        const m = await membership(caller.team, params, false);
        return { ...m, id: m.contact_id, audienceId: m.segment_id, deleted: true as const };
      },
    }),

    // Legacy audience-scoped routes. The contact list (`GET /audiences/{id}/contacts`) is served with
    // the segments (segments.ts).
    route({
      method: 'POST',
      path: '/audiences/:id/contacts',
      summary: 'Create a contact in an audience (legacy)',
      access: 'team',
      params: UuidParams('id'),
      body: LegacyCreateContactRequest,
      status: 201,
      response: Ref('contact'),
      async handler({ caller, params, body }) {
        const id = await upsertContact(svc, caller.team, body, [{ id: params.id, ifMissing: errors.notFound('Audience') }]);
        return { object: 'contact' as const, id };
      },
    }),
    route({
      method: 'GET',
      path: '/audiences/:id/contacts/:id_or_email',
      summary: 'Retrieve a contact of an audience (legacy)',
      access: 'team',
      params: AudienceContactParams,
      body: 'none',
      response: Contact,
      async handler({ caller, params }) {
        const { team } = caller;
        const c = await findInAudience(store, team, params.id, idOrEmail(params.id_or_email));
        if (c instanceof ApiError) throw c;
        return contactView(c, await propertyDefs(store, team));
      },
    }),
    route({
      method: 'PATCH',
      path: '/audiences/:id/contacts/:id_or_email',
      summary: 'Update a contact of an audience (legacy)',
      access: 'team',
      params: AudienceContactParams,
      body: LegacyUpdateContactRequest,
      response: Ref('contact'),
      handler: async ({ caller, params, body }) => ({
        object: 'contact' as const,
        id: await updateContact(svc, caller.team, idOrEmail(params.id_or_email), body, params.id),
      }),
    }),
    route({
      method: 'DELETE',
      path: '/audiences/:id/contacts/:id_or_email',
      summary: 'Remove a contact from an audience (legacy)',
      access: 'team',
      params: AudienceContactParams,
      body: IgnoredBody,
      response: ContactDeleted,
      async handler({ caller, params }) {
        const { team } = caller;
        const ref = idOrEmail(params.id_or_email);
        // Only the membership goes; unknown audiences and contacts answer the same (docs/api.md §12.5).
        await store.write(async (tx) => {
          const c = await findContact(tx, team, ref);
          if (c) await tx.memberships.remove(team, params.id, c.id);
        });
        return { object: 'contact' as const, contact: params.id_or_email, deleted: true as const };
      },
    }),
  ];
});

/** A segment named in a request body: unknown → 422 naming the field (docs/api.md §1.6). */
function target(id: string, field: string): SegmentTarget {
  return { id: isUuid(id) ? id.toLowerCase() : id, ifMissing: errors.invalidField(field, 'no segment with this id exists.') };
}
