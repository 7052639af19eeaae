// The attachments routes shared by sent and received emails (docs/api.md §7.7, §8): a list and
// a single attachment, each with a signed, expiring download URL under public_url.
import type { AttachmentMeta } from '../../store';
import type { SignedLinks, DownloadTarget } from '../../links/signed';
import { sortedSource, paginate } from '../../store/paginate';
import { pageQuery, listOf } from './params';
import { errors } from '../../errors';
import { route, type Route } from './route';
import { List, PageQuery, UuidParams } from '../../schemas/common';
import { EmailAttachment } from '../../schemas/emails';

interface Owner {
  id: string;
  team_id: string;
  attachments: AttachmentMeta[];
}

export interface AttachmentRoutes {
  /** `/emails` or `/emails/receiving`. */
  base: string;
  /** The email of the caller's team named by the path id (404 when unknown). */
  load(team: string, id: string): Promise<Owner>;
  kind: Extract<DownloadTarget['kind'], 'sent-attachment' | 'received-attachment'>;
  /** Page size without `limit` (docs/api.md §4): 20 for sent, everything for received. */
  defaultLimit: number | null;
  links: SignedLinks;
}

export function attachmentRoutes(o: AttachmentRoutes): Route[] {
  // `filename` and `content_id` are optional in the SDK's type, never null: left out when absent.
  const view = async (e: Owner, a: AttachmentMeta) => ({
    object: 'attachment' as const,
    id: a.id,
    ...(a.filename !== null ? { filename: a.filename } : {}),
    size: a.size,
    content_type: a.content_type,
    content_disposition: a.content_disposition,
    ...(a.content_id !== null ? { content_id: a.content_id } : {}),
    ...(await o.links.download({ kind: o.kind, team: e.team_id, email: e.id, attachment: a.id })),
  });
  const what = o.kind === 'sent-attachment' ? 'a sent email' : 'a received email';

  return [
    route({
      method: 'GET',
      path: `${o.base}/:id/attachments`,
      summary: `List the attachments of ${what}`,
      access: 'team',
      params: UuidParams('id'),
      query: PageQuery,
      body: 'none',
      response: List(EmailAttachment),
      async handler({ caller, params, query }) {
        const e = await o.load(caller.team, params.id);
        const page = paginate(sortedSource(e.attachments), [], pageQuery(query), o.defaultLimit, (_k, v) => v as AttachmentMeta);
        return listOf({ has_more: page.has_more, data: await Promise.all(page.data.map((a) => view(e, a))) });
      },
    }),
    route({
      method: 'GET',
      path: `${o.base}/:id/attachments/:attachment_id`,
      summary: `Retrieve an attachment of ${what}`,
      access: 'team',
      params: UuidParams('id', 'attachment_id'),
      body: 'none',
      response: EmailAttachment,
      async handler({ caller, params }) {
        const e = await o.load(caller.team, params.id);
        const a = e.attachments.find((x) => x.id === params.attachment_id);
        if (!a) throw errors.notFound('Attachment');
        return view(e, a);
      },
    }),
  ];
}
