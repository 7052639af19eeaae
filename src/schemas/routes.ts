// The routes the dashboard calls (web/src/api.ts), each with the schema of its answer. The
// dashboard takes its types from here — `import type` only: no schema reaches the browser's bundle
// (test/architecture/imports.test.ts) — so a page reads the fields the server sends, and
// test/api/schema-coverage.test.ts holds every entry to the route's declaration in
// src/api/resources/ (the same method and path, an answer of the same schema). A page that calls a
// new route adds its line here.
import { type Static, Type } from '@sinclair/typebox';
import { Deleted, List, Ref } from './common';
import {
  EmailChanged,
  EmailChangeRequested,
  PasswordResetRequested,
  SmtpSettings,
  InviteByToken,
  InviteCreated,
  InviteList,
  Member,
  MemberList,
  PasswordChanged,
  TeamSettings,
  Providers,
  Session,
  SessionList,
  SessionsEnded,
  TotpDisabled,
  TotpEnabled,
  TotpEnrolment,
} from './accounts';
import { ApiKeyCreated, ApiKeyList } from './api-keys';
import { AuditEntry } from './audit';
import { Automation, AutomationList, AutomationRef, AutomationRun, AutomationRunList } from './automations';
import { Broadcast, BroadcastCanceled, BroadcastRecipient, BroadcastSent, BroadcastSummary, BroadcastTestSent, ClickedLink } from './broadcasts';
import { ContactImport } from './contact-imports';
import { ContactProperty } from './contact-properties';
import { Contact, ContactDeleted, ContactSegmentAdded, ContactSegmentRemoved, ContactSummary } from './contacts';
import { Domain, DomainCreated, DomainList } from './domains';
import { Email, EmailAttachment, EmailEvents, EmailSummary, SendEmailResponse } from './emails';
import { EventList } from './events';
import { BroadcastReview, EmailInsights } from './insights';
import { Metrics } from './metrics';
import {
  Inbox,
  InboxAgent,
  InboxDraft,
  InboxDraftListItem,
  InboxMessage,
  InboxSummary,
  InboxThread,
  InboxThreadSearchResult,
  InboxThreadSummary,
  LabelList,
  SentResponse,
  ThreadLabelList,
} from './inboxes';
import { DeliverabilityChecks, DeliverabilitySetup, IncidentList } from './deliverability';
import { SendingIp, SendingIpList } from './ips';
import { DmarcSummary } from './dmarc';
import { Log, LogSummary, QueueControlResult, QueueList, Usage } from './operations';
import { ReceivedEmail, ReceivedEmailSummary } from './receiving';
import { SegmentCreated, SegmentSummary } from './segments';
import { Suppression, SuppressionList } from './suppressions';
import { Template, TemplateDeleted, TemplateList, TemplateRef, TemplateVersion, TemplateVersionList } from './templates';
import { ContactTopic, ContactTopicsUpdated, Topic } from './topics';
import { Webhook, WebhookAttemptList, WebhookEvent, WebhookEventList, WebhookList, WebhookSecret } from './webhooks';

/** A raw answer (not JSON: a message's source, an export), which the dashboard reads as text or saves as a file. */
export const RawText = Type.String({ description: 'A raw answer, read as text' });

