// Emails (docs/api.md §7): send, batch, retrieve, list, reschedule, cancel, queue controls,
// attachments, share. Sending goes through the one sending core (src/sending/submit.ts).
import { SYSTEM_CONTENT_HIDDEN, isSystemMail } from '../../mail/system';
import type { ApiContext } from '../app';
import type { EmailRec, EventRec } from '../../store';
import { withDerived } from '../../store/paginate';
import { derivedEvents, eventData } from '../../events';
import { pageQuery, listOf } from '../platform/params';
import { idempotencyKey } from '../platform/idempotency';
import { ApiError, errors } from '../../errors';
import { EMAIL_STATUSES } from '../../event-catalogue';
import { prepare, commit, sendOnce, type Prepared } from '../../sending/submit';
import { BatchAttachments } from '../../sending/attachments';
import { fingerprint, type Outcome } from '../../sending/idempotency';
import { parseScheduledAt } from '../../sending/schedule';
import { reschedule } from '../../sending/scheduled';
import { QueueControls } from '../../delivery/controls';
import { composeEmail } from '../../sending/message';
import { attachmentRoutes } from '../platform/attachments';
import { parseExpiresIn, shareEmail } from '../../sharing';
import { resource, route } from '../platform/route';
import { EXPORT_ANSWER, IgnoredBody, isObject, List, PageQuery, Ref, UuidParams } from '../../schemas/common';
import { type Column, exportResponse } from '../platform/export';
import {
  BatchRequest,
  BatchResponse,
  Email,
  EmailEvents,
  EmailExportQuery,
  type EmailFilters,
  EmailListQuery,
  EmailSummary,
  RescheduleRequest,
  SendEmailRequest,
  SendEmailResponse,
  ShareRequest,
  ShareResponse,
} from '../../schemas/emails';
import { EmailInsights, InsightsQuery } from '../../schemas/insights';

const Params = UuidParams('id');

