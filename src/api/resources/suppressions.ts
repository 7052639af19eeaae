// Suppressions (docs/api.md §16): add, list (filter by origin), get, remove, and the batch forms.
// The list itself lives in src/suppressions (shared with bounce and complaint handling).
import type { ApiContext } from '../app';
import type { SuppressionRec } from '../../store';
import { idOrEmail, pageQuery, listOf } from '../platform/params';
import { errors, ApiError } from '../../errors';
import { isUuid } from '../../ids';
import { parseEmail } from '../../mail/address';
import { findSuppression, suppress, unsuppress, type SuppressionRef } from '../../suppressions';
import { resource, route } from '../platform/route';
import { Deleted, EXPORT_ANSWER, IgnoredBody, Ref } from '../../schemas/common';
import { exportResponse } from '../platform/export';
import {
  AddSuppressionRequest,
  BatchAdded,
  BatchAddRequest,
  BatchRemoved,
  BatchRemoveRequest,
  Suppression,
  SuppressionExportQuery,
  SuppressionList,
  SuppressionListQuery,
  SuppressionParams,
  type SuppressionSummary,
} from '../../schemas/suppressions';

const MAX_BATCH = 100;

const summary = (s: SuppressionRec): SuppressionSummary => ({ id: s.id, email: s.email, origin: s.origin, source_id: s.source_id, created_at: s.created_at });
const view = (s: SuppressionRec): Suppression => ({ object: 'suppression', ...summary(s) });

/** A bare address to suppress, normalised (domain lowercased); 422 naming `field` otherwise. */
function emailField(field: string, value: string): string {
  const a = parseEmail(value.trim());
  if (!a) throw errors.invalidAddress(field);
  return a.address;
}

/** 1 to 100 items (checked after their types, as before: its wording is not the array's). */
function checkBatchSize(field: string, items: unknown[]): void {
  if (items.length < 1 || items.length > MAX_BATCH) throw errors.validation(`The \`${field}\` field must contain between 1 and ${MAX_BATCH} items.`);
}

export const suppressionsResource = resource('Suppressions', ({ store, events }: ApiContext) => {
  const notFound = () => errors.notFound('Suppression');

  return [
    route({
      method: 'POST',
      path: '/suppressions',
      summary: 'Suppress an address',
      access: 'team',
      body: AddSuppressionRequest,
      status: 201,
      response: Ref('suppression'),
      async handler({ caller, body }) {
        const { team } = caller;
        const email = emailField('email', body.email);
        const rec = await store.write((tx) => suppress(events, tx, team, email, 'manual'));
        return { object: 'suppression' as const, id: rec.id };
      },
    }),

    route({
      method: 'GET',
      path: '/suppressions',
      summary: 'List suppressed addresses',
      access: 'team',
      query: SuppressionListQuery,
      body: 'none',
      response: SuppressionList,
      async handler({ caller, query }) {
        const { origin } = query;
        return listOf(await store.suppressions.page(caller.team, pageQuery(query), 20, (s) => (origin && s.origin !== origin ? undefined : summary(s))));
      },
    }),

    route({
      method: 'GET',
      path: '/suppressions/export',
      summary: "Export suppressed addresses as CSV or NDJSON, with the list's filter (Posthorn, docs/api.md §4.1)",
      access: 'team',
      query: SuppressionExportQuery,
      body: 'none',
      response: EXPORT_ANSWER,
      handler: ({ caller, query }) => {
        const { origin } = query;
        return exportResponse({
          name: 'suppressions',
          format: query.format ?? 'csv',
          page: (q) => store.suppressions.page(caller.team, q, null),
          keep: origin ? (s) => s.origin === origin : null,
          row: summary,
          columns: ['id', 'email', 'origin', 'source_id', 'created_at'],
        });
      },
    }),

    route({
      method: 'GET',
      path: '/suppressions/:id_or_email',
      summary: 'Retrieve a suppression by id or email',
      access: 'team',
      params: SuppressionParams,
      body: 'none',
      response: Suppression,
      async handler({ caller, params }) {
        const rec = await findSuppression(store, caller.team, idOrEmail(params.id_or_email));
        if (!rec) throw notFound();
        return view(rec);
      },
    }),

    route({
      method: 'DELETE',
      path: '/suppressions/:id_or_email',
      summary: 'Remove a suppression (the address becomes sendable again)',
      access: 'team',
      params: SuppressionParams,
      body: IgnoredBody,
      response: Deleted('suppression'),
      async handler({ caller, params }) {
        const ref = idOrEmail(params.id_or_email);
        const rec = await store.write((tx) => unsuppress(events, tx, caller.team, ref));
        if (!rec) throw notFound();
        return { object: 'suppression' as const, id: rec.id, deleted: true as const };
      },
    }),

    route({
      method: 'POST',
      path: '/suppressions/batch/add',
      summary: 'Suppress up to 100 addresses',
      access: 'team',
      body: BatchAddRequest,
      status: 201,
      response: BatchAdded,
      async handler({ caller, body }) {
        const { team } = caller;
        checkBatchSize('emails', body.emails);
        const emails = body.emails.map((e, i) => emailField(`emails[${i}]`, e));
        const recs = await store.write(async (tx) => {
          const out = [];
          for (const e of emails) out.push(await suppress(events, tx, team, e, 'manual'));
          return out;
        });
        return { data: recs.map((r) => ({ object: 'suppression' as const, id: r.id })) };
      },
    }),

    route({
      method: 'POST',
      path: '/suppressions/batch/remove',
      summary: 'Remove up to 100 suppressions',
      access: 'team',
      body: BatchRemoveRequest,
      response: BatchRemoved,
      async handler({ caller, body }) {
        const { team } = caller;
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
          const list = emails ?? [];
          checkBatchSize('emails', list);
          refs = list.map((email) => ({ email: email.trim() }));
        }
        const removed = await store.write(async (tx) => {
          const out = [];
          for (const ref of refs) {
            const rec = await unsuppress(events, tx, team, ref);
            if (rec) out.push(rec);
          }
          return out;
        });
        return { data: removed.map((r) => ({ object: 'suppression' as const, id: r.id, deleted: true as const })) };
      },
    }),
  ];
});