export const ROUTES = {
  // Sign-in, sessions, second factor (docs/api.md §19).
  'GET /auth/providers': Providers,
  'GET /auth/session': Session,
  'POST /auth/sign-in': Session,
  'POST /auth/sign-out': Deleted('session'),
  'GET /auth/invites/:token': InviteByToken,
  'POST /auth/invites/:token/accept': Session,
  'GET /auth/sessions': SessionList,
  'DELETE /auth/sessions/:id': Deleted('session'),
  'DELETE /auth/sessions': SessionsEnded,
  'POST /auth/password': PasswordChanged,
  'POST /auth/totp': TotpEnrolment,
  'POST /auth/totp/confirm': TotpEnabled,
  'DELETE /auth/totp': TotpDisabled,
  // Account mail and SMTP settings (docs/api.md §19.16).
  'POST /auth/password-reset': PasswordResetRequested,
  'POST /auth/password-reset/:token': PasswordChanged,
  'POST /auth/email': EmailChangeRequested,
  'POST /auth/email/confirm/:token': EmailChanged,
  'GET /smtp-settings': SmtpSettings,
  'GET /usage': Usage,
  'GET /team': TeamSettings,
  'PATCH /team': TeamSettings,
  'GET /team/members': MemberList,
  'PATCH /team/members/:id': Member,
  'DELETE /team/members/:id': Deleted('member'),
  'GET /audit-log': List(AuditEntry),
  'GET /team/invites': InviteList,
  'POST /team/invites': InviteCreated,
  'DELETE /team/invites/:id': Deleted('invite'),

  // Emails, their queue and metrics (docs/api.md §7, §19.6, §19.7).
  'GET /emails': List(EmailSummary),
  'POST /emails': SendEmailResponse,
  'GET /emails/:id': Email,
  'PATCH /emails/:id': Ref('email'),
  'GET /emails/:id/events': EmailEvents,
  'GET /emails/:id/raw': RawText,
  'GET /emails/export': RawText,
  'GET /emails/:id/insights': EmailInsights,
  'GET /emails/:id/attachments': List(EmailAttachment),
  'POST /emails/:id/cancel': Ref('email'),
  'POST /emails/:id/hold': Ref('email'),
  'POST /emails/:id/release': Ref('email'),
  'POST /emails/:id/retry': Ref('email'),
  'GET /emails/metrics': Metrics,
  'GET /queue': QueueList,
  'GET /deliverability/incidents': IncidentList,
  'GET /deliverability/checks': DeliverabilityChecks,
  'POST /deliverability/checks': DeliverabilityChecks,
  'GET /deliverability/setup': DeliverabilitySetup,
  'GET /ips': SendingIpList,
  'POST /ips/:ip/warmup': SendingIp,
  'GET /domains/:id/dmarc': DmarcSummary,
  'POST /queue/:destination/hold': QueueControlResult,
  'POST /queue/:destination/release': QueueControlResult,
  'POST /queue/:destination/retry': QueueControlResult,
  'POST /queue/:destination/cancel': QueueControlResult,
  'GET /emails/receiving': List(ReceivedEmailSummary),
  'GET /emails/receiving/:id': ReceivedEmail,
  'GET /logs': List(LogSummary),
  'GET /logs/export': RawText,
  'GET /logs/:id': Log,

  // Webhooks (docs/api.md §14).
  'GET /webhooks': WebhookList,
  'POST /webhooks': WebhookSecret,
  'GET /webhooks/:id': Webhook,
  'PATCH /webhooks/:id': Ref('webhook'),
  'DELETE /webhooks/:id': Deleted('webhook'),
  'POST /webhooks/:id/signing-secret/rotate': WebhookSecret,
  'GET /webhooks/:id/events': WebhookEventList,
  'GET /webhooks/:id/events/:event_id': WebhookEvent,
  'GET /webhooks/:id/events/:event_id/attempts': WebhookAttemptList,
  'POST /webhooks/:id/events/:event_id/replay': Ref('webhook_event'),

  // Contacts, segments, topics, properties, imports (docs/api.md §11, §12).
  'GET /contacts': List(ContactSummary),
  'GET /contacts/export': RawText,
  'POST /contacts': Ref('contact'),
  'GET /contacts/:id_or_email': Contact,
  'PATCH /contacts/:id_or_email': Ref('contact'),
  'DELETE /contacts/:id_or_email': ContactDeleted,
  'GET /contacts/:id_or_email/segments': List(SegmentSummary),
  'POST /contacts/:id_or_email/segments/:segment_id': ContactSegmentAdded,
  'DELETE /contacts/:id_or_email/segments/:segment_id': ContactSegmentRemoved,
  'GET /contacts/:id_or_email/topics': List(ContactTopic),
  'PATCH /contacts/:id_or_email/topics': ContactTopicsUpdated,
  'GET /segments': List(SegmentSummary),
  'POST /segments': SegmentCreated('segment'),
  'DELETE /segments/:id': Deleted('segment'),
  'GET /topics': List(Topic),
  'POST /topics': Ref('topic'),
  'DELETE /topics/:id': Deleted('topic'),
  'GET /contact-properties': List(ContactProperty),
  'POST /contact-properties': Ref('contact_property'),
  'DELETE /contact-properties/:id': Deleted('contact_property'),
  'GET /contacts/imports': List(ContactImport),
  'POST /contacts/imports': Ref('contact_import'),
  'GET /contacts/imports/:id': ContactImport,

  // Broadcasts (docs/api.md §13).
  'GET /broadcasts': List(BroadcastSummary),
  'POST /broadcasts': Ref('broadcast'),
  'GET /broadcasts/:id': Broadcast,
  'PATCH /broadcasts/:id': Ref('broadcast'),
  'DELETE /broadcasts/:id': Deleted('broadcast'),
  'POST /broadcasts/:id/send': BroadcastSent,
  'POST /broadcasts/:id/review': BroadcastReview,
  'POST /broadcasts/:id/cancel': BroadcastCanceled,
  'POST /broadcasts/:id/test': BroadcastTestSent,
  'POST /broadcasts/:id/duplicate': Ref('broadcast'),
  'GET /broadcasts/:id/recipients': List(BroadcastRecipient),
  'GET /broadcasts/:id/clicked-links': List(ClickedLink),
  'GET /suppressions': SuppressionList,
  'GET /suppressions/export': RawText,
  'GET /suppressions/:id_or_email': Suppression,
  'POST /suppressions': Ref('suppression'),
  'DELETE /suppressions/:id_or_email': Deleted('suppression'),

  // Domains and API keys (docs/api.md §9, §10).
  'GET /domains': DomainList,
  'POST /domains': DomainCreated,
  'GET /domains/:id': Domain,
  'PATCH /domains/:id': Ref('domain'),
  'DELETE /domains/:id': Deleted('domain'),
  'POST /domains/:id/verify': Ref('domain'),
  'POST /domains/:id/dkim/rotate': Domain,
  'GET /api-keys': ApiKeyList,
  'POST /api-keys': ApiKeyCreated,
  'DELETE /api-keys/:id': Deleted('api_key'),

  // Templates, custom events, automations (docs/api.md §20, §23, §24).
  'GET /templates': TemplateList,
  'POST /templates': TemplateRef,
  'GET /templates/:id_or_alias': Template,
  'PATCH /templates/:id_or_alias': TemplateRef,
  'DELETE /templates/:id_or_alias': TemplateDeleted,
  'POST /templates/:id_or_alias/publish': TemplateRef,
  'POST /templates/:id_or_alias/duplicate': TemplateRef,
  'GET /templates/:id_or_alias/versions': TemplateVersionList,
  'GET /templates/:id_or_alias/versions/:version': TemplateVersion,
  'POST /templates/:id_or_alias/versions/:version/revert': TemplateVersion,
  'GET /events': EventList,
  'GET /automations': AutomationList,
  'GET /automations/:id': Automation,
  'GET /automations/:id/runs': AutomationRunList,
  'GET /automations/:id/runs/:run_id': AutomationRun,
  // The automation builder (web/src/pages/automation-builder.tsx).
  'POST /automations': AutomationRef,
  'PATCH /automations/:id': AutomationRef,

  // Inboxes (docs/api.md §25): the Inboxes page.
  'GET /inboxes': List(InboxSummary),
  'POST /inboxes': Ref('inbox'),
  'GET /inboxes/:inbox': Inbox,
  'PATCH /inboxes/:inbox': Ref('inbox'),
  'GET /inboxes/:inbox/labels': LabelList,
  'POST /inboxes/:inbox/labels': Ref('inbox_label'),
  'PATCH /inboxes/:inbox/labels/:label': Ref('inbox_label'),
  'DELETE /inboxes/:inbox/labels/:label': Deleted('inbox_label'),
  'GET /inboxes/:inbox/threads': List(InboxThread),
  'GET /inboxes/:inbox/threads/search': List(InboxThreadSearchResult),
  'GET /inboxes/:inbox/threads/:thread': InboxThreadSummary,
  'PATCH /inboxes/:inbox/threads/:thread': InboxThreadSummary,
  'DELETE /inboxes/:inbox/threads/:thread': Deleted('inbox_thread'),
  'POST /inboxes/:inbox/threads/:thread/labels': ThreadLabelList,
  'PUT /inboxes/:inbox/threads/:thread/labels': ThreadLabelList,
  'DELETE /inboxes/:inbox/threads/:thread/labels/:label': ThreadLabelList,
  'GET /inboxes/:inbox/threads/:thread/emails': List(InboxMessage),
  'GET /inboxes/:inbox/threads/:thread/emails/:email': InboxMessage,
  'POST /inboxes/:inbox/threads/:thread/emails/:email/reply': SentResponse,
  'POST /inboxes/:inbox/threads/:thread/emails/:email/forward': SentResponse,
  'GET /inboxes/:inbox/drafts': List(InboxDraftListItem),
  'POST /inboxes/:inbox/drafts': Ref('inbox_draft'),
  'GET /inboxes/:inbox/drafts/:draft': InboxDraft,
  'PATCH /inboxes/:inbox/drafts/:draft': Ref('inbox_draft'),
  'DELETE /inboxes/:inbox/drafts/:draft': Deleted('inbox_draft'),
  'POST /inboxes/:inbox/drafts/:draft/send': SentResponse,
  'GET /inboxes/:inbox/agent': InboxAgent,
  'PATCH /inboxes/:inbox/agent': Ref('inbox_agent'),
};

/** A route of the map, as `METHOD /path` with the server's parameter names (`GET /emails/:id`). */
export type RouteName = keyof typeof ROUTES;

/** What each route of the map answers. */
export type Routes = { [K in RouteName]: Static<(typeof ROUTES)[K]> };
