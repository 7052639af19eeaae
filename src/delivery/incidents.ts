// Deliverability incidents (docs/api.md §19.9; README.md, "Bounce classes and incidents"): a reply
// whose class speaks of the sender — `reputation` (a block list, a provider's verdict on the IP or
// domain) or `authentication` (SPF, DKIM, DMARC, reverse DNS) — is an incident of the sender, not a
// verdict on the recipient. Nobody is suppressed for it; the site is suspended (shaping.ts
// Shaper.outcome) and the incident recorded, in the unit of work that records the attempt.
// Replies of one site and class count on one incident while they keep coming; once the site has
// given none for INCIDENT_QUIET_MS the incident is closed, and the next reply opens another — each
// opening is a `deliverability.incident` event, sent to the webhooks that subscribe to it.
// A blocklist listing the doctor finds is an incident too (kind `listing`, docs/deliverability.md
// §3.1): opened once per listing, closed when the zone answers clean.
import type { Events } from '../events';
import { newId } from '../ids';
import { type BounceClass, linksIn, SENDER_CLASSES } from '../mail/bounce-class';
import { enhancedCode, type Reply } from '../mail/smtp-reply';
import type { Incident } from '../schemas/deliverability';
import type { EmailRec, IncidentListing, IncidentRec, Tx } from '../store';

/** An incident closes after this long without a reply of its site and class (ms). */
export const INCIDENT_QUIET_MS = 24 * 3_600_000;
/** Links kept on one incident, at most. */
const MAX_LINKS = 5;

/** A reply of the sender's classes in an attempt: what an incident is made of. */
export interface SenderReply {
  reply: Reply;
  class: BounceClass;
  /** The host that said it (a refusing greeting's host when no transaction was opened). */
  remoteHost: string | null;
  remoteIp: string | null;
}

/**
 * The replies of an attempt that are incidents of the sender, the first of each class: remote
 * replies only (what Posthorn made up of a DNS or connection failure speaks of nobody), the
 * recipients' and those of greetings that refused the connection.
 */
export function senderReplies(
  replies: { reply: Reply; class: BounceClass | null }[],
  at: { host: string | null; ip: string | null; refusedBy?: string | null },
  refusals: { reply: Reply; class: BounceClass }[] = [],
): SenderReply[] {
  const out: SenderReply[] = [];
  const add = (reply: Reply, cls: BounceClass | null, host: string | null, ip: string | null) => {
    if (reply.local || !cls || !SENDER_CLASSES.includes(cls) || out.some((s) => s.class === cls)) return;
    out.push({ reply, class: cls, remoteHost: host, remoteIp: ip });
  };
  for (const r of replies) add(r.reply, r.class, at.host, at.ip);
  for (const r of refusals) add(r.reply, r.class, at.refusedBy ?? at.host, null);
  return out;
}

/** What was seen, for `recordIncident`. */
export interface IncidentSeen extends SenderReply {
  team: string;
  site: string;
  /** The local address Posthorn sent from. */
  sendingIp: string | null;
  email: EmailRec;
  at: number;
  /** When the site's suspension ends (ms), null when shaping is off. */
  suspendedUntil: number | null;
}

/** A team's incident of this site and class, as a further reply finds it (the `latest` index). */
export const latestKey = (site: string, cls: BounceClass) => `${site} ${cls}`;

/**
 * In a unit of work: count a sender reply on the team's open incident of its site and class, or
 * open one (its event goes to the webhooks subscribed to `deliverability.incident`). Returns the
 * incident and whether it was opened now.
 */
export async function recordIncident(tx: Tx, events: Events, s: IncidentSeen): Promise<{ incident: IncidentRec; opened: boolean }> {
  const latest = await tx.incidents.find('latest', latestKey(s.site, s.class), s.team);
  const at = new Date(s.at).toISOString();
  const until = s.suspendedUntil ? new Date(s.suspendedUntil).toISOString() : null;
  const links = linksIn(s.reply.text);
  if (latest && s.at - Date.parse(latest.last_seen_at) < INCIDENT_QUIET_MS) {
    const incident: IncidentRec = {
      ...latest,
      last_seen_at: at,
      count: latest.count + 1,
      last_reply: s.reply.text,
      links: [...new Set([...latest.links, ...links])].slice(0, MAX_LINKS),
      suspended_until: until && (!latest.suspended_until || until > latest.suspended_until) ? until : latest.suspended_until,
    };
    tx.incidents.put(incident);
    return { incident, opened: false };
  }
  if (latest) tx.incidents.put({ ...latest, latest: false });
  const incident = await openIncident(tx, events, {
    id: newId(),
    team_id: s.team,
    created_at: at,
    class: s.class,
    site: s.site,
    latest: true,
    last_seen_at: at,
    count: 1,
    reply: s.reply.text,
    last_reply: s.reply.text,
    code: s.reply.code,
    enhanced_code: enhancedCode(s.reply),
    remote_host: s.remoteHost,
    remote_ip: s.remoteIp,
    sending_ip: s.sendingIp,
    domain: s.email.domain,
    email_id: s.email.id,
    links,
    suspended_until: until,
  });
  return { incident, opened: true };
}

