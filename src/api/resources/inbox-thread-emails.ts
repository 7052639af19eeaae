// A thread's emails (docs/api.md §25.5): list (oldest first: the conversation's order), retrieve,
// reply and forward — both sent through the one sending core (src/inboxes/send.ts) as messages of
// the thread.
import type { ApiContext } from '../app';
import type { InboxMessageRec } from '../../store';
import { pageQuery } from '../platform/params';
import { resource, route } from '../platform/route';
import { List } from '../../schemas/common';
import { ForwardRequest, InboxMessage, ReplyRequest, SentResponse, ThreadEmailParams, ThreadParams } from '../../schemas/inboxes';
import { findInbox } from '../../inboxes';
import { findThread } from '../../inboxes/threads';
import { messageView } from '../../inboxes/views';
import { pageOf } from '../../inboxes/listing';
import {
  addressList,
  customHeaders,
  findMessage,
  forwardBodies,
  forwardSubject,
  originalFiles,
  replyBodies,
  replyRecipients,
  replySubject,
  sendFromInbox,
} from '../../inboxes/send';
import { errors } from '../../errors';
import { sendOnce, sourceOf } from './inboxes';
import { PageQuery } from '../../schemas/common';

const byTime = (a: InboxMessageRec, b: InboxMessageRec) => (a.received_at === b.received_at ? (a.id < b.id ? -1 : 1) : a.received_at < b.received_at ? -1 : 1);

export const inboxThreadEmailsResource = resource('Inboxes', (svc: ApiContext) => {
  const { store } = svc;
  const deps = { ...svc, hooks: svc.inboxes.hooks, search: svc.inboxes.search };
  return [
    route({
      method: 'GET',
      path: '/inboxes/:inbox/threads/:thread/emails',
      summary: 'List a thread’s emails, oldest first',
      access: 'team',
      params: ThreadParams,
      query: PageQuery,
      body: 'none',
      response: List(InboxMessage),
      async handler({ caller, params, query }) {
        const inbox = await findInbox(store, caller.team, params.inbox);
        const t = await findThread(store, inbox, params.thread);
        const msgs = (await store.inboxMessages.findAll('thread', t.id, caller.team)).sort(byTime);
        const p = pageOf(msgs, pageQuery(query));
        return { object: 'list' as const, has_more: p.has_more, data: p.data.map(messageView) };
      },
    }),
    route({
      method: 'GET',
      path: '/inboxes/:inbox/threads/:thread/emails/:email',
      summary: 'Retrieve an email of a thread',
      access: 'team',
      params: ThreadEmailParams,
      body: 'none',
      response: InboxMessage,
      async handler({ caller, params }) {
        const inbox = await findInbox(store, caller.team, params.inbox);
        const t = await findThread(store, inbox, params.thread);
        return messageView(await findMessage(store, inbox, t.id, params.email));
      },
    }),
    route({
      method: 'POST',
      path: '/inboxes/:inbox/threads/:thread/emails/:email/reply',
      summary: 'Reply to an email of a thread',
      description: 'To its Reply-To or From (`reply_all`: its To and Cc too), with In-Reply-To, References and the original quoted.',
      access: 'team',
      params: ThreadEmailParams,
      body: ReplyRequest,
      response: SentResponse,
      async handler({ caller, params, body, request }) {
        if (body.html === undefined && body.text === undefined) throw errors.missingField('html` or `text');
        const headers = customHeaders(body.headers);
        const inbox = await findInbox(store, caller.team, params.inbox);
        const t = await findThread(store, inbox, params.thread);
        const parent = await findMessage(store, inbox, t.id, params.email);
        const { to, cc } = replyRecipients(parent, inbox, body.reply_all ?? false);
        const input = {
          to,
          cc: [...cc, ...addressList(body.cc)],
          bcc: addressList(body.bcc),
          subject: body.subject ?? replySubject(parent.subject ?? t.subject),
          ...replyBodies(parent, body.html, body.text),
          headers,
          ...(body.attachments ? { attachments: body.attachments } : {}),
        };
        const ctx = { team: caller.team, key: caller.key, source: sourceOf(caller) };
        return sendOnce(svc, caller.team, request, '/inboxes/reply', { params, body }, async (remember) => {
          const { email } = await sendFromInbox(deps, ctx, inbox, t.id, input, parent, undefined, remember);
          return email.id;
        });
      },
    }),
    route({
      method: 'POST',
      path: '/inboxes/:inbox/threads/:thread/emails/:email/forward',
      summary: 'Forward an email of a thread, with its attachments',
      access: 'team',
      params: ThreadEmailParams,
      body: ForwardRequest,
      response: SentResponse,
      async handler({ caller, params, body, request }) {
        if (body.to === null) throw errors.missingField('to');
        const headers = customHeaders(body.headers);
        const inbox = await findInbox(store, caller.team, params.inbox);
        const t = await findThread(store, inbox, params.thread);
        const original = await findMessage(store, inbox, t.id, params.email);
        const input = {
          to: addressList(body.to),
          cc: addressList(body.cc),
          bcc: addressList(body.bcc),
          subject: body.subject ?? forwardSubject(original.subject ?? t.subject),
          ...forwardBodies(original, body.html, body.text),
          headers,
          attachments: [...(await originalFiles(store, original)), ...(body.attachments ?? [])],
        };
        // A forward is a message of the thread, but answers no one: no In-Reply-To.
        const ctx = { team: caller.team, key: caller.key, source: sourceOf(caller) };
        return sendOnce(svc, caller.team, request, '/inboxes/forward', { params, body }, async (remember) => {
          const { email } = await sendFromInbox(deps, ctx, inbox, t.id, input, null, undefined, remember);
          return email.id;
        });
      },
    }),
  ];
});
