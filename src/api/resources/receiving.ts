// Received emails (docs/api.md §8): list, retrieve (html with `cid:` references or inlined as
// data: URIs), attachments with signed download URLs, and the raw message through a signed URL.
// `/emails/receiving` is a literal segment, which Elysia's router prefers over the `/emails/:id`
// parameter whatever the order (docs/api.md §2 item 15).
import type { ApiContext } from '../app';
import type { ReceivedEmailRec } from '../../store';
import { pageQuery, listOf } from '../platform/params';
import { errors } from '../../errors';
import { attachmentRoutes } from '../platform/attachments';
import { inlineImages } from '../../mail/cid';
import { resource, route } from '../platform/route';
import { List, PageQuery, UuidParams } from '../../schemas/common';
import { ReceivedEmail, ReceivedEmailQuery, ReceivedEmailSummary } from '../../schemas/receiving';

/** List items and the retrieve response share these fields (docs/api.md §8). */
function summary(r: ReceivedEmailRec): ReceivedEmailSummary {
  return {
    id: r.id,
    to: r.to,
    from: r.from,
    created_at: r.created_at,
    subject: r.subject,
    bcc: r.bcc,
    cc: r.cc,
    reply_to: r.reply_to,
    received_for: r.received_for,
    message_id: r.message_id,
    // Posthorn: the SPF, DKIM and DMARC verdicts on receipt (docs/api.md §8).
    authentication: r.authentication,
    attachments: r.attachments.map(({ id, filename, content_type, content_disposition, content_id, size }) => ({
      id,
      filename,
      content_type,
      content_disposition,
      content_id,
      size,
    })),
  };
}

export const receivingResource = resource('Receiving', (svc: ApiContext) => {
  const { store, links } = svc;
  const load = async (team: string, id: string) => {
    const r = await store.receivedEmails.get(team, id);
    if (!r) throw errors.notFound('Email');
    return r;
  };
  return [
    route({
      method: 'GET',
      path: '/emails/receiving',
      summary: 'List received emails',
      access: 'team',
      query: PageQuery,
      body: 'none',
      response: List(ReceivedEmailSummary),
      handler: async ({ caller, query }) => listOf(await store.receivedEmails.page(caller.team, pageQuery(query), null, summary)),
    }),
    route({
      method: 'GET',
      path: '/emails/receiving/:id',
      summary: 'Retrieve a received email',
      access: 'team',
      params: UuidParams('id'),
      query: ReceivedEmailQuery,
      body: 'none',
      response: ReceivedEmail,
      async handler({ caller, params, query }) {
        const r = await load(caller.team, params.id);
        const format = query.html_format ?? 'cid';
        const content = await store.receivedContent.get(r.team_id, r.id);
        if (!content) throw errors.notFound('Email');
        const html = content.html !== null && format === 'data_uri' ? inlineImages(content.html, r.attachments, content.files) : content.html;
        const { attachments, ...rest } = summary(r);
        return {
          object: 'email' as const,
          ...rest,
          html,
          html_format: format,
          text: content.text,
          headers: content.headers,
          // Posthorn: rspamd's verdict on receipt (docs/api.md §8); null when it was not scored.
          spam: r.spam ?? null,
          raw: await links.download({ kind: 'received-raw', team: r.team_id, email: r.id }),
          attachments,
        };
      },
    }),
    ...attachmentRoutes({ base: '/emails/receiving', load, kind: 'received-attachment', defaultLimit: null, links }),
  ];
});
