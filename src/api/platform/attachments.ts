// The attachments routes shared by sent and received emails (docs/api.md §7.7, §8): a list and
// a single attachment, each with a signed, expiring download URL under public_url.
import type { App } from '../app';
import type { AttachmentMeta } from '../../store';
import type { SignedLinks, DownloadTarget } from '../../links/signed';
import { sortedSource, paginate } from '../../store/paginate';
import { pathId, pageQuery, listOf } from './params';
import { errors } from '../../errors';

interface Owner {
  id: string;
  team_id: string;
  attachments: AttachmentMeta[];
}

export interface AttachmentRoutes {
  /** `/emails` or `/emails/receiving`. */
  base: string;
  /** The email named by the path id (404 when unknown). */
  load(request: Request, id: string): Promise<Owner>;
  kind: Extract<DownloadTarget['kind'], 'sent-attachment' | 'received-attachment'>;
  /** Page size without `limit` (docs/api.md §4): 20 for sent, everything for received. */
  defaultLimit: number | null;
  links: SignedLinks;
  tags: string[];
}

export function attachmentRoutes(app: App, o: AttachmentRoutes) {
  // `filename` and `content_id` are optional in the SDK's type, never null: left out when absent.
  const view = async (e: Owner, a: AttachmentMeta) => ({
    object: 'attachment',
    id: a.id,
    ...(a.filename !== null ? { filename: a.filename } : {}),
    size: a.size,
    content_type: a.content_type,
    content_disposition: a.content_disposition,
    ...(a.content_id !== null ? { content_id: a.content_id } : {}),
    ...(await o.links.download({ kind: o.kind, team: e.team_id, email: e.id, attachment: a.id })),
  });
  const what = o.kind === 'sent-attachment' ? 'a sent email' : 'a received email';

  app.get(
    `${o.base}/:id/attachments`,
    async ({ request, params, query }) => {
      const e = await o.load(request, params.id);
      const page = paginate(sortedSource(e.attachments), [], pageQuery(query), o.defaultLimit, (_k, v) => v as AttachmentMeta);
      return listOf({ has_more: page.has_more, data: await Promise.all(page.data.map((a) => view(e, a))) });
    },
    { detail: { summary: `List the attachments of ${what}`, tags: o.tags } },
  );

  app.get(
    `${o.base}/:id/attachments/:attachment_id`,
    async ({ request, params }) => {
      const e = await o.load(request, params.id);
      const attId = pathId(params.attachment_id, 'attachment_id');
      const a = e.attachments.find((x) => x.id === attId);
      if (!a) throw errors.notFound('Attachment');
      return view(e, a);
    },
    { detail: { summary: `Retrieve an attachment of ${what}`, tags: o.tags } },
  );
}
