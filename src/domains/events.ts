// Every write of a domain goes through here, so each one commits with its webhook event (docs/api.md
// §14.2): `domain.created` (POST /domains, a completed claim), `domain.updated` (PATCH, a
// verification request or check that moved a record or the status, a DKIM rotation) and
// `domain.deleted` (DELETE, the holder's domain of a completed claim). The payload names the DNS
// records, which depend on the install's hosts (smtp.hostname, public_url).
import type { DomainRec, Tx } from '../store';
import type { Events } from '../events';
import { recordViews, type RecordHosts } from './records';

export interface DomainEventDeps {
  events: Events;
  hosts: RecordHosts;
}

/** `data` of domain.* (docs/api.md §14.3): the domain as GET /domains/{id} shows it, in Resend's fields. */
export function domainEventData(d: DomainRec, hosts: RecordHosts): Record<string, unknown> {
  return { id: d.id, name: d.name, status: d.status, created_at: d.created_at, region: d.region, records: recordViews(d, hosts).records };
}

/** In a unit of work: store a new domain, with `domain.created`. */
export async function addDomain(deps: DomainEventDeps, tx: Tx, d: DomainRec): Promise<void> {
  tx.domains.put(d);
  await deps.events.other(tx, d.team_id, 'domain.created', d.id, domainEventData(d, deps.hosts), { domain_id: d.id });
}

/**
 * In a unit of work: store `after` over `before`, with `domain.updated` when anything changed but
 * the times of its checks (a re-check that finds what it found before is no update).
 */
export async function putDomain(deps: DomainEventDeps, tx: Tx, before: DomainRec, after: DomainRec): Promise<void> {
  tx.domains.put(after);
  const { verification: _, ...was } = before;
  const { verification: __, ...now } = after;
  if (JSON.stringify(was) === JSON.stringify(now)) return;
  await deps.events.other(tx, after.team_id, 'domain.updated', after.id, domainEventData(after, deps.hosts), { domain_id: after.id });
}

/** In a unit of work: remove a domain, with `domain.deleted` (the domain as it was). */
export async function removeDomain(deps: DomainEventDeps, tx: Tx, d: DomainRec): Promise<void> {
  tx.domains.remove(d.team_id, d.id);
  await deps.events.other(tx, d.team_id, 'domain.deleted', d.id, domainEventData(d, deps.hosts), { domain_id: d.id });
}
