// Blocklist listings acted on (docs/deliverability.md §3.1): after each run of the doctor in `serve`,
// every zone's verdict on every sending address and domain updates that pair's standing in the
// store (`listings`, install-wide). A new listing opens one incident per team concerned (the teams
// that send from the address; the domain's team) through delivery/incidents.ts, with its
// `deliverability.incident` webhook; each later run that still finds it only touches it; a `clean`
// answer closes it. An `unknown` answer (timeout, SERVFAIL, refusal code) changes nothing: never
// listed, never clean. `listedTargets` is what the sending addresses' rotation reads (delivery/ips.ts).
import type { Events } from '../events';
import { recordListingIncident, touchListingIncident } from './incidents';
import { newId } from '../ids';
import { LISTINGS_TEAM, type ListingRec, type Store, type StoreReader } from '../store';
import type { TargetVerdict } from '../health/blocklists';
import { codeMeaning, zoneInfo } from '../dns/blocklist-zones';

export { LISTINGS_TEAM };

/** Is this sending address (or domain) listed on any zone now? The last definite answer decides. */
export async function isListed(store: Pick<StoreReader, 'listings'>, target: string): Promise<boolean> {
  return (await listedTargets(store)).has(target);
}

/** Every address and domain listed on some zone now: what the sending IPs' rotation skips (delivery/ips.ts). */
export async function listedTargets(store: Pick<StoreReader, 'listings'>): Promise<Set<string>> {
  return new Set((await store.listings.all(LISTINGS_TEAM)).filter((l) => l.listed_since !== null).map((l) => l.target));
}

/** Every zone's standing on this address or domain. */
export async function listingsOf(store: Pick<StoreReader, 'listings'>, target: string): Promise<ListingRec[]> {
  return (await store.listings.all(LISTINGS_TEAM)).filter((l) => l.target === target);
}

/**
 * Apply one run's verdicts. `teamsOf` names the teams an incident of a target goes to. One unit of
 * work per zone and target, so that nodes checking the same domain at once open one incident.
 */
export async function applyVerdicts(
  store: Store,
  events: Events,
  verdicts: TargetVerdict[],
  teamsOf: (v: TargetVerdict) => string[],
  at: number,
): Promise<void> {
  const iso = new Date(at).toISOString();
  for (const v of verdicts) {
    await store.write(async (tx) => {
      const key = `${v.zone} ${v.target}`;
      const prev = await tx.listings.find('key', key, LISTINGS_TEAM);
      const base: ListingRec = prev ?? {
        id: newId(),
        team_id: LISTINGS_TEAM,
        created_at: iso,
        zone: v.zone,
        target: v.target,
        target_type: v.target_type,
        status: 'unknown',
        codes: [],
        meaning: null,
        reason: null,
        why: null,
        delisting_url: zoneInfo(v.zone)?.delisting ?? null,
        listed_since: null,
        checked_at: iso,
        incidents: [],
      };
      const next: ListingRec = { ...base, status: v.status, checked_at: iso, why: v.status === 'unknown' ? v.why : null };
      if (v.status === 'listed') {
        next.codes = v.codes;
        next.meaning = codeMeaning(v.zone, v.codes);
        next.reason = v.reason;
        if (base.listed_since === null) {
          next.listed_since = iso;
          next.incidents = [];
          const listing = {
            zone: v.zone,
            target: v.target,
            target_type: v.target_type,
            codes: v.codes,
            meaning: next.meaning,
            reason: v.reason,
            delisting_url: next.delisting_url,
          };
          for (const team of teamsOf(v)) next.incidents.push({ team_id: team, id: (await recordListingIncident(tx, events, team, listing, at)).id });
        } else for (const i of base.incidents) await touchListingIncident(tx, i.team_id, i.id, at, false);
      } else if (v.status === 'clean') {
        for (const i of base.incidents) await touchListingIncident(tx, i.team_id, i.id, at, true);
        Object.assign(next, { codes: [], meaning: null, reason: null, listed_since: null, incidents: [] });
      }
      tx.listings.put(next);
    });
  }
}
