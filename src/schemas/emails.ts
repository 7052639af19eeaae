// Emails on the wire (docs/api.md §7): the send request every way in hands the sending core (POST
// /emails, each batch item, SMTP submission, broadcasts, automations: src/sending/submit.ts
// `prepare` checks it here first), and what the email routes answer. The types of fields are
// checked here; what needs the field's meaning — addresses, header names, base64, times, whether
// `from`/`to`/`subject` are given once a template has filled them in — is src/sending/validate.ts.
import { Kind, Type, TypeRegistry } from '@sinclair/typebox';
import { EMAIL_STATUSES, type EmailStatus } from '../event-catalogue';
import { AnyRecord, ExportQuery, Id, List, Nullable, PageQuery, Timestamp, type Static } from './common';
import { BounceClassName } from './deliverability';
import { StreamedBase64 } from './streamed-base64';

const invalid = (field: string, why: string) => `Invalid \`${field}\` field: ${why}`;

/** A field that may be left out or null (null reads as "not given", docs/api.md §1.4). */
const Maybe = <S extends Parameters<typeof Nullable>[0]>(s: S, field: string, why: string) => Type.Optional(Nullable(s, { error: invalid(field, why) }));

const Text = (field: string) => Maybe(Type.String(), field, 'must be a string.');

/** `to`, `cc`, `bcc`, `reply_to`: one address or several (docs/api.md §1.4). */
const Addresses = (field: string) => Maybe(Type.Union([Type.String(), Type.Array(Type.String())]), field, 'must be a string or an array of strings.');

/** One email's attachments may total this much after base64 encoding (docs/api.md §7.1; src/sending/validate.ts counts it). */
export const MAX_ATTACHMENTS_BASE64 = 40 * 1024 * 1024;
/** The most bytes one Buffer attachment may hold: as many as make the limit above once base64-encoded. */
export const MAX_BUFFER_BYTES = (MAX_ATTACHMENTS_BASE64 / 4) * 3;

// The bytes of a Buffer are checked by a kind of their own rather than as an array of integers: a
// TypeBox array is copied element by element when the body is cleaned, and checked again by
// TypeBox's interpreter at each union on the way — for the 14 million bytes a 50 MB body can hold,
// 0.7 s of the event loop and a second copy of the array (112 MB); this kind checks them in place,
// in 0.05 s (cleaning leaves a kind it does not know as it is).
TypeRegistry.Set<{ maxItems: number }>('Bytes', (schema, value) => {
  if (!Array.isArray(value) || value.length > schema.maxItems) return false;
  for (let i = 0; i < value.length; i++) {
    const b = value[i];
    if (typeof b !== 'number' || !Number.isInteger(b) || b < 0 || b > 255) return false;
  }
  return true;
});
const onAttachment = { errorName: 'invalid_attachment' };

// Base64 `content`: a string, or — in a large body parsed as it arrived — the same string already
// decoded (streamed-base64.ts), which is checked as the string it was. On the wire, a string.
TypeRegistry.Set('Base64Text', (_schema, value) => typeof value === 'string' || value instanceof StreamedBase64);
const Base64Text = Type.Unsafe<string | StreamedBase64>({ [Kind]: 'Base64Text', type: 'string' });

/**
 * A Node Buffer as `JSON.stringify` writes it, `{"type":"Buffer","data":[…bytes]}`: what the SDK
 * before 6.37, resend-mcp and nodemailer transports send for a Buffer's content (docs/api.md §2 item 16).
 */
const BufferContent = Type.Object({
  type: Type.Literal('Buffer', { error: 'Invalid `{field}` field: a Buffer attachment has `"type": "Buffer"`.', ...onAttachment }),
  data: Type.Unsafe<number[]>({
    [Kind]: 'Bytes',
    type: 'array',
    items: { type: 'integer', minimum: 0, maximum: 255 },
    maxItems: MAX_BUFFER_BYTES,
    description: 'The bytes, each an integer from 0 to 255',
    error: `Invalid \`{field}\` field: a Buffer's \`data\` must be an array of bytes (integers from 0 to 255), at most ${MAX_BUFFER_BYTES} of them (40 MB after base64 encoding).`,
    ...onAttachment,
  }),
});

