// Inboxes (docs/api.md §25): shared team inboxes on receiving domains — the inbox, its labels, its
// threads, the messages of a thread (inbound and sent) and its drafts. Every record carries its
// team and its inbox; a thread's messages are found by `thread`, a message by its Message-ID within
// its inbox (RFC 5322 §3.6.4 threading, src/inboxes/threading.ts).
import type { Rec } from './interface';

/** The folders a thread can be in (the SDK's INBOX_MESSAGE_FOLDERS); `sent` only by sending. */
export const INBOX_FOLDERS = ['inbox', 'archive', 'spam', 'sent', 'trash'] as const;
export type InboxFolder = (typeof INBOX_FOLDERS)[number];

export const INBOX_AGENT_ACTIONS = ['draft_reply', 'forward_thread', 'add_labels', 'assign_thread', 'mark_as_spam', 'archive', 'move_to_trash'] as const;
export type InboxAgentAction = (typeof INBOX_AGENT_ACTIONS)[number];
export const INBOX_AGENT_TONES = ['concise_professional', 'concise_casual', 'expanded_professional', 'expanded_casual'] as const;
export type InboxAgentTone = (typeof INBOX_AGENT_TONES)[number];

/** The Inbox Agent's settings of an inbox (docs/api.md §25.7); running it is src/inboxes/agent's. */
export interface InboxAgentSettings {
  instructions: string | null;
  tone: InboxAgentTone | null;
  actions: InboxAgentAction[];
}

export interface InboxRec extends Rec {
  /** The address mail to it arrives at, lowercase (unique across teams). */
  email_address: string;
  domain_id: string;
  name: string;
  from_name: string | null;
  agent: InboxAgentSettings;
  updated_at: string;
}

export interface InboxLabelRec extends Rec {
  inbox_id: string;
  name: string;
  /** #RRGGBB. */
  color: string;
}

export interface InboxThreadRec extends Rec {
  inbox_id: string;
  /** The subject of its first message. */
  subject: string | null;
  /** The subject without reply and forward prefixes, lowercase (threading.ts `subjectKey`). */
  subject_key: string;
  folder: InboxFolder;
  /** Label ids, in the order they were added. */
  labels: string[];
  /** Every inbound message read. */
  read: boolean;
  /** The teammate (an address) it is assigned to, or null. */
  assignee: string | null;
  /** Every address that wrote or was written to in it, lowercase (threading by subject and participants). */
  participants: string[];
  /** Of its latest message. */
  from: string | null;
  to: string[];
  cc: string[];
  bcc: string[];
  email_count: number;
  unread_count: number;
  has_attachment: boolean;
  /** Drafts of the thread not yet sent. */
  draft_count: number;
  /** When its latest message arrived or was sent. */
  last_at: string;
  /** When its latest inbound message arrived; null: none yet. */
  last_received_at: string | null;
  /** It holds a message sent from the inbox. */
  has_sent: boolean;
  /** A short text of its latest message. */
  snippet: string | null;
}

export interface InboxMessageAttachment {
  id: string;
  filename: string | null;
  content_type: string | null;
  size: number | null;
}

/** One message of a thread: a received email (inbound) or an email sent from the inbox (outbound). */
export interface InboxMessageRec extends Rec {
  inbox_id: string;
  thread_id: string;
  direction: 'inbound' | 'outbound';
  /** The received email (GET /emails/receiving/{id}) or the sent one (GET /emails/{id}) it is. */
  source_id: string;
  from: string;
  to: string[];
  cc: string[];
  bcc: string[];
  reply_to: string[];
  subject: string | null;
  /** `Message-ID:` with its angle brackets. */
  message_id: string | null;
  /** Its `References:` chain (RFC 5322 §3.6.4), angle brackets kept, oldest first. */
  references: string[];
  /** The bodies are kept with the message: an inbox keeps its mail beyond retention.days. */
  html: string | null;
  text: string | null;
  attachments: InboxMessageAttachment[];
  read: boolean;
  received_at: string;
}

export interface InboxDraftFile {
  id: string;
  filename: string;
  content_type: string;
  /** Base64. */
  content: string;
  size: number;
}

export interface InboxDraftRec extends Rec {
  inbox_id: string;
  type: 'standalone' | 'reply';
  to: string[] | null;
  cc: string[];
  bcc: string[];
  subject: string | null;
  html: string | null;
  text: string | null;
  thread_id: string | null;
  reply_to_email_id: string | null;
  /** The email it became once sent; a sent draft is gone from the lists. */
  email_id: string | null;
  attachments: InboxDraftFile[];
  updated_at: string;
}
