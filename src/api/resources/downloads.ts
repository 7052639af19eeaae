// GET /d/{token}: signed, expiring download links (no API key), for attachments of sent and
// received emails and raw received messages (api-reference §7.7, §8).
import type { App } from '../app';
import type { Services } from '../../services';
import type { EmailContent } from '../../store';
import { SignedLinks } from '../../links/signed';
import { errors } from '../errors';

export function downloadsRoutes(app: App, svc: Services) {
  const links = new SignedLinks(svc.store.secrets, svc.config.public_url);
  app.get(
    '/d/:token',
    async ({ params }) => {
      const target = await links.verify(params.token);
      if (!target) throw errors.notFound('Download');
      if (target.kind === 'sent-attachment') {
        const email = svc.store.emails.get(target.team, target.email);
        const meta = email?.attachments.find((a) => a.id === target.attachment);
        const content = email && (svc.store.emailContent.get([target.team, target.email]) as EmailContent | undefined);
        const bytes = meta && content?.files[meta.id];
        if (!meta || !bytes) throw errors.notFound('Attachment');
        const name = (meta.filename ?? 'attachment').replace(/["\\\r\n]/g, '_');
        return new Response(Buffer.from(bytes), {
          headers: {
            'content-type': meta.content_type,
            'content-disposition': `attachment; filename="${name}"; filename*=UTF-8''${encodeURIComponent(meta.filename ?? 'attachment')}`,
            'cache-control': 'private, max-age=0',
          },
        });
      }
      throw errors.notFound('Download');
    },
    { detail: { summary: 'Download through a signed link', tags: ['Downloads'], security: [] } },
  );
}
