// The suppression list (api-reference §16): addresses Posthorn will not send to, one entry per
// address and team, matched case-insensitively. Added by hand (API), on permanent bounce and on
// complaint; removing an entry makes the address sendable again.
import type { Store, SuppressionRec, SuppressionOrigin } from '../store';
import { newId, nowIso } from '../ids';

export const ORIGINS: SuppressionOrigin[] = ['bounce', 'complaint', 'manual'];

/** Which entry: by id, or by email address (either form of an `{id_or_email}` path segment). */
export type SuppressionRef = { id: string } | { email: string };

export function findSuppression(store: Store, team: string, ref: SuppressionRef): SuppressionRec | undefined {
  return 'id' in ref ? store.suppressions.get(team, ref.id) : store.suppressions.find('email', ref.email.toLowerCase(), team);
}

export function isSuppressed(store: Store, team: string, email: string): boolean {
  return findSuppression(store, team, { email }) !== undefined;
}

/**
 * Inside a transaction: suppress a (validated) address. An address already on the list keeps its
 * entry, origin and id; the entry is returned either way.
 */
export function suppress(store: Store, team: string, email: string, origin: SuppressionOrigin, sourceId: string | null = null): SuppressionRec {
  const existing = findSuppression(store, team, { email });
  if (existing) return existing;
  const rec: SuppressionRec = { id: newId(), team_id: team, created_at: nowIso(), email, origin, source_id: sourceId };
  store.suppressions.putInTxn(rec);
  return rec;
}

/** Inside a transaction: remove an entry; returns it, or undefined when there was none. */
export function unsuppress(store: Store, team: string, ref: SuppressionRef): SuppressionRec | undefined {
  const rec = findSuppression(store, team, ref);
  if (rec) store.suppressions.removeInTxn(team, rec.id);
  return rec;
}
