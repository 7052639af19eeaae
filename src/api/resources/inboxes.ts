// Inboxes (docs/api.md §25.1): create, list, retrieve, update, delete. An inbox is named in paths by
// its id or its address (`{inbox}`: the SDK's `inboxId` or `emailAddress`); the logic is src/inboxes.
import type { ApiContext } from '../app';
import type { InboxRec } from '../../store';
import { pageQuery, listOf } from '../platform/params';
import { resource, route, type Caller } from '../platform/route';
import { Deleted, IgnoredBody, List, PageQuery, Ref } from '../../schemas/common';
import { CreateInboxRequest, Inbox, InboxParams, InboxSummary, UpdateInboxRequest } from '../../schemas/inboxes';
import { createInbox, deleteInbox, findInbox, newInbox, updateInbox } from '../../inboxes';
import { inboxCounts, inboxSummary, inboxView } from '../../inboxes/views';
import type { InboxSource } from '../../inboxes/events';
import { fingerprint, type Remember } from '../../sending/idempotency';
import { idempotencyKey } from '../platform/idempotency';
import { ApiError } from '../../errors';

/** Who made a change, as `inbox.*` payloads say (`source`): the dashboard for a session, else the API. */
export const sourceOf = (caller: Pick<Caller, 'user'>): InboxSource => (caller.user ? 'dashboard' : 'api');

/**
 * Mail from an inbox under `Idempotency-Key` (docs/api.md §5, §25.5): the same key with the same
 * request answers the first one's `{id}` and sends nothing more; with another request, 409.
 * `endpoint` names the route, `what` is the request (its path ids and body).
 */
export async function sendOnce(
  svc: Pick<ApiContext, 'idempotency'>,
  team: string,
  request: Request,
  endpoint: string,
  what: unknown,
  send: (remember: Remember | undefined) => Promise<string>,
): Promise<{ id: string }> {
  return once(svc, team, request, endpoint, what, 200, async (remember) => ({ id: await send(remember) }));
}

/** A request under `Idempotency-Key` answering `status` with `body` (the stored answer replayed, or its error thrown). */
export async function once<T>(
  svc: Pick<ApiContext, 'idempotency'>,
  team: string,
  request: Request,
  endpoint: string,
  what: unknown,
  status: number,
  work: (remember: Remember | undefined) => Promise<T>,
): Promise<T> {
  const key = idempotencyKey(request.headers);
  const o = await svc.idempotency.run({ team, endpoint, key, fingerprint: () => fingerprint(what) }, async (remember) => ({
    status,
    body: await work(remember),
  }));
  if (o.status !== status) throw new ApiError(o.status, (o.body as { name: string }).name, (o.body as { message: string }).message);
  return o.body as T;
}

export const inboxesResource = resource('Inboxes', (svc: ApiContext) => {
  const { store, events } = svc;
  return [
    route({
      method: 'POST',
      path: '/inboxes',
      summary: 'Create an inbox on a verified domain with receiving enabled',
      access: 'team',
      body: CreateInboxRequest,
      status: 201,
      response: Ref('inbox'),
      async handler({ caller, body }) {
        const inbox = await newInbox(store, caller.team, body);
        await store.write((tx) => createInbox(events, tx, inbox, sourceOf(caller)));
        return { object: 'inbox' as const, id: inbox.id };
      },
    }),
    route({
      method: 'GET',
      path: '/inboxes',
      summary: 'List inboxes',
      access: 'team',
      query: PageQuery,
      body: 'none',
      response: List(InboxSummary),
      async handler({ caller, query }) {
        const page = await store.inboxes.page(caller.team, pageQuery(query), 20);
        const data = await Promise.all(page.data.map(async (r: InboxRec) => inboxSummary(r, await inboxCounts(store, r))));
        return listOf({ has_more: page.has_more, data });
      },
    }),
    route({
      method: 'GET',
      path: '/inboxes/:inbox',
      summary: 'Retrieve an inbox (by id or address)',
      access: 'team',
      params: InboxParams,
      body: 'none',
      response: Inbox,
      async handler({ caller, params }) {
        const inbox = await findInbox(store, caller.team, params.inbox);
        return inboxView(inbox, await inboxCounts(store, inbox));
      },
    }),
    route({
      method: 'PATCH',
      path: '/inboxes/:inbox',
      summary: 'Update an inbox’s name or from name',
      access: 'team',
      params: InboxParams,
      body: UpdateInboxRequest,
      response: Ref('inbox'),
      async handler({ caller, params, body }) {
        const inbox = await findInbox(store, caller.team, params.inbox);
        await store.write(async (tx) => updateInbox(events, tx, await findInbox(tx, caller.team, inbox.id), body, sourceOf(caller)));
        return { object: 'inbox' as const, id: inbox.id };
      },
    }),
    route({
      method: 'DELETE',
      path: '/inboxes/:inbox',
      summary: 'Delete an inbox with its threads, labels and drafts',
      access: 'team',
      params: InboxParams,
      body: IgnoredBody,
      response: Deleted('inbox'),
      async handler({ caller, params }) {
        const inbox = await findInbox(store, caller.team, params.inbox);
        await store.write(async (tx) => deleteInbox(events, tx, await findInbox(tx, caller.team, inbox.id), sourceOf(caller)));
        svc.inboxes.search.removeInbox(caller.team, inbox.id);
        return { object: 'inbox' as const, id: inbox.id, deleted: true as const };
      },
    }),
  ];
});
