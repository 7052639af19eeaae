// Event kinds a webhook may subscribe to: every kind Resend defines (the SDK's `WebhookEvent`,
// docs/api.md §14.2). Posthorn emits only some of them; the others are accepted and stored,
// and simply never fire.
export const WEBHOOK_EVENT_KINDS: readonly string[] = [
  'email.sent',
  'email.scheduled',
  'email.delivered',
  'email.delivery_delayed',
  'email.complained',
  'email.bounced',
  'email.opened',
  'email.clicked',
  'email.received',
  'email.failed',
  'email.suppressed',
  'contact.created',
  'contact.updated',
  'contact.deleted',
  'contact.topics.updated',
  'domain.created',
  'domain.updated',
  'domain.deleted',
  'suppression.added',
  'suppression.removed',
  'topic.created',
  'topic.updated',
  'topic.deleted',
  'inbox.created',
  'inbox.updated',
  'inbox.deleted',
  'inbox.thread.created',
  'inbox.thread.folder.updated',
  'inbox.thread.assigned',
  'inbox.thread.unassigned',
  'inbox.thread.labels.updated',
  'inbox.email.received',
  'inbox.email.sent',
  'inbox.draft.created',
  'inbox.draft.updated',
  'inbox.draft.sent',
  'inbox.draft.deleted',
];

const KNOWN = new Set(WEBHOOK_EVENT_KINDS);

export function isWebhookEventKind(kind: string): boolean {
  return KNOWN.has(kind);
}
