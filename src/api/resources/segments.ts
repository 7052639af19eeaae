// Segments and their legacy name, audiences (docs/api.md §11): one collection served under two
// route families that differ only in the `object` value and the not-found message, so an id created
// through either works in both. Deleting a segment removes its memberships; contacts stay.
import { t } from 'elysia';
import type { App, ApiContext } from '../app';
import { caller } from '../platform/context';
import { pathId, pageQuery, listOf } from '../platform/params';
import { errors } from '../../errors';
import { newId, nowIso } from '../../ids';
import { segmentSummary, listContacts } from '../../contacts';

const families = [
  { base: '/segments', object: 'segment', noun: 'Segment' },
  { base: '/audiences', object: 'audience', noun: 'Audience' },
] as const;

const Name = t.Object({ name: t.String({ error: 'The `name` field must be a string.' }) });

export function segmentsRoutes(app: App, { store }: ApiContext) {
  for (const { base, object, noun } of families) {
    const tags = [`${noun}s`];
    const load = async (request: Request, raw: string) => {
      const s = await store.segments.get(caller(request).team, pathId(raw));
      if (!s) throw errors.notFound(noun);
      return s;
    };

    app.post(
      base,
      async ({ request, body, set }) => {
        const s = { id: newId(), team_id: caller(request).team, created_at: nowIso(), name: body.name };
        await store.write(async (tx) => tx.segments.put(s));
        set.status = 201;
        return { object, id: s.id, name: s.name };
      },
      { body: Name, detail: { summary: `Create ${article(noun)}`, tags } },
    );

    app.get(base, async ({ request, query }) => listOf(await store.segments.page(caller(request).team, pageQuery(query), null, segmentSummary)), {
      detail: { summary: `List ${noun.toLowerCase()}s`, tags },
    });

    app.get(`${base}/:id`, async ({ request, params }) => ({ object, ...segmentSummary(await load(request, params.id)) }), {
      detail: { summary: `Retrieve ${article(noun)}`, tags },
    });

    app.delete(
      `${base}/:id`,
      async ({ request, params }) => {
        const { team } = caller(request);
        const id = pathId(params.id);
        // Unknown ids are deleted too (as Resend, docs/api.md §1.6).
        await store.write(async (tx) => {
          await tx.memberships.removeSegment(team, id);
          tx.segments.remove(team, id);
        });
        return { object, id, deleted: true };
      },
      { detail: { summary: `Delete ${article(noun)}`, tags } },
    );

    app.get(
      `${base}/:id/contacts`,
      async ({ request, params, query }) => {
        const q = pageQuery(query);
        const s = await load(request, params.id);
        return listOf(await listContacts(store, s.team_id, q, s.id));
      },
      { detail: { summary: `List the contacts of ${article(noun)}`, tags } },
    );
  }

  // Renaming exists only under the new name (the SDK's `audiences` is an alias of `segments`).
  app.patch(
    '/segments/:id',
    async ({ request, params, body }) => {
      const { team } = caller(request);
      const id = pathId(params.id);
      const found = await store.write(async (tx) => {
        const cur = await tx.segments.get(team, id);
        if (cur) tx.segments.put({ ...cur, name: body.name });
        return cur !== undefined;
      });
      if (!found) throw errors.notFound('Segment');
      return { object: 'segment', id };
    },
    { body: Name, detail: { summary: 'Rename a segment', tags: ['Segments'] } },
  );
}

const article = (noun: string) => `${/^[aeiou]/i.test(noun) ? 'an' : 'a'} ${noun.toLowerCase()}`;
