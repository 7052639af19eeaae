// Received emails (docs/api.md §8): list, retrieve (html with `cid:` references or inlined as
// data: URIs), attachments with signed download URLs, and the raw message through a signed URL.
// Registered before emails.ts; `/emails/receiving` is a literal segment, which Elysia's router
// prefers over the `/emails/:id` parameter whatever the order (docs/api.md §2 item 15).
import type { App, ApiContext } from '../app';
import type { ReceivedEmailRec } from '../../store';
import { caller } from '../platform/context';
import { pathId, pageQuery, listOf } from '../platform/params';
import { errors } from '../../errors';
import { SignedLinks } from '../../links/signed';
import { attachmentRoutes } from '../platform/attachments';
import { inlineImages } from '../../mail/cid';

const tags = ['Receiving'];
const HTML_FORMATS = ['cid', 'data_uri'] as const;

/** List items and the retrieve response share these fields (docs/api.md §8). */
function summary(r: ReceivedEmailRec) {
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

export function receivingRoutes(app: App, svc: ApiContext) {
  const { store } = svc;
  const links = new SignedLinks(store.secret('links'), svc.config.public_url);
  const load = async (request: Request, raw: string) => {
    const r = await store.receivedEmails.get(caller(request).team, pathId(raw));
    if (!r) throw errors.notFound('Email');
    return r;
  };
  app.get('/emails/receiving', async ({ request, query }) => listOf(await store.receivedEmails.page(caller(request).team, pageQuery(query), null, summary)), {
    detail: { summary: 'List received emails', tags },
  });

  app.get(
    '/emails/receiving/:id',
    async ({ request, params, query }) => {
      const r = await load(request, params.id);
      const format = (query as Record<string, string | undefined>).html_format ?? 'cid';
      if (!(HTML_FORMATS as readonly string[]).includes(format)) throw errors.validation('The `html_format` parameter must be `cid` or `data_uri`.');
      const content = await store.receivedContent.get(r.team_id, r.id);
      if (!content) throw errors.notFound('Email');
      const html = content.html !== null && format === 'data_uri' ? inlineImages(content.html, r.attachments, content.files) : content.html;
      const { attachments, ...rest } = summary(r);
      return {
        object: 'email',
        ...rest,
        html,
        html_format: format,
        text: content.text,
        headers: content.headers,
        raw: await links.download({ kind: 'received-raw', team: r.team_id, email: r.id }),
        attachments,
      };
    },
    { detail: { summary: 'Retrieve a received email', tags } },
  );

  attachmentRoutes(app, { base: '/emails/receiving', load, kind: 'received-attachment', defaultLimit: null, links, tags });
}
