// Inboxes (docs/api.md §25): an address on one of the team's verified domains with receiving on,
// whose mail Posthorn keeps in threads (intake.ts) and sends from (send.ts). This file: an inbox's
// lookup by id or address, create, update, delete, and the agent's settings. Every write is one unit
// of work with its `inbox.*` event (events.ts).
import type { InboxAgentSettings, InboxRec, StoreReader, Tx } from '../store';
import type { Events } from '../events';
import { errors } from '../errors';
import { isUuid, newId, nowIso } from '../ids';
import { parseEmail } from '../mail/address';
import { canSendFrom } from '../domains/records';
import type { CreateInboxRequest, UpdateAgentRequest, UpdateInboxRequest } from '../schemas/inboxes';
import { inboxDeleted, inboxEvent, type InboxSource } from './events';

export const MAX_NAME = 64;
export const MAX_FROM_NAME = 78;
export const MAX_INSTRUCTIONS = 4000;

/** The inbox a path names by id or by address, in this team; 404 otherwise (another team's too). */
export async function findInbox(store: StoreReader, team: string, idOrAddress: string): Promise<InboxRec> {
  const rec = isUuid(idOrAddress)
    ? await store.inboxes.get(team, idOrAddress.toLowerCase())
    : await store.inboxes.find('address', idOrAddress.trim().toLowerCase());
  if (!rec || rec.team_id !== team) throw errors.notFound('Inbox');
  return rec;
}

function name(v: string): string {
  if (v.trim() === '' || v.length > MAX_NAME) throw errors.invalidField('name', `must be 1 to ${MAX_NAME} characters.`);
  return v;
}

/** The display name of the inbox's mail: no colon, angle brackets or line breaks (it goes into `From:`). */
function fromName(v: string | null): string | null {
  if (v === null || v.trim() === '') return null;
  if (v.length > MAX_FROM_NAME) throw errors.invalidField('from_name', `must be at most ${MAX_FROM_NAME} characters.`);
  if (/[:<>\r\n]/.test(v)) throw errors.invalidField('from_name', 'must not contain a colon, `<`, `>` or line breaks.');
  return v;
}

/**
 * A new inbox from a create body: its address must be on a domain of the team that is verified for
 * sending and has receiving enabled (else 422), and no inbox may have it yet (409).
 */
export async function newInbox(store: StoreReader, team: string, body: CreateInboxRequest): Promise<InboxRec> {
  if (body.email_address === null) throw errors.missingField('email_address');
  const addr = parseEmail(body.email_address.trim());
  if (!addr) throw errors.invalidField('email_address', 'must be an email address such as `support@example.com`.');
  if (body.forwarding)
    throw errors.validation(
      'Posthorn receives an inbox\u2019s mail itself: `forwarding` is not offered. Enable receiving on the domain instead (docs/api.md §25.1).',
    );
  const domain = await store.domains.find('name', addr.domain);
  if (!domain || domain.team_id !== team || !canSendFrom(domain) || domain.capabilities.receiving !== 'enabled')
    throw errors.validation(`The \`${addr.domain}\` domain is not a verified domain with receiving enabled. Verify it and enable receiving first.`);
  const address = addr.address.toLowerCase();
  if (await store.inboxes.find('address', address)) throw errors.validation(`An inbox for \`${address}\` already exists.`, 409);
  const at = nowIso();
  return {
    id: newId(),
    team_id: team,
    created_at: at,
    updated_at: at,
    email_address: address,
    domain_id: domain.id,
    name: body.name === undefined || body.name === null ? address : name(body.name),
    from_name: fromName(body.from_name ?? null),
    agent: { instructions: null, tone: null, actions: [] },
  };
}

/** In a unit of work: store a new inbox, with `inbox.created`. */
export async function createInbox(events: Events, tx: Tx, inbox: InboxRec, source: InboxSource): Promise<void> {
  // A unique index is the last word (two creates at once); the check above gives the clear error.
  if (await tx.inboxes.find('address', inbox.email_address)) throw errors.validation(`An inbox for \`${inbox.email_address}\` already exists.`, 409);
  tx.inboxes.put(inbox);
  await inboxEvent(events, tx, inbox, 'inbox.created', source);
}

/** In a unit of work: a PATCH; stored with `inbox.updated` when it changed something. */
export async function updateInbox(events: Events, tx: Tx, cur: InboxRec, body: UpdateInboxRequest, source: InboxSource): Promise<void> {
  if (body.name === undefined && body.from_name === undefined) throw errors.validation('Give at least one of `name` and `from_name`.');
  const next = { ...cur };
  if (body.name !== undefined && body.name !== null) next.name = name(body.name);
  if (body.from_name !== undefined) next.from_name = fromName(body.from_name);
  if (next.name === cur.name && next.from_name === cur.from_name) return;
  next.updated_at = nowIso();
  tx.inboxes.put(next);
  await inboxEvent(events, tx, next, 'inbox.updated', source);
}

/** In a unit of work: an inbox and everything in it (threads, messages, labels, drafts), with `inbox.deleted`. */
export async function deleteInbox(events: Events, tx: Tx, inbox: InboxRec, source: InboxSource): Promise<void> {
  const team = inbox.team_id;
  for (const t of await tx.inboxThreads.findAll('inbox', inbox.id, team)) {
    for (const m of await tx.inboxMessages.findAll('thread', t.id, team)) tx.inboxMessages.remove(team, m.id);
    tx.inboxThreads.remove(team, t.id);
  }
  for (const l of await tx.inboxLabels.findAll('inbox', inbox.id, team)) tx.inboxLabels.remove(team, l.id);
  for (const d of await tx.inboxDrafts.findAll('inbox', inbox.id, team)) tx.inboxDrafts.remove(team, d.id);
  tx.inboxes.remove(team, inbox.id);
  await inboxDeleted(events, tx, inbox, source);
}

/** The agent's settings after a PATCH (docs/api.md §25.7): at least one field; instructions ≤ 4,000 characters. */
export function agentChanges(cur: InboxAgentSettings, body: UpdateAgentRequest): InboxAgentSettings {
  if (body.instructions === undefined && body.tone === undefined && body.actions === undefined)
    throw errors.validation('Give at least one of `instructions`, `tone` and `actions`.');
  const next = { ...cur };
  if (body.instructions !== undefined) {
    if (body.instructions !== null && body.instructions.length > MAX_INSTRUCTIONS)
      throw errors.invalidField('instructions', `must be at most ${MAX_INSTRUCTIONS} characters.`);
    next.instructions = body.instructions === null || body.instructions.trim() === '' ? null : body.instructions;
  }
  if (body.tone !== undefined) next.tone = body.tone;
  if (body.actions !== undefined) next.actions = [...new Set(body.actions)];
  return next;
}

/** In a unit of work: store the agent's settings (no webhook kind reports them). */
export function updateAgent(tx: Tx, cur: InboxRec, body: UpdateAgentRequest): InboxAgentSettings {
  const agent = agentChanges(cur.agent, body);
  tx.inboxes.put({ ...cur, agent, updated_at: nowIso() });
  return agent;
}
