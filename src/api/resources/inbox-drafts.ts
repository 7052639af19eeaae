// An inbox's drafts (docs/api.md §25.6): create, list, retrieve, update, delete, send; the logic is
// src/inboxes/drafts.ts (`createDraft`, which the Inbox Agent calls too).
import type { ApiContext } from '../app';
import { pageQuery, listOf } from '../platform/params';
import { resource, route } from '../platform/route';
import { Deleted, IgnoredBody, List, PageQuery, Ref } from '../../schemas/common';
import {
  CreateDraftRequest,
  DraftParams,
  InboxDraft,
  InboxDraftListItem,
  InboxParams,
  SendDraftRequest,
  SentResponse,
  UpdateDraftRequest,
} from '../../schemas/inboxes';
import { findInbox } from '../../inboxes';
import { createDraft, deleteDraft, findDraft, sendDraft, updateDraft } from '../../inboxes/drafts';
import { customHeaders } from '../../inboxes/send';
import { draftListItem, draftView } from '../../inboxes/views';
import { once, sendOnce, sourceOf } from './inboxes';

export const inboxDraftsResource = resource('Inboxes', (svc: ApiContext) => {
  const { store, events } = svc;
  const draftDeps = { store, events, allowPrivate: svc.config.security.allow_private_networks };
  const sendDeps = { ...svc, hooks: svc.inboxes.hooks, search: svc.inboxes.search };
  return [
    route({
      method: 'POST',
      path: '/inboxes/:inbox/drafts',
      summary: 'Create a draft (standalone, or a reply in a thread)',
      access: 'team',
      params: InboxParams,
      body: CreateDraftRequest,
      status: 201,
      response: Ref('inbox_draft'),
      async handler({ caller, params, body, request }) {
        return once(svc, caller.team, request, '/inboxes/drafts', { params, body }, 201, async (remember) => {
          const draft = await createDraft(draftDeps, caller.team, params.inbox, body, sourceOf(caller), remember);
          return { object: 'inbox_draft' as const, id: draft.id };
        });
      },
    }),
    route({
      method: 'GET',
      path: '/inboxes/:inbox/drafts',
      summary: 'List drafts not yet sent, newest first',
      access: 'team',
      params: InboxParams,
      query: PageQuery,
      body: 'none',
      response: List(InboxDraftListItem),
      async handler({ caller, params, query }) {
        const inbox = await findInbox(store, caller.team, params.inbox);
        return listOf(await store.inboxDrafts.pageBy('inbox', inbox.id, caller.team, pageQuery(query), 20, draftListItem));
      },
    }),
    route({
      method: 'GET',
      path: '/inboxes/:inbox/drafts/:draft',
      summary: 'Retrieve a draft',
      access: 'team',
      params: DraftParams,
      body: 'none',
      response: InboxDraft,
      async handler({ caller, params }) {
        const inbox = await findInbox(store, caller.team, params.inbox);
        return draftView(await findDraft(store, inbox, params.draft));
      },
    }),
    route({
      method: 'PATCH',
      path: '/inboxes/:inbox/drafts/:draft',
      summary: 'Update a draft',
      access: 'team',
      params: DraftParams,
      body: UpdateDraftRequest,
      response: Ref('inbox_draft'),
      async handler({ caller, params, body }) {
        const inbox = await findInbox(store, caller.team, params.inbox);
        await updateDraft(draftDeps, inbox, params.draft, body, sourceOf(caller));
        return { object: 'inbox_draft' as const, id: params.draft };
      },
    }),
    route({
      method: 'DELETE',
      path: '/inboxes/:inbox/drafts/:draft',
      summary: 'Delete a draft',
      access: 'team',
      params: DraftParams,
      body: IgnoredBody,
      response: Deleted('inbox_draft'),
      async handler({ caller, params }) {
        const inbox = await findInbox(store, caller.team, params.inbox);
        await store.write(async (tx) => deleteDraft(events, tx, inbox, params.draft, sourceOf(caller)));
        return { object: 'inbox_draft' as const, id: params.draft, deleted: true as const };
      },
    }),
    route({
      method: 'POST',
      path: '/inboxes/:inbox/drafts/:draft/send',
      summary: 'Send a draft',
      access: 'team',
      params: DraftParams,
      body: SendDraftRequest,
      response: SentResponse,
      async handler({ caller, params, body, request }) {
        const headers = customHeaders(body.headers);
        const inbox = await findInbox(store, caller.team, params.inbox);
        const ctx = { team: caller.team, key: caller.key, source: sourceOf(caller) };
        return sendOnce(svc, caller.team, request, '/inboxes/drafts/send', { params, body }, (remember) =>
          sendDraft(sendDeps, ctx, inbox, params.draft, headers, remember),
        );
      },
    }),
  ];
});
