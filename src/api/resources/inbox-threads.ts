// An inbox's threads (docs/api.md §25.4): list by folder, label and read state, search, retrieve,
// update (read state, folder; Posthorn: assignee), delete, and their labels (add, set, remove).
// The logic is src/inboxes/threads.ts, the filters src/inboxes/listing.ts.
import type { ApiContext } from '../app';
import type { InboxThreadRec } from '../../store';
import { pageQuery } from '../platform/params';
import { resource, route } from '../platform/route';
import { Deleted, IgnoredBody, List } from '../../schemas/common';
import {
  InboxParams,
  InboxThread,
  InboxThreadSearchResult,
  InboxThreadSummary,
  ThreadLabelList,
  ThreadLabelParams,
  ThreadLabelsRequest,
  ThreadListQuery,
  ThreadParams,
  ThreadSearchQuery,
  UpdateThreadRequest,
} from '../../schemas/inboxes';
import { findInbox } from '../../inboxes';
import { changeLabels, deleteThread, findThread, updateThread } from '../../inboxes/threads';
import { labelsOf, threadSummary, threadView } from '../../inboxes/views';
import { pageOf, passes, threadFilter } from '../../inboxes/listing';
import { errors } from '../../errors';
import { sourceOf } from './inboxes';

/** Latest activity first (ISO times sort as strings), newest id first among equals. */
const byActivity = (a: InboxThreadRec, b: InboxThreadRec) => (a.last_at === b.last_at ? (a.id < b.id ? 1 : -1) : a.last_at < b.last_at ? 1 : -1);

export const inboxThreadsResource = resource('Inboxes', (svc: ApiContext) => {
  const { store, events } = svc;
  return [
    route({
      method: 'GET',
      path: '/inboxes/:inbox/threads',
      summary: 'List threads, latest activity first',
      description: '`folders` and `labels` are comma-separated; a thread passes with one of the folders and one of the labels.',
      access: 'team',
      params: InboxParams,
      query: ThreadListQuery,
      body: 'none',
      response: List(InboxThread),
      async handler({ caller, params, query }) {
        const inbox = await findInbox(store, caller.team, params.inbox);
        const page = pageQuery(query);
        const filter = threadFilter(query);
        const threads = (await store.inboxThreads.findAll('inbox', inbox.id, caller.team)).filter((t) => passes(t, filter)).sort(byActivity);
        const labels = await labelsOf(store, caller.team, inbox.id);
        const p = pageOf(threads, page);
        return { object: 'list' as const, has_more: p.has_more, data: p.data.map((t) => threadView(t, labels)) };
      },
    }),
    route({
      method: 'GET',
      path: '/inboxes/:inbox/threads/search',
      summary: 'Search threads by subject, participants and body text',
      access: 'team',
      params: InboxParams,
      query: ThreadSearchQuery,
      body: 'none',
      response: List(InboxThreadSearchResult),
      async handler({ caller, params, query }) {
        const inbox = await findInbox(store, caller.team, params.inbox);
        const page = pageQuery(query);
        const filter = threadFilter(query);
        const hits = await svc.inboxes.search.query(store, caller.team, inbox.id, query.query ?? '');
        const found: (InboxThreadRec & { matched: string | null })[] = [];
        for (const h of hits) {
          const t = await store.inboxThreads.get(caller.team, h.thread_id);
          if (t && t.inbox_id === inbox.id && passes(t, filter)) found.push({ ...t, matched: h.matched_email_id });
        }
        const labels = await labelsOf(store, caller.team, inbox.id);
        const p = pageOf(found, page);
        return { object: 'list' as const, has_more: p.has_more, data: p.data.map((t) => ({ ...threadView(t, labels), matched_email_id: t.matched })) };
      },
    }),
    route({
      method: 'GET',
      path: '/inboxes/:inbox/threads/:thread',
      summary: 'Retrieve a thread',
      access: 'team',
      params: ThreadParams,
      body: 'none',
      response: InboxThreadSummary,
      async handler({ caller, params }) {
        const inbox = await findInbox(store, caller.team, params.inbox);
        const t = await findThread(store, inbox, params.thread);
        return threadSummary(t, await labelsOf(store, caller.team, inbox.id));
      },
    }),
    route({
      method: 'PATCH',
      path: '/inboxes/:inbox/threads/:thread',
      summary: 'Update a thread: read state, folder, assignee',
      access: 'team',
      params: ThreadParams,
      body: UpdateThreadRequest,
      response: InboxThreadSummary,
      async handler({ caller, params, body }) {
        const inbox = await findInbox(store, caller.team, params.inbox);
        const by = caller.user?.email ?? null;
        const t = await store.write(async (tx) => updateThread(events, tx, inbox, await findThread(tx, inbox, params.thread), body, sourceOf(caller), by));
        return threadSummary(t, await labelsOf(store, caller.team, inbox.id));
      },
    }),
    route({
      method: 'DELETE',
      path: '/inboxes/:inbox/threads/:thread',
      summary: 'Delete a thread with its emails and drafts',
      access: 'team',
      params: ThreadParams,
      body: IgnoredBody,
      response: Deleted('inbox_thread'),
      async handler({ caller, params }) {
        const inbox = await findInbox(store, caller.team, params.inbox);
        await store.write(async (tx) => deleteThread(tx, inbox, await findThread(tx, inbox, params.thread)));
        svc.inboxes.search.remove(caller.team, inbox.id, params.thread);
        return { object: 'inbox_thread' as const, id: params.thread, deleted: true as const };
      },
    }),
    route({
      method: 'POST',
      path: '/inboxes/:inbox/threads/:thread/labels',
      summary: 'Add labels to a thread (1 to 10)',
      access: 'team',
      params: ThreadParams,
      body: ThreadLabelsRequest,
      response: ThreadLabelList,
      async handler({ caller, params, body }) {
        if (!body.labels.length) throw errors.validation('Invalid `labels` field: give 1 to 10 label ids.');
        const inbox = await findInbox(store, caller.team, params.inbox);
        const data = await store.write(async (tx) =>
          changeLabels(events, tx, inbox, await findThread(tx, inbox, params.thread), body.labels, 'add', sourceOf(caller)),
        );
        return { object: 'list' as const, data };
      },
    }),
    route({
      method: 'PUT',
      path: '/inboxes/:inbox/threads/:thread/labels',
      summary: 'Set a thread’s labels (0 to 10)',
      access: 'team',
      params: ThreadParams,
      body: ThreadLabelsRequest,
      response: ThreadLabelList,
      async handler({ caller, params, body }) {
        const inbox = await findInbox(store, caller.team, params.inbox);
        const data = await store.write(async (tx) =>
          changeLabels(events, tx, inbox, await findThread(tx, inbox, params.thread), body.labels, 'set', sourceOf(caller)),
        );
        return { object: 'list' as const, data };
      },
    }),
    route({
      method: 'DELETE',
      path: '/inboxes/:inbox/threads/:thread/labels/:label',
      summary: 'Remove a label from a thread',
      access: 'team',
      params: ThreadLabelParams,
      body: IgnoredBody,
      response: ThreadLabelList,
      async handler({ caller, params }) {
        const inbox = await findInbox(store, caller.team, params.inbox);
        const data = await store.write(async (tx) =>
          changeLabels(events, tx, inbox, await findThread(tx, inbox, params.thread), [params.label], 'remove', sourceOf(caller)),
        );
        return { object: 'list' as const, data };
      },
    }),
  ];
});
