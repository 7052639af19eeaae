// The DNS records a domain must publish (docs/mail.md §2, docs/api.md §9.7) and how their check
// results add up to the domain's status (§9.8). `records[]` holds only Resend's record kinds (SPF,
// DKIM, Receiving, Tracking): clients with typed enums reject any other. The DMARC record Posthorn
// recommends is checked like the others but answered apart, in `recommended_records`.
import type { Config } from '../config';
import type { DomainRec, DomainStatus } from '../store';
import type { DnsRecord } from '../schemas/domains';
import { keyRecord, previousRemovable } from './dkim';

export type RecordId =
  | 'SPF:MX'
  | 'SPF:TXT'
  | 'DKIM'
  | 'Receiving'
  | 'DMARC'
  | 'Tracking'
  // A domain's second key (Ed25519), a rotation's next keys and the retired ones (docs/mail.md §2.1):
  // listed as DKIM records, never counted towards the domain's status.
  | 'DKIM:ed25519'
  | 'DKIM:next'
  | 'DKIM:next-ed25519'
  | 'DKIM:previous'
  | 'DKIM:previous-ed25519';

export const SENDING_RECORDS: RecordId[] = ['SPF:MX', 'SPF:TXT', 'DKIM'];
export const RECEIVING_RECORDS: RecordId[] = ['Receiving'];

/** Records Posthorn recommends without requiring them: never in `records[]`. */
const RECOMMENDED: RecordId[] = ['DMARC'];

export interface RecordHosts {
  smtpHostname: string;
  publicUrl: string;
  /** `deliverability.dmarc_rua`: where every domain's DMARC reports go; unset, each domain's own (dmarcRua). */
  dmarcRua?: string | null;
}

/** The install's hosts the records name: `smtp.hostname`, `public_url` (and `deliverability.dmarc_rua` when given). */
export const recordHosts = (c: Pick<Config, 'smtp' | 'public_url'> & { deliverability?: Pick<Config['deliverability'], 'dmarc_rua'> }): RecordHosts => ({
  smtpHostname: c.smtp.hostname,
  publicUrl: c.public_url,
  dmarcRua: c.deliverability?.dmarc_rua ?? null,
});

/** The local part of the address DMARC reports reach Posthorn at, on each domain's return-path host. */
export const DMARC_RUA_LOCAL = 'dmarc-reports';

/**
 * Where a domain's DMARC aggregate reports go (RFC 7489 §6.3 `rua`; docs/deliverability.md §4): the
 * configured address, else `dmarc-reports@` its return-path host — whose MX (a record every sending
 * domain publishes) is Posthorn, and which shares the domain's organizational domain, so receivers
 * need no external-destination record (RFC 7489 §7.1).
 */
export const dmarcRua = (d: Pick<DomainRec, 'name' | 'custom_return_path'>, configured?: string | null): string =>
  configured || `${DMARC_RUA_LOCAL}@${d.custom_return_path}.${d.name}`;