export const emailsResource = resource('Emails', (svc: ApiContext) => {
  const { store, links } = svc;
  const controls = new QueueControls(svc);
  const load = async (team: string, id: string) => {
    const email = await store.emails.get(team, id);
    if (!email) throw errors.notFound('Email');
    return email;
  };
  const summary = (e: EmailRec): EmailSummary => ({
    id: e.id,
    message_id: e.message_id,
    to: e.to,
    from: e.from,
    created_at: e.created_at,
    subject: e.subject,
    bcc: e.bcc,
    cc: e.cc,
    reply_to: e.reply_to,
    last_event: e.last_event,
    scheduled_at: e.scheduled_at,
  });
  /** The recipients still queued, and what holds them: the email's hold or its destination's (null: nothing queued). */
  const queueOf = async (e: EmailRec): Promise<Email['queue']> => {
    const entries = await store.queue.entriesOf(e.team_id, e.id);
    if (!entries.length) return null;
    const held = entries.some((q) => q.held === 'email') ? 'email' : entries.some((q) => q.held === 'destination') ? 'destination' : null;
    return { recipients: entries.flatMap((q) => q.recipients), held };
  };
  const reply = <T>(set: { status?: unknown }, o: Outcome) => {
    set.status = o.status;
    return o.body as T;
  };

  /** Queue controls of one email (Posthorn, docs/api.md §19.7). */
  const control = (action: 'hold' | 'release' | 'retry', run: (team: string, id: string) => Promise<void>, summary: string, description: string) =>
    route({
      method: 'POST',
      path: `/emails/:id/${action}`,
      summary: `${summary} (Posthorn)`,
      description: `${description} Unknown → 404 \`not_found\`; not a UUID → 422 \`invalid_parameter\`.`,
      access: 'team',
      params: Params,
      body: IgnoredBody,
      response: Ref('email'),
      async handler({ caller, params }) {
        await run(caller.team, params.id);
        return { object: 'email' as const, id: params.id };
      },
    });

  /** POST /emails, and POST /email (docs/api.md §2 item 17): one send, one idempotency scope. */
  const send = (path: '/emails' | '/email', doc: { summary: string; description?: string; hidden?: boolean }) =>
    route({
      method: 'POST',
      path,
      ...doc,
      access: 'sending',
      idempotent: true,
      largeBody: 'email',
      body: SendEmailRequest,
      response: SendEmailResponse,
      async handler({ caller, request, body, set }) {
        const { team, key } = caller;
        const outcome = await sendOnce(svc, { team, key }, body as Record<string, unknown>, { endpoint: '/emails', key: idempotencyKey(request.headers) });
        return reply(set, outcome);
      },
    });

  return [
    send('/emails', { summary: 'Send an email' }),
    // The singular path of the SDK before 2.0 (`resend.sendEmail`), which Resend still serves: left
    // out of the OpenAPI document so that generated clients get one send method.
    send('/email', { summary: 'Send an email (the legacy path of the SDK before 2.0)', hidden: true }),

    route({
      method: 'POST',
      path: '/emails/batch',
      summary: 'Send up to 100 emails',
      description: 'Each item is a send (POST /emails); `x-batch-validation: permissive` accepts the valid items and reports the others by index.',
      access: 'sending',
      idempotent: true,
      largeBody: 'batch',
      body: BatchRequest,
      response: BatchResponse,
      async handler({ caller, request, body: raw, set }) {
        const { team, key } = caller;
        const mode = (request.headers.get('x-batch-validation') ?? 'strict').toLowerCase();
        if (mode !== 'strict' && mode !== 'permissive') throw errors.validation('The `x-batch-validation` header must be `strict` or `permissive`.');
        const body = raw as unknown[];
        if (body.length < 1 || body.length > 100) throw errors.validation('The batch must contain between 1 and 100 emails.');
        const scope = { team, endpoint: '/emails/batch', key: idempotencyKey(request.headers), fingerprint: () => fingerprint({ mode, body }) };
        const outcome = await svc.idempotency.run(scope, async (remember) => {
          // One attachment budget for the request, spent in the items' order (docs/api.md §7.2).
          const attachments = new BatchAttachments(body.length);
          const results = await Promise.allSettled(
            body.map(async (item, index) => {
              try {
                if (!isObject(item)) throw errors.validation('Each batch item must be a JSON object.');
                return await prepare(svc, { team, key }, item, { share: attachments.share(index) });
              } finally {
                attachments.end(index);
              }
            }),
          );
          const failure = (r: PromiseSettledResult<Prepared>) => {
            if (r.status === 'fulfilled') return null;
            if (r.reason instanceof ApiError) return r.reason;
            throw r.reason;
          };
          const accepted: Prepared[] = [];
          const failed: { index: number; message: string }[] = [];
          results.forEach((r, index) => {
            const err = failure(r);
            if (err) {
              if (mode === 'strict') throw new ApiError(err.statusCode, err.errorName, `[${index}] ${err.message}`);
              failed.push({ index, message: err.message });
            } else accepted.push((r as PromiseFulfilledResult<Prepared>).value);
          });
          const data = accepted.map((p) => ({ id: p.email.id }));
          const o = { status: 200, body: mode === 'strict' ? { data } : { data, errors: failed } };
          // Accepted as received: one record for the request, written as its emails in the back office (src/sending/incoming.ts).
          if (accepted.length) await commit(svc, accepted, { also: remember && ((tx) => remember(tx, o)), incoming: true });
          else if (remember) await store.write(async (tx) => remember(tx, o));
          return o;
        });
        return reply(set, outcome);
      },
    }),

    route({
      method: 'GET',
      path: '/emails',
      summary: 'List sent emails (Posthorn: filter by status, text and date, docs/api.md §7.4)',
      access: 'team',
      query: EmailListQuery,
      body: 'none',
      response: List(EmailSummary),
      async handler({ caller, query }) {
        const match = emailFilter(query);
        return listOf(await store.emails.page(caller.team, pageQuery(query), 20, match ? (e) => (match(e) ? summary(e) : undefined) : summary));
      },
    }),

    route({
      method: 'GET',
      path: '/emails/export',
      summary: "Export sent emails as CSV or NDJSON, with the list's filters (Posthorn, docs/api.md §4.1)",
      access: 'team',
      query: EmailExportQuery,
      body: 'none',
      response: EXPORT_ANSWER,
      handler: ({ caller, query }) =>
        exportResponse({
          name: 'emails',
          format: query.format ?? 'csv',
          page: (q) => store.emails.page(caller.team, q, null),
          keep: emailFilter(query),
          row: (e): ExportedEmail => ({ ...summary(e), tags: e.tags }),
          columns: EMAIL_COLUMNS,
        }),
    }),

    route({
      method: 'GET',
      path: '/emails/:id/events',
      summary: 'The event log of an email, newest first (Posthorn)',
      access: 'team',
      params: Params,
      query: PageQuery,
      body: 'none',
      response: EmailEvents,
      async handler({ caller, params, query }) {
        const e = await load(caller.team, params.id);
        const q = pageQuery(query);
        const shown = (ev: EventRec) => ({
          object: 'event' as const,
          id: ev.id,
          type: ev.type,
          created_at: ev.created_at,
          data: eventData(ev, e),
          automated: ev.automated ?? null,
        });
        const stored = await store.events.pageBy('subject', e.id, e.team_id, q, 100, shown);
        return listOf(withDerived(stored, derivedEvents(e).map(shown), q, 100, (x) => x.id));
      },
    }),

    route({
      method: 'GET',
      path: '/emails/:id/insights',
      summary: 'The deliverability insights of an email, with its spam score (Posthorn)',
      description:
        'Computed when first asked for (the message composed and DKIM-signed as delivery sends it, scored by rspamd when `spam.rspamd_url` is set) and kept with the email; `refresh=true` computes them again (docs/api.md §7.12). Unknown → 404 `not_found`.',
      access: 'team',
      params: Params,
      query: InsightsQuery,
      body: 'none',
      response: EmailInsights,
      async handler({ caller, params, query }) {
        const refresh = query.refresh === undefined ? false : query.refresh === 'true' ? true : query.refresh === 'false' ? false : null;
        if (refresh === null) throw errors.validation('`refresh` must be `true` or `false`.');
        const r = await svc.insights.ofEmail(caller.team, params.id, { refresh });
        return { object: 'email_insights' as const, email_id: r.id, computed_at: r.computed_at, insights: r.insights, spam: r.spam };
      },
    }),

    route({
      method: 'GET',
      path: '/emails/:id/raw',
      summary: 'The email as it is sent (RFC 5322, before DKIM signing) (Posthorn)',
      access: 'team',
      params: Params,
      body: 'none',
      response: { raw: 'message/rfc822', description: 'The message' },
      async handler({ caller, params }) {
        const e = await load(caller.team, params.id);
        const content = isSystemMail(e) ? undefined : await store.emailContent.get(e.team_id, e.id);
        if (!content) throw errors.notFound('Email content');
        const raw = await composeEmail(svc, e, content, (await store.domains.get(e.team_id, e.domain_id)) ?? null);
        return new Response(raw as Uint8Array<ArrayBuffer>, { headers: { 'content-type': 'message/rfc822', 'x-content-type-options': 'nosniff' } });
      },
    }),

    route({
      method: 'GET',
      path: '/emails/:id',
      summary: 'Retrieve an email',
      access: 'team',
      params: Params,
      body: 'none',
      response: Email,
      async handler({ caller, params }) {
        const e = await load(caller.team, params.id);
        // A system email's link is its addressee's secret (mail/system.ts): its body is not shown.
        const hidden = isSystemMail(e);
        const content = hidden ? undefined : await store.emailContent.get(e.team_id, e.id);
        return {
          object: 'email' as const,
          ...summary(e),
          html: content?.html ?? null,
          text: hidden ? SYSTEM_CONTENT_HIDDEN : (content?.text ?? null),
          tags: e.tags,
          topic_id: e.topic_id ?? null,
          // Posthorn: every delivery attempt, and what of the email waits in the queue (docs/api.md §7.3).
          attempts: e.attempts ?? [],
          queue: await queueOf(e),
        };
      },
    }),

    route({
      method: 'PATCH',
      path: '/emails/:id',
      summary: 'Reschedule a scheduled email',
      access: 'team',
      params: Params,
      body: RescheduleRequest,
      response: Ref('email'),
      async handler({ caller, params, body }) {
        await reschedule(svc, caller.team, params.id, parseScheduledAt(body.scheduled_at));
        return { object: 'email' as const, id: params.id };
      },
    }),

    route({
      method: 'POST',
      path: '/emails/:id/cancel',
      summary: 'Cancel a scheduled or queued email',
      description:
        'A scheduled email is taken off the schedule; a queued one (Posthorn) leaves the delivery queue and its waiting recipients end `canceled`. Neither → 422 `validation_error`.',
      access: 'team',
      params: Params,
      body: IgnoredBody,
      response: Ref('email'),
      async handler({ caller, params }) {
        await controls.cancelEmail(caller.team, params.id);
        return { object: 'email' as const, id: params.id };
      },
    }),

    control(
      'hold',
      (team, id) => controls.holdEmail(team, id),
      'Hold a queued email',
      'Its queue entries are not tried until it is released. Not queued, or already held → 422 `validation_error`.',
    ),
    control(
      'release',
      (team, id) => controls.releaseEmail(team, id),
      'Release a held email',
      'Due at once (held on with its destination when the team holds that). Not held → 422 `validation_error`.',
    ),
    control(
      'retry',
      (team, id) => controls.retryEmail(team, id),
      'Retry a queued email now',
      'Its queue entries are due at once. Not queued, or held → 422 `validation_error`.',
    ),

    route({
      method: 'POST',
      path: '/emails/:id/share',
      summary: 'Share an email (sent or received): a signed, read-only public page',
      access: 'team',
      params: Params,
      body: ShareRequest,
      response: ShareResponse,
      async handler({ caller, params, body }) {
        const url = await shareEmail(store, links, caller.team, params.id, parseExpiresIn(body.expires_in));
        return { object: 'email' as const, id: params.id, url };
      },
    }),

    ...attachmentRoutes({ base: '/emails', load, kind: 'sent-attachment', defaultLimit: 20, links }),
  ];
});

