// Inbound mail for receiving domains (docs/api.md §8): the message is stored raw — with the
// Return-Path and Received lines the delivering server adds (RFC 5321 §4.4) — and parsed once
// with mailparser; each team it was addressed to gets its own record (its own id, retention and
// `received_for`), and one `email.received` event (docs/api.md §14.3) in the same commit.
import type { AddressObject } from 'mailparser';
import { parseMessage } from '../mail/parse';
import type { Resolver } from '../dns/resolver';
import type { Events } from '../events';
import type { AttachmentMeta, ReceivedEmailRec, ReceivedContent, SpooledMessage, Tx } from '../store';
import { newId } from '../ids';
import { headerFields, headerObject, type HeaderLine } from '../mail/headers';
import type { SignedLinks } from '../links/signed';
import { checkAuthentication } from './authentication';
import { receivedPayload, receivedWithContent } from './received-payload';
import type { Rspamd } from '../insights/rspamd';
import { intakeReceived } from '../inboxes/intake';
import type { ThreadDeps } from '../inboxes/threads';

export interface PreparedReceived {
  /** In the unit of work: store one record per team and announce each. */
  commit(tx: Tx): Promise<ReceivedEmailRec[]>;
}

/** RFC 5322 §3.3 date-time in UTC ("+0000", not the obsolete "GMT"). */
const rfc5322Date = (d: Date) => d.toUTCString().replace(/GMT$/, '+0000');

/** RFC 5321 §4.4 trace fields; `with` per RFC 3848 (ESMTPS = over TLS). */
function traceFields(m: SpooledMessage, hostname: string): string {
  const { mail_from, remote_address, helo, tls } = m.envelope;
  const ip = remote_address.includes(':') ? `IPv6:${remote_address}` : remote_address;
  return (
    `Return-Path: <${mail_from}>\r\n` +
    `Received: from ${helo || 'unknown'} ([${ip}])\r\n\tby ${hostname} (Posthorn) with ${tls ? 'ESMTPS' : 'ESMTP'} id ${m.session_id};\r\n\t${rfc5322Date(new Date(m.received_at))}\r\n`
  );
}

const bare = (field: AddressObject | AddressObject[] | undefined): string[] => {
  const out: string[] = [];
  const walk = (list: { address?: string; group?: unknown[] }[]) => {
    for (const a of list) {
      if (a.group) walk(a.group as typeof list);
      else if (a.address) out.push(a.address);
    }
  };
  for (const obj of field === undefined ? [] : Array.isArray(field) ? field : [field]) walk(obj.value);
  return out;
};

/** Parse, check and build what to store for each team of `m.inbound` (`hostname`: smtp.hostname). */
export async function prepareReceived(
  /** `links` and `linkTtl`: the download links of `include_content` payloads (received-payload.ts); `spam`: rspamd, when configured. */
  svc: { dns: Resolver; events: Events; links: SignedLinks; linkTtl: number; spam?: Rspamd | null; inboxes?: Pick<ThreadDeps, 'hooks' | 'search'> },
  m: SpooledMessage,
  received: Uint8Array,
  hostname: string,
): Promise<PreparedReceived> {
  const bytes = Buffer.from(received.buffer, received.byteOffset, received.byteLength);
  const raw = Buffer.concat([Buffer.from(traceFields(m, hostname)), bytes]);
  const { mail_from, remote_address, helo } = m.envelope;
  const recipients = m.inbound.flatMap((i) => i.recipients);
  const [mail, authentication, spam] = await Promise.all([
    // cid: references stay as sent (html_format=cid is the default view); no text made up from html.
    parseMessage(raw, { keepCidLinks: true, skipHtmlToText: true, skipTextToHtml: true }),
    checkAuthentication(bytes, { ip: remote_address, helo, sender: mail_from, mta: hostname }, svc.dns),
    // rspamd's verdict when it is configured; bounded by spam.timeout, never a failure of the attempt.
    svc.spam ? svc.spam.check(bytes, { ip: remote_address, helo, from: mail_from, rcpt: recipients }) : null,
  ]);
  const headers = headerObject(await headerFields(mail.headerLines as HeaderLine[]));
  const common = {
    from: bare(mail.from)[0] ?? '',
    to: bare(mail.to),
    cc: bare(mail.cc),
    bcc: bare(mail.bcc),
    reply_to: bare(mail.replyTo),
    subject: mail.subject ?? '',
    message_id: mail.messageId ?? null,
    authentication,
    ...(spam ? { spam } : {}),
    envelope: m.envelope,
    size: raw.byteLength,
  };
  const html = mail.html || null;
  const text = mail.text || null;

  return {
    async commit(tx) {
      const saved: ReceivedEmailRec[] = [];
      for (const { team_id: team, domain_id, recipients } of m.inbound) {
        const files: Record<string, Uint8Array> = {};
        const attachments: AttachmentMeta[] = mail.attachments.map((att) => {
          const id = newId();
          files[id] = att.content;
          return {
            id,
            filename: att.filename ?? null,
            content_type: att.contentType,
            // Explicitly inline, or an undeclared part of multipart/related (an embedded image).
            content_disposition: att.contentDisposition === 'inline' || (!att.contentDisposition && att.related) ? 'inline' : 'attachment',
            content_id: att.cid ?? null,
            size: att.content.byteLength,
          };
        });
        const rec: ReceivedEmailRec = { id: newId(), team_id: team, created_at: m.received_at, ...common, received_for: recipients, attachments };
        const content: ReceivedContent = { raw, html, text, headers, files };
        tx.receivedEmails.put(rec);
        tx.receivedContent.put(team, rec.id, content);
        // Counted under the receiving domain of its first recipient here (metrics, `received`),
        // and sent to the webhooks of that domain; with the message to those that ask for it.
        const withContent = () => receivedWithContent(rec, content, svc.links, svc.linkTtl);
        await svc.events.other(tx, team, 'email.received', rec.id, receivedPayload(rec), { domain_id, withContent });
        // Mail to an inbox joins its threads in this same commit (docs/api.md §25.4).
        await intakeReceived({ events: svc.events, ...svc.inboxes }, tx, rec, content);
        saved.push(rec);
      }
      return saved;
    },
  };
}