const Attachment = Type.Object(
  {
    filename: Text('{field}'),
    content_type: Text('{field}'),
    // SDK 4.x–5.x send `inline_content_id`, 6.x `content_id` (docs/api.md §2 item 6).
    content_id: Text('{field}'),
    inline_content_id: Text('{field}'),
    content: Type.Optional(
      Type.Union([Base64Text, BufferContent, Type.Null()], {
        error: 'Invalid `{field}` field: it must be a base64 string or a Buffer (`{"type":"Buffer","data":[…]}`).',
        ...onAttachment,
      }),
    ),
    path: Type.Optional(Nullable(Type.String(), { error: 'Invalid `{field}` field: it must be an http or https URL.', errorName: 'invalid_attachment' })),
  },
  { error: 'Invalid `{field}` field: must be an object.' },
);

/** A send: POST /emails, and each item of POST /emails/batch (docs/api.md §7.1, §7.2). */
export const SendEmailRequest = Type.Object(
  {
    from: Text('from'),
    to: Addresses('to'),
    subject: Text('subject'),
    cc: Addresses('cc'),
    bcc: Addresses('bcc'),
    reply_to: Addresses('reply_to'),
    html: Text('html'),
    text: Text('text'),
    /** Never reaches a server from the SDK (it renders React to html), but a plain client may send it. */
    react: Type.Optional(Type.Unknown()),
    headers: Maybe(AnyRecord(Type.Unknown()), 'headers', 'must be an object of header names and string values.'),
    tags: Maybe(Type.Array(Type.Unknown()), 'tags', 'must be an array of `{ name, value }` objects.'),
    scheduled_at: Text('scheduled_at'),
    attachments: Maybe(Type.Array(Attachment), 'attachments', 'must be an array.'),
    /** A published template and its variables (docs/api.md §20.4): checked by src/templates. */
    template: Type.Optional(Type.Unknown()),
    topic_id: Maybe(Type.String(), 'topic_id', 'must be the id of a topic.'),
  },
  { description: 'docs/api.md §7.1' },
);
export type SendEmailRequest = Static<typeof SendEmailRequest>;

export const SendEmailResponse = Type.Object({ id: Id });

/** POST /emails/batch: up to 100 sends (docs/api.md §7.2); each item is a `SendEmailRequest`, checked on its own. */
export const BatchRequest = Type.Array(Type.Unknown(), { minItems: 1, maxItems: 100, error: 'The batch must contain between 1 and 100 emails.' });

export const BatchResponse = Type.Union([
  Type.Object({ data: Type.Array(SendEmailResponse) }),
  /** `x-batch-validation: permissive`: the items refused, by index. */
  Type.Object({ data: Type.Array(SendEmailResponse), errors: Type.Array(Type.Object({ index: Type.Integer(), message: Type.String() })) }),
]);

/** `last_event` (docs/api.md §7.8): a status of the event catalogue. */
const Status = Type.Unsafe<EmailStatus>(
  Type.Union(
    EMAIL_STATUSES.map((s) => Type.Literal(s)),
    { description: 'The last event: docs/api.md §7.8' },
  ),
);

const summaryFields = {
  id: Id,
  message_id: Type.String(),
  to: Type.Array(Type.String()),
  from: Type.String(),
  created_at: Timestamp,
  subject: Type.String(),
  bcc: Type.Array(Type.String()),
  cc: Type.Array(Type.String()),
  reply_to: Type.Array(Type.String()),
  last_event: Status,
  scheduled_at: Nullable(Timestamp),
};

/** An item of GET /emails. */
export const EmailSummary = Type.Object(summaryFields);
export type EmailSummary = Static<typeof EmailSummary>;

/** Posthorn's filters of the sent emails (docs/api.md §7.4): the list's and the export's. */
const EmailFilters = Type.Object({
  status: Type.Optional(Type.String({ description: 'Posthorn: one or more `last_event` values, comma-separated' })),
  q: Type.Optional(Type.String({ description: 'Posthorn: text in a recipient, the sender or the subject (at most 200 characters)' })),
  since: Type.Optional(Type.String({ description: 'Posthorn: ISO 8601 lower bound on `created_at`' })),
  until: Type.Optional(Type.String({ description: 'Posthorn: ISO 8601 upper bound on `created_at`' })),
  tag: Type.Optional(Type.String({ description: 'Posthorn: `name:value`, emails with this tag; `name`, with a tag of this name' })),
});
export type EmailFilters = Static<typeof EmailFilters>;

export const EmailListQuery = Type.Composite([PageQuery, EmailFilters]);

