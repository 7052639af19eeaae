// Suppressions (docs/api.md §16): add, list (filter by origin), get, remove, the batch forms, and
// (Posthorn, §16.1) the lifting of every bounce entry one incident or one class caused. The list
// itself lives in src/suppressions (shared with bounce and complaint handling).
import type { ApiContext } from '../app';
import type { SuppressionRec } from '../../store';
import { idOrEmail, pageQuery, listOf } from '../platform/params';
import { errors, ApiError } from '../../errors';
import { isUuid } from '../../ids';
import { parseEmail } from '../../mail/address';
import { findSuppression, liftSuppressions, suppress, unsuppress, type LiftFilter, type SuppressionRef } from '../../suppressions';
import { resource, route } from '../platform/route';
import { Deleted, EXPORT_ANSWER, IgnoredBody, Ref } from '../../schemas/common';
import { exportResponse } from '../platform/export';
import {
  AddSuppressionRequest,
  BatchAdded,
  BatchAddRequest,
  BatchRemoved,
  BatchRemoveRequest,
  LiftRequest,
  LiftResult,
  Suppression,
  SuppressionExportQuery,
  SuppressionList,
  SuppressionListQuery,
  SuppressionParams,
  type SuppressionSummary,
} from '../../schemas/suppressions';

const MAX_BATCH = 100;

const summary = (s: SuppressionRec): SuppressionSummary => ({
  id: s.id,
  email: s.email,
  origin: s.origin,
  source_id: s.source_id,
  created_at: s.created_at,
  class: s.class ?? null,
  reply: s.reply ?? null,
});

/** A timestamp field of the lift (ms), or 422 naming it. */
function timeField(field: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const ms = Date.parse(v);
  if (Number.isNaN(ms)) throw errors.invalidField(field, 'must be an ISO 8601 timestamp.');
  return ms;
}

/** The first entries a lift answers with (`lifted` counts them all). */
const LIFT_LISTED = 100;
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

export const suppressionsResource = resource('Suppressions', ({ store, events, bounces }: ApiContext) => {
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
      path: '/suppressions/lift',
      summary: 'Lift every bounce suppression an incident, a class or a reply caused (Posthorn)',
      description:
        'Removes the bounce entries every given filter matches — `incident_id` (made while the incident lasted, at its site), `class` (their reply classified by the rules in force), `reply_contains`, `since`, `until` — at least one of the first three. Complaints and entries added by hand are never lifted. `dry_run` only lists them.',
      access: 'team',
      body: LiftRequest,
      response: LiftResult,
      async handler({ caller, body }) {
        const { team } = caller;
        if (body.incident_id === undefined && body.class === undefined && body.reply_contains === undefined)
          throw new ApiError(422, 'missing_required_field', 'Missing `incident_id`, `class` or `reply_contains` field.');
        const filter: LiftFilter = { since: timeField('since', body.since), until: timeField('until', body.until) };
        if (body.incident_id !== undefined) {
          if (!isUuid(body.incident_id)) throw errors.invalidField('incident_id', 'must be a valid UUID.');
          filter.incident = await store.incidents.get(team, body.incident_id.toLowerCase());
          if (!filter.incident) throw errors.notFound('Incident');
        }
        if (body.class !== undefined) filter.classes = Array.isArray(body.class) ? body.class : [body.class];
        if (body.reply_contains !== undefined) {
          if (body.reply_contains.trim() === '') throw errors.invalidField('reply_contains', 'must not be empty.');
          filter.replyContains = body.reply_contains;
        }
        const dryRun = body.dry_run === true;
        const lifted = await liftSuppressions(store, events, team, filter, bounces, dryRun);
        return {
          object: 'suppression_lift' as const,
          dry_run: dryRun,
          lifted: lifted.length,
          has_more: lifted.length > LIFT_LISTED,
          data: lifted.slice(0, LIFT_LISTED).map(summary),
        };
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