/**
 * The one way an incident is opened, a reply's or a listing's: the record and its
 * `deliverability.incident` event, in the caller's unit of work.
 */
async function openIncident(tx: Tx, events: Events, incident: IncidentRec): Promise<IncidentRec> {
  tx.incidents.put(incident);
  await events.other(tx, incident.team_id, 'deliverability.incident', incident.id, incidentView(incident, Date.parse(incident.created_at)));
  return incident;
}

/**
 * In a unit of work: open a team's incident for a blocklist listing the doctor found
 * (delivery/listings.ts, docs/deliverability.md §3.1) — once per listing: the listing's record keeps
 * the incident's id, `closeListingIncident` closes it when the zone answers clean.
 */
export function recordListingIncident(tx: Tx, events: Events, team: string, l: IncidentListing, at: number): Promise<IncidentRec> {
  const iso = new Date(at).toISOString();
  const what = `${l.target} is listed on ${l.zone} (${l.codes.join(', ')}): ${l.meaning}${l.reason ? ` — ${l.reason}` : ''}`;
  return openIncident(tx, events, {
    id: newId(),
    team_id: team,
    created_at: iso,
    kind: 'listing',
    listing: l,
    class: 'reputation',
    site: l.zone,
    latest: false,
    last_seen_at: iso,
    count: 1,
    reply: what,
    last_reply: what,
    code: 0,
    enhanced_code: null,
    remote_host: null,
    remote_ip: null,
    sending_ip: l.target_type === 'ip' ? l.target : null,
    domain: l.target_type === 'domain' ? l.target : '',
    email_id: '',
    links: [...new Set([...(l.delisting_url ? [l.delisting_url] : []), ...linksIn(l.reason ?? '')])].slice(0, MAX_LINKS),
    suspended_until: null,
    closed_at: null,
  });
}

/** A listing incident seen again (still listed), or closed (the zone answered clean). */
export async function touchListingIncident(tx: Tx, team: string, id: string, at: number, close: boolean): Promise<void> {
  const r = await tx.incidents.get(team, id);
  if (!r || r.closed_at) return;
  const iso = new Date(at).toISOString();
  tx.incidents.put({ ...r, last_seen_at: iso, ...(close ? { closed_at: iso } : {}) });
}

/** An incident on the wire (docs/api.md §19.9): open until its site has been quiet for INCIDENT_QUIET_MS. */
export function incidentView(r: IncidentRec, now: number): Incident {
  // A listing's incident is open until the zone answers clean; a reply's until its site is quiet.
  const closes = r.kind === 'listing' ? (r.closed_at ? Date.parse(r.closed_at) : Number.POSITIVE_INFINITY) : Date.parse(r.last_seen_at) + INCIDENT_QUIET_MS;
  return {
    object: 'incident',
    id: r.id,
    kind: r.kind ?? 'reply',
    listing: r.listing ?? null,
    class: r.class as Incident['class'],
    site: r.site,
    status: now < closes ? 'open' : 'closed',
    created_at: r.created_at,
    last_seen_at: r.last_seen_at,
    closed_at: now < closes ? null : new Date(closes).toISOString(),
    count: r.count,
    reply: r.reply,
    last_reply: r.last_reply,
    code: r.kind === 'listing' ? null : r.code,
    enhanced_code: r.enhanced_code,
    remote_host: r.remote_host,
    remote_ip: r.remote_ip,
    sending_ip: r.sending_ip,
    domain: r.domain || null,
    email_id: r.email_id || null,
    links: r.links,
    suspended_until: r.suspended_until,
  };
}