/** GET /emails/export (docs/api.md §4.1). */
export const EmailExportQuery = Type.Composite([EmailFilters, ExportQuery]);

/** One SMTP transaction for some recipients of an email (Posthorn, docs/api.md §7.3). */
export const DeliveryAttempt = Type.Object({
  at: Timestamp,
  domain: Type.String(),
  host: Nullable(Type.String()),
  ip: Type.Optional(Nullable(Type.String())),
  tls: Nullable(Type.Boolean()),
  tls_version: Type.Optional(Nullable(Type.String())),
  tls_cipher: Type.Optional(Nullable(Type.String())),
  mta_sts: Type.Optional(Nullable(Type.Union([Type.Literal('enforce'), Type.Literal('testing')]))),
  duration_ms: Type.Number(),
  results: Type.Array(
    Type.Object({
      recipient: Type.String(),
      code: Type.Number(),
      enhanced_code: Type.Optional(Nullable(Type.String())),
      reply: Type.String(),
      class: Type.Optional(
        Nullable(BounceClassName, { description: 'The bounce class of a reply that is not a delivery (docs/api.md §7.3); null for a delivery' }),
      ),
    }),
  ),
  /** Only on simulated attempts: the replies of sandbox addresses, no connection made (docs/api.md §7.11). */
  simulated: Type.Optional(Type.Literal(true)),
  /** Posthorn: the sending IP of `delivery.ips` the attempt was bound to; absent when the kernel chose. */
  sending_ip: Type.Optional(Type.String()),
  /** Posthorn: beside `sending_ip`, the shaping site the attempt went to (docs/mail.md §3.1). */
  sending_site: Type.Optional(Type.String()),
});
export type DeliveryAttempt = Static<typeof DeliveryAttempt>;

/** GET /emails/{id}. */
export const Email = Type.Object({
  object: Type.Literal('email'),
  ...summaryFields,
  html: Nullable(Type.String()),
  text: Nullable(Type.String()),
  tags: Type.Array(Type.Object({ name: Type.String(), value: Type.String() })),
  topic_id: Nullable(Id),
  /** Posthorn: every delivery attempt. */
  attempts: Type.Array(DeliveryAttempt),
  /** Posthorn: the recipients still queued and what holds them (null: nothing queued). */
  queue: Nullable(
    Type.Object({
      recipients: Type.Array(Type.String()),
      held: Nullable(Type.Union([Type.Literal('email'), Type.Literal('destination')])),
    }),
  ),
});
export type Email = Static<typeof Email>;

/**
 * `data` of an entry of an email's event log: the event's webhook payload (docs/api.md §14.3). The
 * fields a reader picks out are named here; the others (`email_id`, `from`, `subject`, `tags`, …)
 * are there too.
 */
const EmailEventData = Type.Object(
  {
    /** The recipients the event concerns. */
    to: Type.Optional(Type.Array(Type.String())),
    bounce: Type.Optional(Type.Object({ type: Type.String(), subType: Type.String(), message: Type.String() })),
    click: Type.Optional(Type.Object({ link: Type.String() })),
  },
  { description: 'The webhook payload of the event (docs/api.md §14.3)' },
);

/** One entry of an email's event log (Posthorn, docs/api.md §7.3). */
export const EmailEvent = Type.Object({
  object: Type.Literal('event'),
  id: Type.String(),
  type: Type.String(),
  created_at: Timestamp,
  data: EmailEventData,
  automated: Nullable(Type.String()),
});
export type EmailEvent = Static<typeof EmailEvent>;

export const EmailEvents = List(EmailEvent);

export const RescheduleRequest = Type.Object({ scheduled_at: Type.String({ error: 'The `scheduled_at` field must be a string.' }) });

export const ShareRequest = Type.Object({ expires_in: Type.Optional(Type.Unknown({ description: 'How long the link lives: docs/api.md §7.10' })) });
export const ShareResponse = Type.Object({ object: Type.Literal('email'), id: Id, url: Type.String() });

/** An attachment of a sent or received email, with its signed download link (docs/api.md §7.7, §8). */
export const EmailAttachment = Type.Object({
  object: Type.Literal('attachment'),
  id: Id,
  filename: Type.Optional(Type.String()),
  size: Type.Number(),
  content_type: Type.String(),
  content_disposition: Type.Union([Type.Literal('attachment'), Type.Literal('inline')]),
  content_id: Type.Optional(Type.String()),
  download_url: Type.String(),
  expires_at: Timestamp,
});