/** An email as exported: the list's item and its tags. */
type ExportedEmail = EmailSummary & { tags: EmailRec['tags'] };

/** The CSV of GET /emails/export: address lists as RFC 5322 writes them (RFC 5322 §3.4, `, ` between addresses), tags as `name:value`. */
const EMAIL_COLUMNS: Column<ExportedEmail>[] = [
  'id',
  'created_at',
  'from',
  'to',
  'cc',
  'bcc',
  'reply_to',
  'subject',
  'last_event',
  'scheduled_at',
  'message_id',
  ['tags', (e) => e.tags.map((t) => `${t.name}:${t.value}`).join(', ')],
];

const STATUSES = new Set<string>(EMAIL_STATUSES);

/** A tag's name or value as a send accepts it (docs/api.md §7.1): at most 256 ASCII letters, numbers, underscores or dashes. */
const TAG_TEXT = /^[A-Za-z0-9_-]{0,256}$/;

/** `tag=name:value` (that tag) or `tag=name` (a tag of that name, any value); null when not given. */
function tagFilter(tag: string | undefined): ((e: EmailRec) => boolean) | null {
  if (tag === undefined || tag === '') return null;
  const at = tag.indexOf(':');
  const name = at < 0 ? tag : tag.slice(0, at);
  const value = at < 0 ? null : tag.slice(at + 1);
  if (!name || !TAG_TEXT.test(name) || (value !== null && !TAG_TEXT.test(value)))
    throw errors.validation('`tag` must be `name:value` or `name`, in ASCII letters, numbers, underscores or dashes.');
  return (e) => e.tags.some((t) => t.name === name && (value === null || t.value === value));
}

