// The suppression list (docs/api.md §16): addresses Posthorn will not send to, one entry per
// address and team, matched case-insensitively. Added by hand (API), on complaint, and on a
// permanent bounce whose class says the address is at fault (README.md, "Bounce classes and
// incidents"): `recipient` at once, `mailbox_full` at the third within 30 days; the other classes
// never. Removing an entry makes the address sendable again; one action lifts every bounce entry
// a filter names (an incident's, a class's by the rules in force), when they were made wrongly.
import type { Store, StoreReader, SuppressionRec, SuppressionOrigin, Tx, IncidentRec } from '../store';
import type { Events } from '../events';
import { newId, nowIso } from '../ids';
import { type BounceClass, type BounceClassifier, replyInput } from '../mail/bounce-class';

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

/** What a bounce entry records: the class and the reply that caused it, and the site that said it. */
export interface BounceDetail {
  class: BounceClass;
  reply: string;
  site: string | null;
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
  bounce: BounceDetail | null = null,
): Promise<SuppressionRec> {
  const existing = await findSuppression(tx, team, { email });
  if (existing) return existing;
  const rec: SuppressionRec = { id: newId(), team_id: team, created_at: nowIso(), email, origin, source_id: sourceId };
  if (bounce) Object.assign(rec, { class: bounce.class, reply: bounce.reply, site: bounce.site });
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

/** A full mailbox suppresses at this many permanent bounces of the address… */
export const MAILBOX_FULL_BOUNCES = 3;
/** …within this long (ms). */
export const MAILBOX_FULL_WINDOW_MS = 30 * 86_400_000;

/** What a permanent bounce of a class does to its address: suppress it now, after repeated ones, or never. */
export function suppressionRule(cls: BounceClass): 'now' | 'repeated' | 'never' {
  return cls === 'recipient' ? 'now' : cls === 'mailbox_full' ? 'repeated' : 'never';
}

/**
 * In a unit of work: a permanent bounce of `email` (an address the team sent to), of the class its
 * reply has. Suppresses it when the class says so (suppressionRule); a full mailbox is counted
 * instead, and suppressed at its MAILBOX_FULL_BOUNCES-th bounce within MAILBOX_FULL_WINDOW_MS.
 * Returns the entry when the address is (now) suppressed, else null.
 */
export async function suppressBounce(
  events: Events,
  tx: Tx,
  team: string,
  email: string,
  sourceId: string,
  bounce: BounceDetail,
  now = Date.now(),
): Promise<SuppressionRec | null> {
  const rule = suppressionRule(bounce.class);
  if (rule === 'never') return null;
  if (rule === 'repeated') {
    const seen = await tx.fullMailboxes.find('email', email.toLowerCase(), team);
    const at = [...(seen?.at ?? []).filter((t) => t > now - MAILBOX_FULL_WINDOW_MS), now];
    if (at.length < MAILBOX_FULL_BOUNCES) {
      tx.fullMailboxes.put({
        id: seen?.id ?? newId(),
        team_id: team,
        created_at: seen?.created_at ?? nowIso(),
        email,
        at,
        expires_at: now + MAILBOX_FULL_WINDOW_MS,
      });
      return null;
    }
    if (seen) tx.fullMailboxes.remove(team, seen.id);
  }
  return suppress(events, tx, team, email, 'bounce', sourceId, bounce);
}

/** Which bounce entries one action lifts (docs/api.md §16.1); every given filter must match. */
export interface LiftFilter {
  /** Entries made while this incident lasted, at its site. */
  incident?: IncidentRec;
  /** The class their reply has under the rules in force (an earlier version, or earlier rules, said otherwise). */
  classes?: BounceClass[];
  /** Their reply contains this (case-insensitive). */
  replyContains?: string;
  /** Made at or after / before this time (ms). */
  since?: number;
  until?: number;
}

/** An incident's entries: made from its first reply until a minute after its last (the last replies' outcomes commit after it). */
const INCIDENT_SLACK_MS = 60_000;

/** The reply that caused a bounce entry: recorded on it, or (older entries) its email's last reply for the address. */
async function replyOf(store: StoreReader, s: SuppressionRec): Promise<{ code: number; text: string } | null> {
  if (s.reply) return { code: Number(/^\d{3}/.exec(s.reply)?.[0] ?? 0), text: s.reply };
  if (!s.source_id) return null;
  const email = await store.emails.get(s.team_id, s.source_id);
  const lower = s.email.toLowerCase();
  for (const attempt of [...(email?.attempts ?? [])].reverse()) {
    const r = attempt.results.find((x) => x.recipient.toLowerCase() === lower);
    if (r && r.code >= 500) return { code: r.code, text: r.reply };
  }
  return null;
}

/** Does a bounce entry match the filter (its reply read only when a filter needs it)? */
async function matches(store: StoreReader, s: SuppressionRec, f: LiftFilter, classifier: BounceClassifier): Promise<boolean> {
  if (s.origin !== 'bounce') return false;
  const at = Date.parse(s.created_at);
  if (f.since !== undefined && at < f.since) return false;
  if (f.until !== undefined && at >= f.until) return false;
  if (f.incident) {
    if (at < Date.parse(f.incident.created_at) || at > Date.parse(f.incident.last_seen_at) + INCIDENT_SLACK_MS) return false;
    if (s.site && s.site !== f.incident.site) return false;
  }
  if (!f.classes && f.replyContains === undefined) return true;
  const reply = await replyOf(store, s);
  if (!reply) return false;
  if (f.replyContains !== undefined && !reply.text.toLowerCase().includes(f.replyContains.toLowerCase())) return false;
  return !f.classes || f.classes.includes(classifier.classify(replyInput(reply)));
}

/** Entries removed in one unit of work. */
const LIFT_BATCH = 500;

/**
 * Lift every bounce entry of the team the filter names (complaints and entries added by hand are
 * never lifted this way), each with `suppression.removed`; `dryRun` only finds them. Resolves with them, oldest first.
 */
export async function liftSuppressions(
  store: Store,
  events: Events,
  team: string,
  f: LiftFilter,
  classifier: BounceClassifier,
  dryRun = false,
): Promise<SuppressionRec[]> {
  const all = (await store.suppressions.page(team, {}, null)).data.reverse();
  const found: SuppressionRec[] = [];
  for (const s of all) if (await matches(store, s, f, classifier)) found.push(s);
  if (dryRun) return found;
  for (let i = 0; i < found.length; i += LIFT_BATCH) {
    const batch = found.slice(i, i + LIFT_BATCH);
    // An entry replaced meanwhile (removed and added again) is a new one: only the entries found go.
    await store.write(async (tx) => {
      for (const s of batch) {
        if ((await tx.suppressions.get(team, s.id))?.created_at !== s.created_at) continue;
        tx.suppressions.remove(team, s.id);
        await events.other(tx, team, 'suppression.removed', s.id, suppressionEventData(s));
      }
    });
  }
  return found;
}
