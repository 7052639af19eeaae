// Webhooks (docs/api.md §14): endpoints and their management — create, update, delete, secret
// rotation, replay — plus the views the API answers with. Delivery lives in dispatcher.ts, the
// outbox writes in outbox.ts.
import { writeOrRefuse, type Store, type StoreReader, type WebhookRec, type WebhookStatus } from '../../store';
import { ApiError, errors } from '../../errors';
import { assertPublicUrl, GuardError } from '../../net/guard';
import { isUuid, newId, nowIso } from '../../ids';
import { isSubscribableKind } from '../../event-catalogue';
import { newSigningSecret } from './signing';
import { dropOutstanding, fanOut, moveEvent } from './outbox';
import { Events } from '../index';

export { WebhookDispatcher, type DispatcherOptions, type DispatcherDeps } from './dispatcher';
export { fanOut } from './outbox';
export { isMsgId } from './signing';

/** The event function as every thread uses it: webhook-visible events fan out to the outbox inside their own unit of work. */
export function createEvents(): Events {
  const events = new Events();
  events.onEvent(fanOut);
  return events;
}

/** How long the secret before a rotation keeps signing (docs/api.md §14.5). */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

export interface WebhookFields {
  endpoint?: string;
  events?: string[];
  status?: WebhookStatus;
  /** Posthorn (docs/api.md §14.1): null or empty — every domain. */
  domain_ids?: string[] | null;
  include_content?: boolean;
}

/**
 * An endpoint URL must be http(s) and, unless `security.allow_private_networks`, resolve to public
 * addresses only. Checked here and again at every attempt (the host may re-resolve).
 */
export async function checkEndpoint(endpoint: string, allowPrivate: boolean): Promise<string> {
  try {
    await assertPublicUrl(endpoint, allowPrivate);
  } catch (e) {
    if (e instanceof GuardError) throw errors.invalidField('endpoint', `${e.message}.`);
    throw e;
  }
  return endpoint;
}

/** At least one kind, each one of Resend's or of Posthorn's own (docs/api.md §14.1, §14.2); duplicates dropped. */
export function checkEvents(events: string[]): string[] {
  if (events.length === 0) throw errors.validation('The `events` field must list at least one event type.');
  const unknown = events.find((k) => !isSubscribableKind(k));
  if (unknown !== undefined) throw errors.invalidField('events', `\`${unknown}\` is not a webhook event type.`);
  return [...new Set(events)];
}

/**
 * `domain_ids` (docs/api.md §14.1): each an id of one of the team's domains, read in the unit of
 * work that stores the webhook; duplicates dropped, lowercase. Null or empty: every domain (the
 * field is left out). Answers the 422 naming the first that is not, or the ids.
 */
export async function checkDomainIds(tx: StoreReader, team: string, ids: string[] | null): Promise<string[] | undefined | ApiError> {
  if (!ids?.length) return undefined;
  const out = [...new Set(ids.map((id) => id.toLowerCase()))];
  for (const id of out)
    if (!isUuid(id) || !(await tx.domains.get(team, id))) return errors.invalidField('domain_ids', `\`${id}\` is not a domain of this team.`);
  return out;
}

/** The webhook with the extension fields given: `domain_ids` already checked (undefined: every domain). */
function withExtensions(w: WebhookRec, domainIds: string[] | undefined, includeContent: boolean | undefined): WebhookRec {
  const { domain_ids: _, include_content: __, ...rest } = w;
  return { ...rest, ...(domainIds ? { domain_ids: domainIds } : {}), ...(includeContent ? { include_content: true } : {}) };
}

export async function createWebhook(
  store: Store,
  team: string,
  fields: { endpoint: string; events: string[]; domain_ids?: string[] | null; include_content?: boolean },
  allowPrivate: boolean,
): Promise<WebhookRec> {
  const events = checkEvents(fields.events);
  const endpoint = await checkEndpoint(fields.endpoint, allowPrivate);
  return writeOrRefuse(store, async (tx) => {
    const domainIds = await checkDomainIds(tx, team, fields.domain_ids ?? null);
    if (domainIds instanceof ApiError) return domainIds;
    const w: WebhookRec = {
      id: newId(),
      team_id: team,
      created_at: nowIso(),
      endpoint,
      events,
      status: 'enabled',
      signing_secret: newSigningSecret(),
      previous_secret: null,
      previous_secret_expires_at: null,
    };
    const stored = withExtensions(w, domainIds, fields.include_content);
    tx.webhooks.put(stored);
    return stored;
  });
}

/** Returns false when the webhook does not exist. Disabling drops its outstanding events. */
export async function updateWebhook(store: Store, team: string, id: string, fields: WebhookFields, allowPrivate: boolean): Promise<boolean> {
  const events = fields.events !== undefined ? checkEvents(fields.events) : undefined;
  const endpoint = fields.endpoint !== undefined ? await checkEndpoint(fields.endpoint, allowPrivate) : undefined;
  return writeOrRefuse(store, async (tx) => {
    const domainIds = fields.domain_ids !== undefined ? await checkDomainIds(tx, team, fields.domain_ids) : undefined;
    if (domainIds instanceof ApiError) return domainIds;
    const cur = await tx.webhooks.get(team, id);
    if (!cur) return false;
    const next = withExtensions(
      { ...cur, endpoint: endpoint ?? cur.endpoint, events: events ?? cur.events, status: fields.status ?? cur.status },
      fields.domain_ids !== undefined ? domainIds : cur.domain_ids,
      fields.include_content ?? cur.include_content,
    );
    tx.webhooks.put(next);
    if (next.status === 'disabled') await dropOutstanding(tx, team, id);
    return true;
  });
}

/** Returns false when the webhook does not exist. Its outstanding events are dropped; its log expires with retention. */
export function deleteWebhook(store: Store, team: string, id: string): Promise<boolean> {
  return store.write(async (tx) => {
    if (!(await tx.webhooks.get(team, id))) return false;
    await dropOutstanding(tx, team, id);
    tx.webhooks.remove(team, id);
    return true;
  });
}

/** A new secret; the current one keeps signing next to it for 24 h. Null when the webhook does not exist. */
export function rotateSecret(store: Store, team: string, id: string): Promise<WebhookRec | null> {
  return store.write(async (tx) => {
    const cur = await tx.webhooks.get(team, id);
    if (!cur) return null;
    const next: WebhookRec = {
      ...cur,
      signing_secret: newSigningSecret(),
      previous_secret: cur.signing_secret,
      previous_secret_expires_at: new Date(Date.now() + ROTATION_OVERLAP_MS).toISOString(),
    };
    tx.webhooks.put(next);
    return next;
  });
}

/**
 * One immediate extra attempt of a finished (`success` or `failed`) event, same id, no retries
 * after it (docs/api.md §14.4). Throws the documented 404 or 422, changing nothing.
 */
export async function replayEvent(store: Store, team: string, webhookId: string, eventId: string): Promise<void> {
  await writeOrRefuse(store, async (tx) => {
    const w = await tx.webhooks.get(team, webhookId);
    if (!w) return errors.notFound('Webhook');
    const ev = await tx.webhookEvents.get(team, eventId);
    if (!ev || ev.webhook_id !== webhookId) return errors.notFound('Webhook event');
    if (ev.status !== 'success' && ev.status !== 'failed')
      return errors.validation(`The webhook event is still being delivered (status \`${ev.status}\`); only \`success\` and \`failed\` events can be replayed.`);
    if (w.status !== 'enabled') return errors.validation('The webhook is disabled; enable it to replay events.');
    await moveEvent(tx, ev, Date.now(), { status: 'pending', replay: true });
    return null;
  });
}
