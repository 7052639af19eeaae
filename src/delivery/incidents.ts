// Deliverability incidents (docs/api.md §19.9; README.md, "Bounce classes and incidents"): a reply
// whose class speaks of the sender — `reputation` (a block list, a provider's verdict on the IP or
// domain) or `authentication` (SPF, DKIM, DMARC, reverse DNS) — is an incident of the sender, not a
// verdict on the recipient. Nobody is suppressed for it; the site is suspended (shaping.ts
// Shaper.outcome) and the incident recorded, in the unit of work that records the attempt.
// Replies of one site and class count on one incident while they keep coming; once the site has
// given none for INCIDENT_QUIET_MS the incident is closed, and the next reply opens another — each
// opening is a `deliverability.incident` event, sent to the webhooks that subscribe to it.
import type { Events } from '../events';
import { newId } from '../ids';
import { type BounceClass, linksIn, SENDER_CLASSES } from '../mail/bounce-class';
import { enhancedCode, type Reply } from '../mail/smtp-reply';
import type { Incident } from '../schemas/deliverability';
import type { EmailRec, IncidentRec, Tx } from '../store';

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
  const incident: IncidentRec = {
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
  };
  tx.incidents.put(incident);
  await events.other(tx, s.team, 'deliverability.incident', incident.id, incidentView(incident, s.at));
  return { incident, opened: true };
}

/** An incident on the wire (docs/api.md §19.9): open until its site has been quiet for INCIDENT_QUIET_MS. */
export function incidentView(r: IncidentRec, now: number): Incident {
  const closes = Date.parse(r.last_seen_at) + INCIDENT_QUIET_MS;
  return {
    object: 'incident',
    id: r.id,
    class: r.class as Incident['class'],
    site: r.site,
    status: now < closes ? 'open' : 'closed',
    created_at: r.created_at,
    last_seen_at: r.last_seen_at,
    closed_at: now < closes ? null : new Date(closes).toISOString(),
    count: r.count,
    reply: r.reply,
    last_reply: r.last_reply,
    code: r.code,
    enhanced_code: r.enhanced_code,
    remote_host: r.remote_host,
    remote_ip: r.remote_ip,
    sending_ip: r.sending_ip,
    domain: r.domain,
    email_id: r.email_id,
    links: r.links,
    suspended_until: r.suspended_until,
  };
}
