// TEMPORARY: the Inboxes wire shapes of the pinned SDK (resend 6.38 index.d.mts), until the
// server's schemas (src/schemas/inboxes.ts) land; then these become re-exports of them.
export const FOLDERS = ['inbox', 'sent', 'archive', 'spam', 'trash'] as const;
export type Folder = (typeof FOLDERS)[number];

export interface Inbox {
  id: string;
  name: string | null;
  email_address: string;
  from_name: string | null;
  unread: number;
  last_received: string | null;
  created_at: string;
  updated_at: string;
}

export interface InboxDetail extends Inbox {
  object: 'inbox';
  domain_id: string;
  receiving_address: string | null;
  drafts: number;
}

export interface InboxLabel {
  id: string;
  name: string;
  color: string;
  created_at: string;
}

export interface ThreadLabel {
  id: string;
  name: string;
  color: string;
}

export interface InboxThread {
  id: string;
  subject: string | null;
  from: string | null;
  to: string[];
  cc: string[];
  bcc: string[];
  labels: ThreadLabel[];
  email_count: number;
  has_attachment: boolean;
  has_draft: boolean;
  read: boolean;
  received_at: string;
  folder: Folder;
  assignee?: string | null;
  matched_email_id?: string | null;
}

export interface ThreadSummary {
  object: 'inbox_thread';
  id: string;
  subject: string | null;
  folder: Folder;
  labels: ThreadLabel[];
  read: boolean;
  assignee?: string | null;
}

export interface InboxMessage {
  id: string;
  direction: 'inbound' | 'outbound';
  from: string;
  to: string[];
  cc: string[];
  bcc: string[];
  reply_to: string[];
  subject: string | null;
  message_id: string | null;
  html: string | null;
  text: string | null;
  attachments: { id: string; filename: string | null; size: number | null }[];
  read: boolean;
  received_at: string;
}

export interface InboxDraft {
  object: 'inbox_draft';
  id: string;
  type: 'standalone' | 'reply';
  to: string[] | null;
  cc: string[];
  bcc: string[];
  subject: string | null;
  html: string | null;
  text: string | null;
  thread_id: string | null;
  reply_to_email_id: string | null;
  email_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface InboxDraftItem {
  id: string;
  type: 'standalone' | 'reply';
  to: string[] | null;
  cc: string[];
  bcc: string[];
  subject: string | null;
  snippet: string | null;
  thread_id: string | null;
  reply_to_email_id: string | null;
  updated_at: string;
}

export const AGENT_ACTIONS = ['draft_reply', 'forward_thread', 'add_labels', 'assign_thread', 'mark_as_spam', 'archive', 'move_to_trash'] as const;
export const AGENT_TONES = ['concise_professional', 'concise_casual', 'expanded_professional', 'expanded_casual'] as const;

export interface InboxAgent {
  object: 'inbox_agent';
  instructions: string | null;
  tone: (typeof AGENT_TONES)[number] | null;
  actions: (typeof AGENT_ACTIONS)[number][];
}

export interface List<T> {
  object: 'list';
  has_more?: boolean;
  data: T[];
}
