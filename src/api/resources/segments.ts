// Segments and their legacy name, audiences (docs/api.md §11): one collection served under two
// route families that differ only in the `object` value and the not-found message, so an id created
// through either works in both. Deleting a segment removes its memberships; contacts stay.
import type { ApiContext } from '../app';
import { pageQuery, listOf } from '../platform/params';
import { errors } from '../../errors';
import { newId, nowIso } from '../../ids';
import { segmentSummary, listContacts } from '../../contacts';
import { resource, route, type Route } from '../platform/route';
import { Deleted, IgnoredBody, List, PageQuery, Ref, UuidParams } from '../../schemas/common';
import { ContactSummary } from '../../schemas/contacts';
import { Segment, SegmentCreated, SegmentNameRequest, SegmentSummary } from '../../schemas/segments';

const Params = UuidParams('id');

const article = (noun: string) => `${/^[aeiou]/i.test(noun) ? 'an' : 'a'} ${noun.toLowerCase()}`;

/** The routes of one family: `/segments` (`object: "segment"`) or `/audiences` (`object: "audience"`). */
function family<O extends 'segment' | 'audience'>({ store }: ApiContext, base: string, object: O, noun: string): Route[] {
  const load = async (team: string, id: string) => {
    const s = await store.segments.get(team, id);
    if (!s) throw errors.notFound(noun);
    return s;
  };
  return [
    route({
      method: 'POST',
      path: base,
      summary: `Create ${article(noun)}`,
      access: 'team',
      body: SegmentNameRequest,
      status: 201,
      response: SegmentCreated(object),
      async handler({ caller, body }) {
        const s = { id: newId(), team_id: caller.team, created_at: nowIso(), name: body.name };
        await store.write(async (tx) => tx.segments.put(s));
        return { object, id: s.id, name: s.name };
      },
    }),
    route({
      method: 'GET',
      path: base,
      summary: `List ${noun.toLowerCase()}s`,
      access: 'team',
      query: PageQuery,
      body: 'none',
      response: List(SegmentSummary),
      handler: async ({ caller, query }) => listOf(await store.segments.page(caller.team, pageQuery(query), null, segmentSummary)),
    }),
    route({
      method: 'GET',
      path: `${base}/:id`,
      summary: `Retrieve ${article(noun)}`,
      access: 'team',
      params: Params,
      body: 'none',
      response: Segment(object),
      handler: async ({ caller, params }) => ({ object, ...segmentSummary(await load(caller.team, params.id)) }),
    }),
    route({
      method: 'DELETE',
      path: `${base}/:id`,
      summary: `Delete ${article(noun)}`,
      access: 'team',
      params: Params,
      body: IgnoredBody,
      response: Deleted(object),
      async handler({ caller, params }) {
        const { team } = caller;
        // Unknown ids are deleted too (as Resend, docs/api.md §1.6).
        await store.write(async (tx) => {
          await tx.memberships.removeSegment(team, params.id);
          tx.segments.remove(team, params.id);
        });
        return { object, id: params.id, deleted: true as const };
      },
    }),
    route({
      method: 'GET',
      path: `${base}/:id/contacts`,
      summary: `List the contacts of ${article(noun)}`,
      access: 'team',
      params: Params,
      query: PageQuery,
      body: 'none',
      response: List(ContactSummary),
      async handler({ caller, params, query }) {
        const q = pageQuery(query);
        const s = await load(caller.team, params.id);
        return listOf(await listContacts(store, s.team_id, q, s.id));
      },
    }),
  ];
}

export const segmentsResource = resource('Segments', (svc: ApiContext) => [
  ...family(svc, '/segments', 'segment', 'Segment'),
  // Renaming exists only under the new name (the SDK's `audiences` is an alias of `segments`).
  route({
    method: 'PATCH',
    path: '/segments/:id',
    summary: 'Rename a segment',
    access: 'team',
    params: Params,
    body: SegmentNameRequest,
    response: Ref('segment'),
    async handler({ caller, params, body }) {
      const { team } = caller;
      const found = await svc.store.write(async (tx) => {
        const cur = await tx.segments.get(team, params.id);
        if (cur) tx.segments.put({ ...cur, name: body.name });
        return cur !== undefined;
      });
      if (!found) throw errors.notFound('Segment');
      return { object: 'segment' as const, id: params.id };
    },
  }),
]);

/** The legacy name (SDK ≤ 6.3): the same records, `object: "audience"` and "Audience not found". */
export const audiencesResource = resource('Audiences', (svc: ApiContext) => family(svc, '/audiences', 'audience', 'Audience'));
