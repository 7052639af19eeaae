// SMTP TLS Reporting, the report side (RFC 8460; docs/deliverability.md §5): a policy domain's
// TLSRPT record (§3), the aggregate report of a UTC day (§4.4, JSON), its file name (§5.1) and the
// message that carries it by mail (§5.3: multipart/report, report-type "tlsrpt", built with
// nodemailer's MimeNode — no home-made MIME).
import MimeNode from 'nodemailer/lib/mime-node';
import type { TlsFailure, TlsReportDay, TlsReportPolicy } from '../store';

/** The `rua` URIs of a TLSRPT record (§3: `v=TLSRPTv1; rua=mailto:…,https://…`), or null when it is not one. */
export function tlsRptRua(record: string): string[] | null {
  const tags = new Map<string, string>();
  for (const part of record.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) tags.set(part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).trim());
  }
  if (tags.get('v') !== 'TLSRPTv1' || !record.trim().startsWith('v=')) return null;
  const rua = (tags.get('rua') ?? '')
    .split(',')
    .map((u) => u.trim())
    .filter((u) => /^(mailto:[^@\s]+@[^@\s]+|https:\/\/\S+)$/i.test(u));
  return rua.length ? rua : null;
}

/** One policy's results as §4.4 shapes them (`policy`, `summary`, `failure-details`). */
export function policyResults(domain: string, policy: TlsReportPolicy, success: number, failure: number, failures: TlsFailure[]) {
  return {
    policy: { 'policy-type': policy.type, 'policy-string': policy.string, 'policy-domain': domain, 'mx-host': policy.mx_host },
    summary: { 'total-successful-session-count': success, 'total-failure-session-count': failure },
    'failure-details': failures.map((f) => ({
      'result-type': f.result_type,
      ...(f.receiving_mx_hostname ? { 'receiving-mx-hostname': f.receiving_mx_hostname } : {}),
      ...(f.receiving_ip ? { 'receiving-ip': f.receiving_ip } : {}),
      'failed-session-count': f.count,
      ...(f.failure_reason_code ? { 'failure-reason-code': f.failure_reason_code } : {}),
    })),
  };
}

const sameKind = (a: TlsFailure, b: TlsFailure) =>
  a.result_type === b.result_type &&
  a.receiving_mx_hostname === b.receiving_mx_hostname &&
  a.receiving_ip === b.receiving_ip &&
  a.failure_reason_code === b.failure_reason_code;

/** Several teams' sessions of one day to one policy domain, added up (the install is one sending MTA). */
export function mergeDays(days: TlsReportDay[]): Omit<TlsReportDay, 'team_id'> {
  const first = days[0]!;
  const out = { day: first.day, domain: first.domain, policy: first.policy, success: 0, failure: 0, failures: [] as TlsFailure[] };
  for (const d of days) {
    out.success += d.success;
    out.failure += d.failure;
    for (const f of d.failures) {
      const kind = out.failures.find((k) => sameKind(k, f));
      if (kind) kind.count += f.count;
      else out.failures.push({ ...f });
    }
  }
  return out;
}

export interface TlsReportHead {
  /** `organization-name`: who sends the report. */
  organization: string;
  /** `contact-info`: an address to write to about it. */
  contact: string;
  /** The sending MTA (`smtp.hostname`): the Submitter of §5.3 and the sender of the file name. */
  submitter: string;
  reportId: string;
}

/** The aggregate report of one UTC day and policy domain (§4.4). */
export function tlsReport(head: TlsReportHead, day: Omit<TlsReportDay, 'team_id'>) {
  return {
    'organization-name': head.organization,
    'date-range': { 'start-datetime': `${day.day}T00:00:00Z`, 'end-datetime': `${day.day}T23:59:59Z` },
    'contact-info': head.contact,
    'report-id': head.reportId,
    policies: [policyResults(day.domain, day.policy, day.success, day.failure, day.failures)],
  };
}

/** §5.1: `sender!policy-domain!begin-timestamp!end-timestamp!unique-id.json.gz` (seconds since the epoch). */
export function reportFilename(submitter: string, policyDomain: string, day: string, uniqueId: string): string {
  const begin = Date.parse(`${day}T00:00:00Z`) / 1000;
  return `${submitter}!${policyDomain}!${begin}!${begin + 86_399}!${uniqueId}.json.gz`;
}

/** §5.3's subject. */
export const reportSubject = (policyDomain: string, submitter: string, reportId: string) =>
  `Report Domain: ${policyDomain} Submitter: ${submitter} Report-ID: <${reportId}>`;

/** The report message (§5.3): a short text part and the gzipped report, in multipart/report; report-type="tlsrpt". */
export async function reportMessage(m: {
  from: string;
  to: string[];
  subject: string;
  messageId: string;
  date: Date;
  policyDomain: string;
  submitter: string;
  filename: string;
  gzipped: Uint8Array;
}): Promise<Uint8Array> {
  const root = new MimeNode('multipart/report; report-type="tlsrpt"');
  root.setHeader({
    From: m.from,
    To: m.to.join(', '),
    Subject: m.subject,
    Date: m.date,
    'Message-ID': m.messageId,
    'TLS-Report-Domain': m.policyDomain,
    'TLS-Report-Submitter': m.submitter,
  });
  root
    .createChild('text/plain; charset=utf-8')
    .setContent(
      `This is an aggregate TLS report (RFC 8460) from ${m.submitter} for ${m.policyDomain}: the TLS sessions of one UTC day, in the attached file.\r\n`,
    );
  root.createChild('application/tlsrpt+gzip').setHeader('Content-Disposition', `attachment; filename="${m.filename}"`).setContent(Buffer.from(m.gzipped));
  return new Uint8Array(await root.build());
}
