// GET /d/{token}: signed, expiring download links (no API key), for attachments of sent and
// received emails and raw received messages (docs/api.md §7.7, §8).
import type { ApiContext } from '../app';
import { errors } from '../../errors';
import { resource, route } from '../platform/route';
import { TokenParams } from '../../schemas/common';

export const downloadsResource = resource('Downloads', (svc: ApiContext) => {
  const { store, links } = svc;
  return [
    route({
      method: 'GET',
      path: '/d/:token',
      summary: 'Download through a signed link',
      access: 'public',
      params: TokenParams,
      body: 'none',
      response: { raw: 'application/octet-stream', description: 'The file (its own content type), as an attachment' },
      async handler({ params }) {
        const target = await links.verify(params.token);
        if (!target) throw errors.notFound('Download');
        if (target.kind === 'sent-attachment') {
          const email = await store.emails.get(target.team, target.email);
          const meta = email?.attachments.find((a) => a.id === target.attachment);
          const bytes = meta && (await store.emailContent.file(target.team, target.email, meta.id));
          if (!meta || !bytes) throw errors.notFound('Attachment');
          return file(bytes, meta.content_type, meta.filename ?? 'attachment');
        }
        // Received mail (docs/api.md §8): an attachment, or the original message as an .eml file.
        const received = await store.receivedEmails.get(target.team, target.email);
        if (target.kind === 'received-raw') {
          const raw = received && (await store.receivedContent.raw(target.team, target.email));
          if (!received || !raw) throw errors.notFound('Email');
          return file(raw, 'message/rfc822', `${received.id}.eml`);
        }
        if (target.kind === 'received-attachment') {
          const meta = received?.attachments.find((a) => a.id === target.attachment);
          const bytes = meta && (await store.receivedContent.file(target.team, target.email, meta.id));
          if (!meta || !bytes) throw errors.notFound('Attachment');
          return file(bytes, meta.content_type, meta.filename ?? 'attachment');
        }
        throw errors.notFound('Download');
      },
    }),
  ];
});

/** The bytes as a download, named (RFC 6266: a plain fallback name and the UTF-8 one). */
function file(bytes: Uint8Array, contentType: string, filename: string): Response {
  const plain = filename.replace(/["\\\r\n]/g, '_');
  return new Response(Buffer.from(bytes), {
    headers: {
      'content-type': contentType,
      'content-disposition': `attachment; filename="${plain}"; filename*=UTF-8''${encodeURIComponent(filename)}`,
      'cache-control': 'private, max-age=0',
      // Received attachments carry the sender's content type: never let a browser sniff one into html.
      'x-content-type-options': 'nosniff',
      // Served from the dashboard's origin: a text/html or text/javascript file must run nothing
      // there, opened directly or loaded by a page (README "Security": downloads).
      'content-security-policy': "sandbox; default-src 'none'",
    },
  });
}
