// The suppression list (docs/api.md §16): addresses Posthorn will not send to, one entry per
// address and team, matched case-insensitively. Added by hand (API), on permanent bounce and on
// complaint; removing an entry makes the address sendable again.
import type { StoreReader, SuppressionRec, SuppressionOrigin, Tx } from '../store';
import { newId, nowIso } from '../ids';

/** Which entry: by id, or by email address (either form of an `{id_or_email}` path segment). */
export type SuppressionRef = { id: string } | { email: string };

export function findSuppression(store: StoreReader, team: string, ref: SuppressionRef): Promise<SuppressionRec | undefined> {
  return 'id' in ref ? store.suppressions.get(team, ref.id) : store.suppressions.find('email', ref.email.toLowerCase(), team);
}

export async function isSuppressed(store: StoreReader, team: string, email: string): Promise<boolean> {
  return (await findSuppression(store, team, { email })) !== undefined;
}

/**
 * Suppress a (validated) address. An address already on the list keeps its entry, origin and id;
 * the entry is returned either way.
 */
export async function suppress(tx: Tx, team: string, email: string, origin: SuppressionOrigin, sourceId: string | null = null): Promise<SuppressionRec> {
  const existing = await findSuppression(tx, team, { email });
  if (existing) return existing;
  const rec: SuppressionRec = { id: newId(), team_id: team, created_at: nowIso(), email, origin, source_id: sourceId };
  tx.suppressions.put(rec);
  return rec;
}

/** Remove an entry; returns it, or undefined when there was none. */
export async function unsuppress(tx: Tx, team: string, ref: SuppressionRef): Promise<SuppressionRec | undefined> {
  const rec = await findSuppression(tx, team, ref);
  if (rec) tx.suppressions.remove(team, rec.id);
  return rec;
}