/**
 * Posthorn's filters on GET /emails and its export (docs/api.md §7.4): `status` (a `last_event`),
 * `q` (text in a recipient, the sender or the subject), `since`/`until` (ISO 8601 bounds on
 * `created_at`), `tag` (`name:value` or `name`). Null when none is given.
 */
function emailFilter(query: EmailFilters): ((e: EmailRec) => boolean) | null {
  const { status, q, since, until } = query;
  if (status !== undefined && !status.split(',').every((s) => STATUSES.has(s)))
    throw errors.validation(`\`status\` must be one of ${[...STATUSES].join(', ')}.`);
  const bound = (name: string, v: string | undefined) => {
    if (v === undefined || v === '') return null;
    const ms = Date.parse(v);
    if (Number.isNaN(ms)) throw errors.validation(`\`${name}\` must be an ISO 8601 date or date-time.`);
    return ms;
  };
  const from = bound('since', since);
  const to = bound('until', until);
  const text = q?.trim().toLowerCase() || null;
  if (text && text.length > 200) throw errors.validation('`q` must be at most 200 characters.');
  const statuses = status ? new Set(status.split(',')) : null;
  const tagged = tagFilter(query.tag);
  if (!statuses && !text && from === null && to === null && !tagged) return null;
  return (e) => {
    if (statuses && !statuses.has(e.last_event)) return false;
    if (tagged && !tagged(e)) return false;
    const at = Date.parse(e.created_at);
    if ((from !== null && at < from) || (to !== null && at > to)) return false;
    if (text) {
      const hay = [e.subject, e.from, ...e.to, ...e.cc, ...e.bcc].join('\n').toLowerCase();
      if (!hay.includes(text)) return false;
    }
    return true;
  };
}
