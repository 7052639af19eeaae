// Inboxes on the wire (docs/api.md §25): inboxes, labels, threads, a thread's emails, drafts and the
// agent's settings, as the SDK's `resend.inboxes` sends and reads them. Types and enums are checked
// here; what needs meaning — an address on a receiving domain, lengths, colours, whether a record
// exists — is src/inboxes'.
import { Type } from '@sinclair/typebox';
import { AnyRecord, Id, Nullable, Timestamp, UuidParam, type Static } from './common';

const FOLDERS = ['inbox', 'archive', 'spam', 'sent', 'trash'] as const;
const MOVE_FOLDERS = ['inbox', 'archive', 'spam', 'trash'] as const;
const ACTIONS = ['draft_reply', 'forward_thread', 'add_labels', 'assign_thread', 'mark_as_spam', 'archive', 'move_to_trash'] as const;
const TONES = ['concise_professional', 'concise_casual', 'expanded_professional', 'expanded_casual'] as const;

const Str = (field: string) => Type.String({ error: `Invalid \`${field}\` field: must be a string.` });
const Opt = (field: string) => Type.Optional(Str(field));
const OptNullable = (field: string) => Type.Optional(Nullable(Str(field), { error: `Invalid \`${field}\` field: must be a string or null.` }));
/** A string or an array of strings (the SDK sends either). */
const Addresses = (field: string) =>
  Type.Union([Type.String(), Type.Array(Type.String())], { error: `Invalid \`${field}\` field: must be an email address or an array of them.` });
const Folder = Type.Union(
  FOLDERS.map((f) => Type.Literal(f)),
  { error: 'Invalid `{field}` field: must be one of `inbox`, `archive`, `spam`, `sent`, `trash`.' },
);
const MoveFolder = Type.Union(
  MOVE_FOLDERS.map((f) => Type.Literal(f)),
  { error: 'Invalid `folder` field: must be one of `inbox`, `archive`, `spam`, `trash`.' },
);
/** Custom headers of a reply, forward or draft send; In-Reply-To, References and Reply-To are refused (src/inboxes/send.ts). */
const Headers = Type.Optional(Nullable(AnyRecord(Type.Unknown()), { error: 'Invalid `headers` field: must be an object of header names and string values.' }));
/** Attachments as on POST /emails (docs/api.md §7.1): checked by the sending core. */
const SendAttachments = Type.Optional(Nullable(Type.Array(Type.Unknown()), { error: 'Invalid `attachments` field: must be an array.' }));

// ---- Path parameters ---------------------------------------------------------------------------

/** `{inbox}`: the inbox's id or its address (the SDK's `inboxId` or `emailAddress`). */
export const InboxParams = Type.Object({ inbox: Type.String({ description: 'An inbox id, or its address' }) });
export const LabelParams = Type.Object({ inbox: InboxParams.properties.inbox, label: UuidParam('label') });
export const DraftParams = Type.Object({ inbox: InboxParams.properties.inbox, draft: UuidParam('draft') });
export const ThreadParams = Type.Object({ inbox: InboxParams.properties.inbox, thread: UuidParam('thread') });
export const ThreadEmailParams = Type.Object({ inbox: InboxParams.properties.inbox, thread: UuidParam('thread'), email: UuidParam('email') });
export const ThreadLabelParams = Type.Object({ inbox: InboxParams.properties.inbox, thread: UuidParam('thread'), label: UuidParam('label') });

// ---- Inboxes -----------------------------------------------------------------------------------

export const CreateInboxRequest = Type.Object({
  email_address: Nullable(Str('email_address'), { error: 'Invalid `email_address` field: must be a string.' }),
  name: OptNullable('name'),
  forwarding: Type.Optional(Nullable(Type.Boolean({ error: 'Invalid `forwarding` field: must be a boolean.' }))),
  from_name: OptNullable('from_name'),
});
export type CreateInboxRequest = Static<typeof CreateInboxRequest>;

export const UpdateInboxRequest = Type.Object({ name: OptNullable('name'), from_name: OptNullable('from_name') });
export type UpdateInboxRequest = Static<typeof UpdateInboxRequest>;

