// An inbox's labels (docs/api.md §25.3): create, list, update, delete; src/inboxes/labels.ts.
import type { ApiContext } from '../app';
import { resource, route } from '../platform/route';
import { Deleted, IgnoredBody, Ref } from '../../schemas/common';
import { CreateLabelRequest, InboxParams, LabelList, LabelParams, UpdateLabelRequest } from '../../schemas/inboxes';
import { findInbox } from '../../inboxes';
import { deleteLabel, findLabel, labelChanges, newLabel } from '../../inboxes/labels';
import { labelView } from '../../inboxes/views';

export const inboxLabelsResource = resource('Inboxes', ({ store }: ApiContext) => [
  route({
    method: 'POST',
    path: '/inboxes/:inbox/labels',
    summary: 'Create a label',
    access: 'team',
    params: InboxParams,
    body: CreateLabelRequest,
    status: 201,
    response: Ref('inbox_label'),
    async handler({ caller, params, body }) {
      const inbox = await findInbox(store, caller.team, params.inbox);
      const label = newLabel(inbox, body);
      await store.write(async (tx) => {
        await findInbox(tx, caller.team, inbox.id);
        tx.inboxLabels.put(label);
      });
      return { object: 'inbox_label' as const, id: label.id };
    },
  }),
  route({
    method: 'GET',
    path: '/inboxes/:inbox/labels',
    summary: 'List an inbox’s labels',
    access: 'team',
    params: InboxParams,
    body: 'none',
    response: LabelList,
    async handler({ caller, params }) {
      const inbox = await findInbox(store, caller.team, params.inbox);
      const labels = await store.inboxLabels.findAll('inbox', inbox.id, caller.team);
      return { object: 'list' as const, data: labels.map(labelView) };
    },
  }),
  route({
    method: 'PATCH',
    path: '/inboxes/:inbox/labels/:label',
    summary: 'Update a label',
    access: 'team',
    params: LabelParams,
    body: UpdateLabelRequest,
    response: Ref('inbox_label'),
    async handler({ caller, params, body }) {
      const inbox = await findInbox(store, caller.team, params.inbox);
      await store.write(async (tx) => tx.inboxLabels.put(labelChanges(await findLabel(tx, inbox, params.label), body)));
      return { object: 'inbox_label' as const, id: params.label };
    },
  }),
  route({
    method: 'DELETE',
    path: '/inboxes/:inbox/labels/:label',
    summary: 'Delete a label (taken off its threads)',
    access: 'team',
    params: LabelParams,
    body: IgnoredBody,
    response: Deleted('inbox_label'),
    async handler({ caller, params }) {
      const inbox = await findInbox(store, caller.team, params.inbox);
      await store.write(async (tx) => deleteLabel(tx, inbox, await findLabel(tx, inbox, params.label)));
      return { object: 'inbox_label' as const, id: params.label, deleted: true as const };
    },
  }),
]);
