// Suppressions (docs/api.md §16): add, list (filter by origin), get, remove, and the batch forms.
// The list itself lives in src/suppressions (shared with bounce and complaint handling).
import { t } from 'elysia';
import type { App, ApiContext } from '../app';
import type { SuppressionRec, SuppressionOrigin } from '../../store';
import { caller } from '../platform/context';
import { idOrEmail, pageQuery, listOf } from '../platform/params';
import { errors, ApiError } from '../../errors';
import { isUuid } from '../../ids';
import { parseEmail } from '../../mail/address';
import { ORIGINS, findSuppression, suppress, unsuppress, type SuppressionRef } from '../../suppressions';

const tags = ['Suppressions'];
const MAX_BATCH = 100;
const Strings = t.Array(t.String({ error: 'The `{field}` field must be a string.' }), { error: 'The `{field}` field must be an array of strings.' });

const entry = (s: SuppressionRec) => ({ id: s.id, email: s.email, origin: s.origin, source_id: s.source_id, created_at: s.created_at });

/** A bare address to suppress, normalised (domain lowercased); 422 naming `field` otherwise. */
function emailField(field: string, value: string): string {
  const a = parseEmail(value.trim());
  if (!a) throw errors.invalidAddress(field);
  return a.address;
}

function checkBatchSize(field: string, items: unknown[]): void {
  if (items.length < 1 || items.length > MAX_BATCH) throw errors.validation(`The \`${field}\` field must contain between 1 and ${MAX_BATCH} items.`);
}

export function suppressionsRoutes(app: App, { store }: ApiContext) {
  const notFound = () => errors.notFound('Suppression');

  app.post(
    '/suppressions',
    async ({ request, body, set }) => {
      const { team } = caller(request);
      const email = emailField('email', body.email);
      const rec = await store.write((tx) => suppress(tx, team, email, 'manual'));
      set.status = 201;
      return { object: 'suppression', id: rec.id };
    },
    { body: t.Object({ email: t.String({ error: 'The `email` field must be a string.' }) }), detail: { summary: 'Suppress an address', tags } },
  );

  app.get(
    '/suppressions',
    async ({ request, query }) => {
      const { team } = caller(request);
      const origin = query.origin as SuppressionOrigin | undefined;
      if (origin !== undefined && !ORIGINS.includes(origin)) throw errors.validation(`The \`origin\` parameter must be one of ${ORIGINS.join(', ')}.`);
      const page = await store.suppressions.page(team, pageQuery(query), 20, (s) => (origin && s.origin !== origin ? undefined : entry(s)));
      return listOf(page);
    },
    { detail: { summary: 'List suppressed addresses', tags } },
  );

  app.get(
    '/suppressions/:id_or_email',
    async ({ request, params }) => {
      const rec = await findSuppression(store, caller(request).team, idOrEmail(params.id_or_email));
      if (!rec) throw notFound();
      return { object: 'suppression', ...entry(rec) };
    },
    { detail: { summary: 'Retrieve a suppression by id or email', tags } },
  );

  app.delete(
    '/suppressions/:id_or_email',
    async ({ request, params }) => {
      const { team } = caller(request);
      const ref = idOrEmail(params.id_or_email);
      const rec = await store.write((tx) => unsuppress(tx, team, ref));
      if (!rec) throw notFound();
      return { object: 'suppression', id: rec.id, deleted: true };
    },
    { detail: { summary: 'Remove a suppression (the address becomes sendable again)', tags } },
  );

  app.post(
    '/suppressions/batch/add',
    async ({ request, body, set }) => {
      const { team } = caller(request);
      checkBatchSize('emails', body.emails);
      const emails = body.emails.map((e, i) => emailField(`emails[${i}]`, e));
      const recs = await store.write(async (tx) => {
        const out = [];
        for (const e of emails) out.push(await suppress(tx, team, e, 'manual'));
        return out;
      });
      set.status = 201;
      return { data: recs.map((r) => ({ object: 'suppression', id: r.id })) };
    },
    { body: t.Object({ emails: Strings }), detail: { summary: 'Suppress up to 100 addresses', tags } },
  );

  app.post(
    '/suppressions/batch/remove',
    async ({ request, body }) => {
      const { team } = caller(request);
      const { emails, ids } = body;
      if (emails === undefined && ids === undefined) throw new ApiError(422, 'missing_required_field', 'Missing `emails` or `ids` field.');
      if (emails !== undefined && ids !== undefined) throw errors.validation('You can only use either `emails` or `ids`, not both.');
      let refs: SuppressionRef[];
      if (ids !== undefined) {
        checkBatchSize('ids', ids);
        refs = ids.map((id, i) => {
          if (!isUuid(id)) throw errors.invalidField(`ids[${i}]`, 'must be a valid UUID.');
          return { id: id.toLowerCase() };
        });
      } else {
        checkBatchSize('emails', emails!);
        refs = emails!.map((email) => ({ email: email.trim() }));
      }
      const removed = await store.write(async (tx) => {
        const out = [];
        for (const ref of refs) {
          const rec = await unsuppress(tx, team, ref);
          if (rec) out.push(rec);
        }
        return out;
      });
      return { data: removed.map((r) => ({ object: 'suppression', id: r.id, deleted: true })) };
    },
    { body: t.Object({ emails: t.Optional(Strings), ids: t.Optional(Strings) }), detail: { summary: 'Remove up to 100 suppressions', tags } },
  );
}