/** A list item (the SDK's `Inbox`). */
export const InboxSummary = Type.Object({
  id: Id,
  name: Nullable(Type.String()),
  email_address: Type.String(),
  from_name: Nullable(Type.String()),
  unread: Type.Integer({ description: 'Unread threads in `inbox`' }),
  last_received: Nullable(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type InboxSummary = Static<typeof InboxSummary>;

/** GET /inboxes/{inbox}, and `inbox` in inbox.created and inbox.updated. */
export const Inbox = Type.Object({
  object: Type.Literal('inbox'),
  id: Id,
  name: Type.String(),
  email_address: Type.String(),
  domain_id: Id,
  receiving_address: Nullable(Type.String({ description: 'Posthorn: always null (no forwarding addresses: the domain receives)' })),
  from_name: Nullable(Type.String()),
  unread: Type.Integer(),
  drafts: Type.Integer(),
  last_received: Nullable(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type Inbox = Static<typeof Inbox>;

// ---- Labels ------------------------------------------------------------------------------------

export const CreateLabelRequest = Type.Object({
  name: Nullable(Str('name'), { error: 'Invalid `name` field: must be a string.' }),
  color: OptNullable('color'),
});
export type CreateLabelRequest = Static<typeof CreateLabelRequest>;
export const UpdateLabelRequest = Type.Object({ name: Opt('name'), color: Opt('color') });
export type UpdateLabelRequest = Static<typeof UpdateLabelRequest>;

export const InboxLabel = Type.Object({ id: Id, name: Type.String(), color: Type.String(), created_at: Timestamp });
export type InboxLabel = Static<typeof InboxLabel>;
export const ThreadLabel = Type.Object({ id: Id, name: Type.String(), color: Type.String() });
export type ThreadLabel = Static<typeof ThreadLabel>;
export const LabelList = Type.Object({ object: Type.Literal('list'), data: Type.Array(InboxLabel) });
export const ThreadLabelList = Type.Object({ object: Type.Literal('list'), data: Type.Array(ThreadLabel) });
export type ThreadLabelList = Static<typeof ThreadLabelList>;

/** POST and PUT /inboxes/{inbox}/threads/{thread}/labels: 1 to 10 label ids (PUT: 0 to 10). */
export const ThreadLabelsRequest = Type.Object({
  labels: Type.Array(Type.String(), { maxItems: 10, error: 'Invalid `labels` field: must be an array of at most 10 label ids.' }),
});

// ---- Threads -----------------------------------------------------------------------------------

const Bool = (field: string) =>
  Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')], { error: `The \`${field}\` parameter must be \`true\` or \`false\`.` }));

/** GET /inboxes/{inbox}/threads: comma-separated `folders` and `labels` (the SDK joins arrays with commas). */
export const ThreadListQuery = Type.Object({
  folders: Opt('folders'),
  labels: Opt('labels'),
  read: Bool('read'),
  limit: Opt('limit'),
  after: Opt('after'),
  before: Opt('before'),
});
export type ThreadListQuery = Static<typeof ThreadListQuery>;

/** GET /inboxes/{inbox}/threads/search. */
export const ThreadSearchQuery = Type.Composite([
  ThreadListQuery,
  Type.Object({
    query: Opt('query'),
    from: Opt('from'),
    to: Opt('to'),
    cc: Opt('cc'),
    bcc: Opt('bcc'),
    has_attachment: Bool('has_attachment'),
    start_date: Opt('start_date'),
    end_date: Opt('end_date'),
  }),
]);
export type ThreadSearchQuery = Static<typeof ThreadSearchQuery>;

export const UpdateThreadRequest = Type.Object({
  read: Type.Optional(Type.Boolean({ error: 'Invalid `read` field: must be a boolean.' })),
  folder: Type.Optional(MoveFolder),
  /** Posthorn: assign the thread to a teammate (an address) or null; the SDK has no field for it yet (docs/api.md §25.4). */
  assignee: Type.Optional(Nullable(Type.String(), { error: 'Invalid `assignee` field: must be an email address or null.' })),
});
export type UpdateThreadRequest = Static<typeof UpdateThreadRequest>;

const threadFields = {
  id: Id,
  subject: Nullable(Type.String()),
  from: Nullable(Type.String()),
  to: Type.Array(Type.String()),
  cc: Type.Array(Type.String()),
  bcc: Type.Array(Type.String()),
  labels: Type.Array(ThreadLabel),
  email_count: Type.Integer(),
  has_attachment: Type.Boolean(),
  has_draft: Type.Boolean(),
  read: Type.Boolean(),
  received_at: Timestamp,
  folder: Folder,
  /** Posthorn: the teammate it is assigned to. */
  assignee: Nullable(Type.String()),
  /** Posthorn: a short text of its latest message. */
  snippet: Nullable(Type.String()),
};
export const InboxThread = Type.Object(threadFields);
export type InboxThread = Static<typeof InboxThread>;
export const InboxThreadSearchResult = Type.Object({ ...threadFields, matched_email_id: Nullable(Id) });
export type InboxThreadSearchResult = Static<typeof InboxThreadSearchResult>;

/** GET and PATCH /inboxes/{inbox}/threads/{thread}, and `thread` in webhook payloads. */
export const InboxThreadSummary = Type.Object({
  object: Type.Literal('inbox_thread'),
  id: Id,
  subject: Nullable(Type.String()),
  folder: Folder,
  labels: Type.Array(ThreadLabel),
  read: Type.Boolean(),
  /** Posthorn: the teammate it is assigned to. */
  assignee: Nullable(Type.String()),
});
export type InboxThreadSummary = Static<typeof InboxThreadSummary>;

// ---- A thread's emails -------------------------------------------------------------------------

export const InboxMessageAttachment = Type.Object({ id: Id, filename: Nullable(Type.String()), size: Nullable(Type.Integer()) });
export const InboxMessage = Type.Object({
  id: Id,
  direction: Type.Union([Type.Literal('inbound'), Type.Literal('outbound')]),
  from: Type.String(),
  to: Type.Array(Type.String()),
  cc: Type.Array(Type.String()),
  bcc: Type.Array(Type.String()),
  reply_to: Type.Array(Type.String()),
  subject: Nullable(Type.String()),
  message_id: Nullable(Type.String()),
  html: Nullable(Type.String()),
  text: Nullable(Type.String()),
  attachments: Type.Array(InboxMessageAttachment),
  read: Type.Boolean(),
  received_at: Timestamp,
});
export type InboxMessage = Static<typeof InboxMessage>;

export const ReplyRequest = Type.Object({
  cc: Type.Optional(Addresses('cc')),
  bcc: Type.Optional(Addresses('bcc')),
  html: Opt('html'),
  text: Opt('text'),
  subject: Opt('subject'),
  reply_all: Type.Optional(Type.Boolean({ error: 'Invalid `reply_all` field: must be a boolean.' })),
  attachments: SendAttachments,
  headers: Headers,
});
export type ReplyRequest = Static<typeof ReplyRequest>;

export const ForwardRequest = Type.Object({
  to: Nullable(Addresses('to'), { error: 'Invalid `to` field: must be an email address or an array of them.' }),
  cc: Type.Optional(Addresses('cc')),
  bcc: Type.Optional(Addresses('bcc')),
  html: Opt('html'),
  text: Opt('text'),
  subject: Opt('subject'),
  attachments: SendAttachments,
  headers: Headers,
});
export type ForwardRequest = Static<typeof ForwardRequest>;

export const SentResponse = Type.Object({ id: Id });

// ---- Drafts ------------------------------------------------------------------------------------

const NullableAddresses = (field: string) =>
  Type.Optional(Nullable(Addresses(field), { error: `Invalid \`${field}\` field: must be an email address, an array of them, or null.` }));
/** A draft's file: `content` (base64) with `content_type`, or a `path` fetched when the request is made. */
const DraftAttachment = Type.Object(
  {
    filename: Str('{field}'),
    content: Type.Optional(Nullable(Type.String({ error: 'Invalid `{field}` field: must be a base64 string.' }))),
    content_type: Type.Optional(Nullable(Type.String({ error: 'Invalid `{field}` field: must be a string.' }))),
    path: Type.Optional(Nullable(Type.String({ error: 'Invalid `{field}` field: must be an http or https URL.' }))),
  },
  { error: 'Invalid `{field}` field: must be an object with `filename` and `content` or `path`.' },
);
const draftContent = {
  to: NullableAddresses('to'),
  cc: NullableAddresses('cc'),
  bcc: NullableAddresses('bcc'),
  subject: OptNullable('subject'),
  text: OptNullable('text'),
  html: OptNullable('html'),
};
export const CreateDraftRequest = Type.Object({
  ...draftContent,
  attachments: Type.Optional(Nullable(Type.Array(DraftAttachment), { error: 'Invalid `attachments` field: must be an array.' })),
  thread_id: Type.Optional(Nullable(Type.String({ error: 'Invalid `thread_id` field: must be a thread id.' }))),
  reply_to_email_id: Type.Optional(Nullable(Type.String({ error: 'Invalid `reply_to_email_id` field: must be an email id of the thread.' }))),
});
export type CreateDraftRequest = Static<typeof CreateDraftRequest>;
export const UpdateDraftRequest = Type.Object({
  ...draftContent,
  attachments: Type.Optional(Nullable(Type.Array(DraftAttachment), { error: 'Invalid `attachments` field: must be an array or null.' })),
});
export type UpdateDraftRequest = Static<typeof UpdateDraftRequest>;
export type DraftAttachmentInput = Static<typeof DraftAttachment>;

export const SendDraftRequest = Type.Object({ headers: Headers });
export type SendDraftRequest = Static<typeof SendDraftRequest>;

export const InboxDraftAttachment = Type.Object({ id: Id, filename: Type.String(), content_type: Type.String(), size: Type.Integer() });
const draftFields = {
  id: Id,
  type: Type.Union([Type.Literal('standalone'), Type.Literal('reply')]),
  to: Nullable(Type.Array(Type.String())),
  cc: Type.Array(Type.String()),
  bcc: Type.Array(Type.String()),
  subject: Nullable(Type.String()),
  thread_id: Nullable(Id),
  reply_to_email_id: Nullable(Id),
  updated_at: Timestamp,
  attachments: Type.Array(InboxDraftAttachment),
};
export const InboxDraft = Type.Object({
  object: Type.Literal('inbox_draft'),
  ...draftFields,
  html: Nullable(Type.String()),
  text: Nullable(Type.String()),
  email_id: Nullable(Id),
  created_at: Timestamp,
});
export type InboxDraft = Static<typeof InboxDraft>;
export const InboxDraftListItem = Type.Object({ ...draftFields, snippet: Nullable(Type.String()) });
export type InboxDraftListItem = Static<typeof InboxDraftListItem>;

// ---- The agent's settings ----------------------------------------------------------------------

export const InboxAgent = Type.Object({
  object: Type.Literal('inbox_agent'),
  instructions: Nullable(Type.String()),
  tone: Nullable(Type.Union(TONES.map((t) => Type.Literal(t)))),
  actions: Type.Array(Type.Union(ACTIONS.map((a) => Type.Literal(a)))),
});
export type InboxAgent = Static<typeof InboxAgent>;

export const UpdateAgentRequest = Type.Object({
  instructions: Type.Optional(Nullable(Type.String(), { error: 'Invalid `instructions` field: must be a string or null.' })),
  tone: Type.Optional(
    Nullable(Type.Union(TONES.map((t) => Type.Literal(t))), {
      error: `Invalid \`tone\` field: must be one of ${TONES.map((t) => `\`${t}\``).join(', ')}, or null.`,
    }),
  ),
  actions: Type.Optional(
    Type.Array(Type.Union(ACTIONS.map((a) => Type.Literal(a))), {
      error: `Invalid \`actions\` field: must be an array of ${ACTIONS.map((a) => `\`${a}\``).join(', ')}.`,
    }),
  ),
});
export type UpdateAgentRequest = Static<typeof UpdateAgentRequest>;