/** Every record of a domain, in display order, with fully qualified lookup names. */
export function recordSpecs(d: DomainRec, hosts: RecordHosts, now = Date.now()) {
  const specs: { id: RecordId; view: Omit<DnsRecord, 'status'>; fqdn: string }[] = [];
  const rp = d.custom_return_path;
  if (d.capabilities.sending === 'enabled') {
    specs.push(
      { id: 'SPF:MX', fqdn: `${rp}.${d.name}`, view: { record: 'SPF', name: rp, type: 'MX', value: hosts.smtpHostname, ttl: 'Auto', priority: 10 } },
      { id: 'SPF:TXT', fqdn: `${rp}.${d.name}`, view: { record: 'SPF', name: rp, type: 'TXT', value: `v=spf1 a:${hosts.smtpHostname} ~all`, ttl: 'Auto' } },
    );
    const dkim = (id: RecordId, selector: string, value: string) =>
      specs.push({ id, fqdn: `${selector}._domainkey.${d.name}`, view: { record: 'DKIM', name: `${selector}._domainkey`, type: 'TXT', value, ttl: 'Auto' } });
    dkim('DKIM', d.dkim.selector, keyRecord(d.dkim, 'rsa'));
    if (d.dkim_ed25519) dkim('DKIM:ed25519', d.dkim_ed25519.selector, keyRecord(d.dkim_ed25519, 'ed25519'));
    if (d.dkim_next) {
      dkim('DKIM:next', d.dkim_next.rsa.selector, keyRecord(d.dkim_next.rsa, 'rsa'));
      if (d.dkim_next.ed25519) dkim('DKIM:next-ed25519', d.dkim_next.ed25519.selector, keyRecord(d.dkim_next.ed25519, 'ed25519'));
    }
    // Retired selectors stay listed (to keep) until their grace period is over.
    if (d.dkim_previous && !previousRemovable(d, now)) {
      const [rsa, ed] = d.dkim_previous.records;
      if (rsa) dkim('DKIM:previous', rsa.selector, rsa.value);
      if (ed) dkim('DKIM:previous-ed25519', ed.selector, ed.value);
    }
  }
  if (d.capabilities.receiving === 'enabled')
    specs.push({ id: 'Receiving', fqdn: d.name, view: { record: 'Receiving', name: '@', type: 'MX', value: hosts.smtpHostname, ttl: 'Auto', priority: 10 } });
  if (d.tracking_subdomain)
    specs.push({
      id: 'Tracking',
      fqdn: `${d.tracking_subdomain}.${d.name}`,
      view: { record: 'Tracking', name: d.tracking_subdomain, type: 'CNAME', value: new URL(hosts.publicUrl).hostname, ttl: 'Auto' },
    });
  specs.push({
    id: 'DMARC',
    fqdn: `_dmarc.${d.name}`,
    view: { record: 'DMARC', name: '_dmarc', type: 'TXT', value: `v=DMARC1; p=none; rua=mailto:${dmarcRua(d, hosts.dmarcRua)};`, ttl: 'Auto' },
  });
  return specs;
}

/** The records to publish (`records`) and the recommended ones (`recommended_records`), with their status. */
export function recordViews(d: DomainRec, hosts: RecordHosts): { records: DnsRecord[]; recommended_records: DnsRecord[] } {
  const out = { records: [] as DnsRecord[], recommended_records: [] as DnsRecord[] };
  for (const { id, view } of recordSpecs(d, hosts))
    (RECOMMENDED.includes(id) ? out.recommended_records : out.records).push({ ...view, status: d.record_status[id] ?? 'not_started' });
  return out;
}

type CapState = 'verified' | 'pending' | 'failed' | 'temporary_failure' | 'not_started';

function capability(d: DomainRec, ids: RecordId[]): CapState {
  const st = ids.map((id) => d.record_status[id] ?? 'not_started');
  if (st.every((s) => s === 'verified')) return 'verified';
  if (st.every((s) => s === 'not_started')) return 'not_started';
  if (st.includes('failed')) return 'failed';
  if (st.includes('temporary_failure')) return 'temporary_failure';
  return 'pending';
}

/** Domain status from its record statuses (docs/api.md §9.8). DMARC and Tracking never count. */
export function deriveStatus(d: DomainRec): DomainStatus {
  const caps: CapState[] = [];
  if (d.capabilities.sending === 'enabled') caps.push(capability(d, SENDING_RECORDS));
  if (d.capabilities.receiving === 'enabled') caps.push(capability(d, RECEIVING_RECORDS));
  if (caps.length === 0 || caps.every((c) => c === 'not_started')) return 'not_started';
  if (caps.includes('temporary_failure')) return 'temporary_failure';
  if (caps.every((c) => c === 'verified')) return 'verified';
  if (caps.every((c) => c === 'failed')) return 'failed';
  if (caps.includes('failed')) return 'partially_failed';
  if (caps.includes('verified')) return 'partially_verified';
  return 'pending';
}

/**
 * Why mail can no longer be sent from an email's domain — deleted, or not verified (any more) —
 * or null when it can: the `failed.reason` of `email.failed` (docs/api.md §14.3).
 */
export function sendingBlocked(d: DomainRec | undefined): 'domain_deleted' | 'domain_not_verified' | null {
  if (!d) return 'domain_deleted';
  return canSendFrom(d) ? null : 'domain_not_verified';
}

/**
 * May mail be sent from this domain? Its SPF and DKIM records must be verified; a verified domain
 * that lost a record keeps sending while it is re-checked (temporary_failure, docs/api.md §7.1).
 */
export function canSendFrom(d: DomainRec): boolean {
  if (d.capabilities.sending !== 'enabled') return false;
  return SENDING_RECORDS.every((id) => d.record_status[id] === 'verified' || d.record_status[id] === 'temporary_failure');
}
