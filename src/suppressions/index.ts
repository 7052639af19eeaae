// The suppression list (docs/api.md §16): addresses Posthorn will not send to, one entry per
// address and team, matched case-insensitively. Added by hand (API), on permanent bounce and on
// complaint; removing an entry makes the address sendable again.
import type { StoreReader, SuppressionRec, SuppressionOrigin, Tx } from '../store';
import type { Events } from '../events';
import { newId, nowIso } from '../ids';

/** Which entry: by id, or by email address (either form of an `{id_or_email}` path segment). */
export type SuppressionRef = { id: string } | { email: string };

export function findSuppression(store: StoreReader, team: string, ref: SuppressionRef): Promise<SuppressionRec | undefined> {
  return 'id' in ref ? store.suppressions.get(team, ref.id) : store.suppressions.find('email', ref.email.toLowerCase(), team);
}

export async function isSuppressed(store: StoreReader, team: string, email: string): Promise<boolean> {
  return (await findSuppression(store, team, { email })) !== undefined;
}

/** `data` of `suppression.added` and `suppression.removed` (docs/api.md §14.3). */
export function suppressionEventData(s: SuppressionRec): Record<string, unknown> {
  return { id: s.id, email: s.email, origin: s.origin, source_id: s.source_id, created_at: s.created_at };
}

/**
 * Suppress a (validated) address, with `suppression.added`. An address already on the list keeps
 * its entry, origin and id (and nothing is emitted); the entry is returned either way.
 */
export async function suppress(
  events: Events,
  tx: Tx,
  team: string,
  email: string,
  origin: SuppressionOrigin,
  sourceId: string | null = null,
): Promise<SuppressionRec> {
  const existing = await findSuppression(tx, team, { email });
  if (existing) return existing;
  const rec: SuppressionRec = { id: newId(), team_id: team, created_at: nowIso(), email, origin, source_id: sourceId };
  tx.suppressions.put(rec);
  await events.other(tx, team, 'suppression.added', rec.id, suppressionEventData(rec));
  return rec;
}

/** Remove an entry, with `suppression.removed`; returns it, or undefined when there was none. */
export async function unsuppress(events: Events, tx: Tx, team: string, ref: SuppressionRef): Promise<SuppressionRec | undefined> {
  const rec = await findSuppression(tx, team, ref);
  if (!rec) return undefined;
  tx.suppressions.remove(team, rec.id);
  await events.other(tx, team, 'suppression.removed', rec.id, suppressionEventData(rec));
  return rec;
}
