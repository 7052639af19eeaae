// Received (inbound) emails on the wire (docs/api.md §8).
import { Type } from '@sinclair/typebox';
import { Id, Nullable, Timestamp, type Static } from './common';
import { OneOf } from './literals';
import { SpamVerdict } from './insights';

const Verdict = OneOf(['pass', 'fail', 'gray', 'processing_failed', 'unknown']);
export type Verdict = Static<typeof Verdict>;

/** An attachment as the received email lists it (docs/api.md §8). */
export const ReceivedAttachmentMeta = Type.Object({
  id: Id,
  filename: Nullable(Type.String()),
  content_type: Type.String(),
  content_disposition: Type.Union([Type.Literal('attachment'), Type.Literal('inline')]),
  content_id: Nullable(Type.String()),
  size: Type.Number(),
});

const summaryFields = {
  id: Id,
  to: Type.Array(Type.String()),
  from: Type.String(),
  created_at: Timestamp,
  subject: Type.String(),
  bcc: Type.Array(Type.String()),
  cc: Type.Array(Type.String()),
  reply_to: Type.Array(Type.String()),
  received_for: Type.Array(Type.String()),
  message_id: Nullable(Type.String()),
  /** Posthorn: the SPF, DKIM and DMARC verdicts on receipt. */
  authentication: Nullable(Type.Object({ spf: Verdict, dkim: Verdict, dmarc: Verdict })),
  attachments: Type.Array(ReceivedAttachmentMeta),
};

/** An item of GET /emails/receiving. */
export const ReceivedEmailSummary = Type.Object(summaryFields);
export type ReceivedEmailSummary = Static<typeof ReceivedEmailSummary>;

export const HtmlFormat = Type.Union([Type.Literal('cid'), Type.Literal('data_uri')], {
  error: 'The `html_format` parameter must be `cid` or `data_uri`.',
});

export const ReceivedEmailQuery = Type.Object({ html_format: Type.Optional(HtmlFormat) });

/** GET /emails/receiving/{id}. */
export const ReceivedEmail = Type.Object({
  object: Type.Literal('email'),
  ...summaryFields,
  html: Nullable(Type.String()),
  html_format: HtmlFormat,
  text: Nullable(Type.String()),
  headers: Type.Record(Type.String(), Type.String()),
  /** Posthorn: rspamd's verdict on receipt; null when it was not scored (`spam.rspamd_url` unset then). */
  spam: Nullable(SpamVerdict),
  /** A signed link to the message as received (an .eml file). */
  raw: Type.Object({ download_url: Type.String(), expires_at: Timestamp }),
});
export type ReceivedEmail = Static<typeof ReceivedEmail>;
