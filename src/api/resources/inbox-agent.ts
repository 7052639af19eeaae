// An inbox's agent settings (docs/api.md §25.7): its instructions, tone and allowed actions. Running
// the agent on new thread messages is src/inboxes/agent's; it only ever makes drafts.
import type { ApiContext } from '../app';
import { resource, route } from '../platform/route';
import { Ref } from '../../schemas/common';
import { InboxAgent, InboxParams, UpdateAgentRequest } from '../../schemas/inboxes';
import { findInbox, updateAgent } from '../../inboxes';

export const inboxAgentResource = resource('Inboxes', ({ store }: ApiContext) => [
  route({
    method: 'GET',
    path: '/inboxes/:inbox/agent',
    summary: 'Retrieve an inbox’s agent settings',
    access: 'team',
    params: InboxParams,
    body: 'none',
    response: InboxAgent,
    async handler({ caller, params }) {
      const { agent } = await findInbox(store, caller.team, params.inbox);
      return { object: 'inbox_agent' as const, ...agent };
    },
  }),
  route({
    method: 'PATCH',
    path: '/inboxes/:inbox/agent',
    summary: 'Update an inbox’s agent settings',
    access: 'team',
    params: InboxParams,
    body: UpdateAgentRequest,
    response: Ref('inbox_agent'),
    async handler({ caller, params, body }) {
      const inbox = await findInbox(store, caller.team, params.inbox);
      await store.write(async (tx) => updateAgent(tx, await findInbox(tx, caller.team, inbox.id), body));
      return { object: 'inbox_agent' as const, id: inbox.id };
    },
  }),
]);
