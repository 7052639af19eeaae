// An inbox's labels (docs/api.md §25.3): a name and a #RRGGBB colour, put on threads (threads.ts
// `changeLabels`). A label deleted is taken off every thread of its inbox in the same unit of work.
import type { InboxLabelRec, InboxRec, StoreReader, Tx } from '../store';
import { errors } from '../errors';
import { newId, nowIso } from '../ids';
import type { CreateLabelRequest, UpdateLabelRequest } from '../schemas/inboxes';

export const MAX_LABEL_NAME = 64;
/** The colour of a label made without one. */
export const DEFAULT_COLOR = '#6B7280';

function name(v: string): string {
  const t = v.trim();
  if (!t || t.length > MAX_LABEL_NAME) throw errors.invalidField('name', `must be 1 to ${MAX_LABEL_NAME} characters.`);
  return t;
}

function color(v: string): string {
  if (!/^#[0-9a-fA-F]{6}$/.test(v)) throw errors.invalidField('color', 'must be a hex colour such as `#E93D82`.');
  return v.toUpperCase();
}

export function newLabel(inbox: InboxRec, body: CreateLabelRequest): InboxLabelRec {
  if (body.name === null) throw errors.missingField('name');
  return {
    id: newId(),
    team_id: inbox.team_id,
    created_at: nowIso(),
    inbox_id: inbox.id,
    name: name(body.name),
    color: body.color ? color(body.color) : DEFAULT_COLOR,
  };
}

/** A label of this inbox; 404 otherwise. */
export async function findLabel(tx: Pick<StoreReader, 'inboxLabels'>, inbox: InboxRec, id: string): Promise<InboxLabelRec> {
  const l = await tx.inboxLabels.get(inbox.team_id, id);
  if (!l || l.inbox_id !== inbox.id) throw errors.notFound('Label');
  return l;
}

export function labelChanges(cur: InboxLabelRec, body: UpdateLabelRequest): InboxLabelRec {
  if (body.name === undefined && body.color === undefined) throw errors.validation('Give at least one of `name` and `color`.');
  return { ...cur, ...(body.name !== undefined ? { name: name(body.name) } : {}), ...(body.color !== undefined ? { color: color(body.color) } : {}) };
}

/** In a unit of work: a label, and its place on the threads of its inbox. */
export async function deleteLabel(tx: Tx, inbox: InboxRec, l: InboxLabelRec): Promise<void> {
  for (const t of await tx.inboxThreads.findAll('inbox', inbox.id, inbox.team_id))
    if (t.labels.includes(l.id)) tx.inboxThreads.put({ ...t, labels: t.labels.filter((x) => x !== l.id) });
  tx.inboxLabels.remove(inbox.team_id, l.id);
}
