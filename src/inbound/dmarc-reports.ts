// The inbound processor's DMARC step (docs/deliverability.md §4): mail to a domain's `rua` address —
// `dmarc-reports@<return-path host>`, or `deliverability.dmarc_rua` — is read as DMARC aggregate
// reports (RFC 7489 §7.2). Each report attachment is expanded and parsed within the bounds of
// mail/dmarc-report.ts, attributed to the Posthorn domain it concerns, and kept once per reporting
// organisation and report id. A refused report is logged and counted with its reason, and stored
// nowhere; the message itself leaves the spool either way.
import type { StoreReader, DomainRec, DmarcReportRec, Tx } from '../store';
import { DMARC_RUA_LOCAL } from '../domains/records';
import { readDmarcAttachment, DmarcReportError, MAX_XML, type DmarcReport } from '../mail/dmarc-report';
import { parseMessage } from '../mail/parse';
import { newId, nowIso } from '../ids';
import { log } from '../log';

/** Report attachments read from one message; the rest are ignored. */
export const MAX_REPORTS_PER_MESSAGE = 4;
/**
 * Memory the inbound processor reserves for a DMARC message beside its own (PROCESS_BUDGET): one
 * report is read at a time — at most MAX_XML of XML plus what decompression may overshoot, and
 * fast-xml-parser's tree of it (measured under 8× the XML) — so ten times MAX_XML.
 */
export const DMARC_MEMORY = 10 * MAX_XML;

/** What becomes of a report: kept, a duplicate, or refused and why (the Prometheus `result`). */
export type DmarcResult = 'stored' | 'duplicate' | 'too_large' | 'malformed' | 'unsupported' | 'unknown_domain' | 'no_report';

export interface PreparedDmarc {
  /** Reports to keep, each for its domain's team. */
  reports: DmarcReportRec[];
  /** Refusals, counted after the commit. */
  refused: DmarcResult[];
}

/**
 * The recipients of a spooled message that are DMARC report addresses: the configured one, and
 * `dmarc-reports@` at a return-path host (recognised even when an address is configured, so records
 * published before it still deliver).
 */
export function dmarcRecipients(m: { reports: string[]; inbound: { recipients: string[] }[] }, configured: string | null): string[] {
  const own = configured?.toLowerCase() ?? null;
  const all = [...m.reports, ...m.inbound.flatMap((i) => i.recipients)];
  return all.filter((a) => {
    const lower = a.toLowerCase();
    return lower === own || (m.reports.includes(a) && lower.slice(0, lower.lastIndexOf('@')) === DMARC_RUA_LOCAL);
  });
}

/** Does a report published at `policyDomain` concern domain `name` (the same, or one the other's parent)? */
const concerns = (name: string, policyDomain: string) => name === policyDomain || name.endsWith(`.${policyDomain}`) || policyDomain.endsWith(`.${name}`);

/** The Posthorn domain a report sent to `address` is for, or null. */
async function domainFor(store: StoreReader, address: string, configured: string | null, report: DmarcReport): Promise<DomainRec | null> {
  if (configured && address.toLowerCase() === configured.toLowerCase()) {
    // One address for every domain: the report names its domain (or a parent of it).
    for (let name = report.policy.domain; name.includes('.'); name = name.slice(name.indexOf('.') + 1)) {
      const d = await store.domains.find('name', name);
      if (d) return d;
    }
    return null;
  }
  const host = address.slice(address.lastIndexOf('@') + 1).toLowerCase();
  const dot = host.indexOf('.');
  const d = dot > 0 ? await store.domains.find('name', host.slice(dot + 1)) : undefined;
  if (!d || d.custom_return_path !== host.slice(0, dot)) return null;
  return concerns(d.name, report.policy.domain) ? d : null;
}

const looksLikeReport = (a: { contentType: string; filename?: string; content: Buffer }) =>
  /(zip|gzip|xml)/i.test(a.contentType) || /\.(xml|gz|zip)$/i.test(a.filename ?? '') || a.content[0] === 0x1f || a.content[0] === 0x50 || a.content[0] === 0x3c;

/** Parse the message and read its reports (no writes). */
export async function prepareDmarc(
  store: StoreReader,
  raw: Uint8Array,
  recipients: string[],
  configured: string | null,
  receivedAt: string,
): Promise<PreparedDmarc> {
  const out: PreparedDmarc = { reports: [], refused: [] };
  const mail = await parseMessage(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength), { skipHtmlToText: true, skipTextToHtml: true });
  const attachments = mail.attachments.filter(looksLikeReport).slice(0, MAX_REPORTS_PER_MESSAGE);
  if (!attachments.length) {
    refuse(out, 'no_report', 'no report attachment', recipients);
    return out;
  }
  for (const a of attachments) {
    let report: DmarcReport;
    try {
      report = readDmarcAttachment(a.content);
    } catch (e) {
      if (!(e instanceof DmarcReportError)) throw e;
      refuse(out, e.reason, e.message, recipients);
      continue;
    }
    const domains = new Map<string, DomainRec>();
    for (const address of recipients) {
      const d = await domainFor(store, address, configured, report);
      if (d) domains.set(d.id, d);
    }
    if (!domains.size) {
      refuse(out, 'unknown_domain', `a report on ${report.policy.domain}, not a domain of its address`, recipients);
      continue;
    }
    for (const d of domains.values()) out.reports.push(record(d, report, receivedAt));
  }
  return out;
}

function refuse(out: PreparedDmarc, reason: DmarcResult, detail: string, recipients: string[]): void {
  out.refused.push(reason);
  log.warn('dmarc.report_refused', { reason, detail, recipients });
}

/** The stored report: rows merged by source, disposition and alignment. */
function record(d: DomainRec, r: DmarcReport, receivedAt: string): DmarcReportRec {
  const rows = new Map<string, DmarcReportRec['rows'][number]>();
  for (const row of r.rows) {
    const key = `${row.source_ip} ${row.disposition} ${row.dkim} ${row.spf}`;
    const cur = rows.get(key);
    if (cur) cur.count += row.count;
    else rows.set(key, { source_ip: row.source_ip, count: row.count, disposition: row.disposition, dkim: row.dkim, spf: row.spf });
  }
  return {
    id: newId(),
    team_id: d.team_id,
    created_at: receivedAt || nowIso(),
    domain_id: d.id,
    org_name: r.org_name,
    org_email: r.email,
    report_id: r.report_id,
    begin: new Date(r.begin).toISOString(),
    end: new Date(r.end).toISOString(),
    // The day the period's middle falls on: providers report UTC days, some a second short.
    day: new Date((r.begin + r.end) / 2).toISOString().slice(0, 10),
    policy: r.policy,
    rows: [...rows.values()],
  };
}

/** In the unit of work: keep each report not kept before; what became of each (counted after the commit). */
export async function commitDmarc(tx: Tx, p: PreparedDmarc): Promise<DmarcResult[]> {
  const results: DmarcResult[] = [...p.refused];
  for (const r of p.reports) {
    if (await tx.dmarcReports.find('report', `${r.org_name} ${r.report_id}`, r.team_id)) {
      results.push('duplicate');
      continue;
    }
    tx.dmarcReports.put(r);
    results.push('stored');
    tx.afterCommit(() => log.info('dmarc.report_stored', { team_id: r.team_id, domain_id: r.domain_id, org: r.org_name, report_id: r.report_id }));
  }
  return results;
}
