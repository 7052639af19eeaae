// TLS-RPT reports sent (RFC 8460 §4–5; docs/deliverability.md §5): once a UTC day per policy
// domain, the sessions every team opened to it that day, added up, go to the `rua` of the domain's
// TLSRPT record — by mail through the one sending core (§5.3), by HTTPS POST through the SSRF guard
// (§5.4). The scheduler runs it on one node at a time (store.singleton); the marker of a day's
// report is written in the unit of work of its emails (CommitOptions keep/also), so it goes out once.
import { gzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import type { Config } from '../config';
import type { Resolver } from '../dns/resolver';
import type { TlsReportDay, TlsReportSentRec, Tx } from '../store';
import { commit, prepare, type SendingDeps } from '../sending/submit';
import { safeFetch } from '../net/guard';
import { newId, nowIso } from '../ids';
import { log } from '../log';
import { pemCertificates } from './engine';
import { mergeDays, reportFilename, reportMessage, reportSubject, tlsReport, tlsRptRua } from '../mail/tls-rpt';

const DAY = 86_400_000;
/** Time for one HTTPS POST of a report. */
export const POST_TIMEOUT_MS = 30_000;

export interface TlsRptDeps extends SendingDeps {
  config: SendingDeps['config'] & Pick<Config, 'smtp' | 'deliverability' | 'security'>;
  /** TLSRPT records are looked up here (`dns.servers`). */
  dns: Resolver;
}

export class TlsRptReports {
  constructor(private readonly deps: TlsRptDeps) {}

  /** Send yesterday's reports (UTC) not sent yet; what was sent, by policy domain. */
  async sendDue(now = Date.now()): Promise<string[]> {
    const from = this.deps.config.deliverability.tlsrpt_from;
    if (!from) return [];
    const day = new Date(now - DAY).toISOString().slice(0, 10);
    return this.sendDay(day, from);
  }

  /** Every policy domain's report of `day` not sent yet. */
  async sendDay(day: string, from: string): Promise<string[]> {
    const { store } = this.deps;
    const fromDomain = from.slice(from.lastIndexOf('@') + 1).toLowerCase();
    const sender = await store.domains.find('name', fromDomain);
    if (sender?.capabilities.sending !== 'enabled') {
      log.warn('tlsrpt.no_sender', { tlsrpt_from: from, why: 'its domain is not a sending domain of any team' });
      return [];
    }
    const byDomain = new Map<string, TlsReportDay[]>();
    for (const team of await store.teams.everything())
      for (let after: { day: string; domain: string } | undefined; ; ) {
        const rows = await store.tlsReports.list(team.id, { limit: 500, since: day, until: day, after });
        for (const r of rows) byDomain.set(r.domain, [...(byDomain.get(r.domain) ?? []), r]);
        if (rows.length < 500) break;
        after = { day: rows.at(-1)!.day, domain: rows.at(-1)!.domain };
      }
    const sent: string[] = [];
    for (const [domain, days] of [...byDomain].sort(([a], [b]) => a.localeCompare(b))) {
      if (await store.tlsReportsSent.find('report', `${day} ${domain}`)) continue;
      const rua = tlsRptRua((await this.deps.dns.txt(`_smtp._tls.${domain}`).catch(() => [] as string[])).find((t) => /^v=TLSRPTv1/i.test(t.trim())) ?? '');
      if (!rua) continue;
      try {
        if (await this.sendOne({ day, domain, days, rua, from, team: sender.team_id })) sent.push(domain);
      } catch (e) {
        log.error('tlsrpt.failed', { day, policy_domain: domain, error: String((e as Error)?.message ?? e) });
      }
    }
    return sent;
  }

  /** One policy domain's report: mailed and posted; false when another run sent it first. */
  private async sendOne(x: { day: string; domain: string; days: TlsReportDay[]; rua: string[]; from: string; team: string }): Promise<boolean> {
    const { config, store } = this.deps;
    const submitter = config.smtp.hostname;
    const reportId = newId();
    const fromDomain = x.from.slice(x.from.lastIndexOf('@') + 1).toLowerCase();
    const report = tlsReport({ organization: fromDomain, contact: x.from, submitter, reportId }, mergeDays(x.days));
    const gzipped = new Uint8Array(gzipSync(JSON.stringify(report)));
    const filename = reportFilename(submitter, x.domain, x.day, reportId);
    const subject = reportSubject(x.domain, submitter, reportId);
    const mailto = x.rua.filter((u) => /^mailto:/i.test(u)).map((u) => decodeURIComponent(u.slice('mailto:'.length).replace(/!.*$/, '')));
    const https = x.rua.filter((u) => /^https:/i.test(u));
    const marker: TlsReportSentRec = {
      id: newId(),
      team_id: x.team,
      created_at: nowIso(),
      day: x.day,
      policy_domain: x.domain,
      report_id: reportId,
      deliveries: [],
    };
    const key = `${x.day} ${x.domain}`;
    const fresh = async (tx: Tx) => !(await tx.tlsReportsSent.find('report', key));
    // One email per address: each receiving organisation sees only its own.
    const prepared = [];
    for (const to of mailto) {
      try {
        const p = await prepare(
          this.deps,
          { team: x.team, key: null },
          {
            from: x.from,
            to: [to],
            subject,
            text: `Aggregate TLS report (RFC 8460) for ${x.domain}.`,
            headers: { 'TLS-Report-Domain': x.domain, 'TLS-Report-Submitter': submitter },
            attachments: [{ filename, content: Buffer.from(gzipped).toString('base64'), content_type: 'application/tlsrpt+gzip' }],
            tags: [{ name: 'category', value: 'tls_report' }],
          },
        );
        // §5.3's message (multipart/report) is the email's message: the record keeps its parts for display.
        const raw = await reportMessage({
          from: p.email.from,
          to: [to],
          subject,
          messageId: p.email.message_id,
          date: new Date(p.email.created_at),
          policyDomain: x.domain,
          submitter,
          filename,
          gzipped,
        });
        prepared.push({ ...p, content: { ...p.content, raw } });
        marker.deliveries.push({ rua: `mailto:${to}`, outcome: `email ${p.email.id}` });
      } catch (e) {
        marker.deliveries.push({ rua: `mailto:${to}`, outcome: `not sent: ${(e as Error).message}` });
      }
    }
    let first = false;
    if (prepared.length) {
      // The marker commits with the emails, and only when no other run wrote it first.
      await commit(this.deps, prepared, {
        keep: fresh,
        also: async (tx) => {
          if (!(await fresh(tx))) return;
          tx.tlsReportsSent.put(marker);
          first = true;
        },
      });
    } else
      first = await store.write(async (tx) => {
        if (!(await fresh(tx))) return false;
        tx.tlsReportsSent.put(marker);
        return true;
      });
    if (!first) return false;
    if (https.length) {
      for (const url of https) marker.deliveries.push({ rua: url, outcome: await this.post(url, gzipped) });
      await store.write(async (tx) => {
        tx.tlsReportsSent.put(marker);
      });
    }
    log.info('tlsrpt.sent', { day: x.day, policy_domain: x.domain, report_id: reportId, deliveries: marker.deliveries });
    return true;
  }

  /** §5.4: POST the gzipped report; the outcome as the marker keeps it. */
  private async post(url: string, gzipped: Uint8Array): Promise<string> {
    try {
      const res = await safeFetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/tlsrpt+gzip' },
        body: gzipped,
        allowPrivate: this.deps.config.security.allow_private_networks,
        // Host names through Posthorn's resolver, and the authorities MTA-STS trusts (`delivery.mta_sts.ca_file`) beside the system's.
        resolve: async (host) => [...(await this.deps.dns.a(host).catch(() => [])), ...(await this.deps.dns.aaaa(host).catch(() => []))],
        ca: this.deps.config.delivery.mta_sts.ca_file ? pemCertificates(readFileSync(this.deps.config.delivery.mta_sts.ca_file, 'utf8')) : undefined,
        timeoutMs: POST_TIMEOUT_MS,
        maxBytes: 2048,
        truncate: true,
        maxRedirects: 0,
      });
      return res.status >= 200 && res.status < 300 ? `HTTP ${res.status}` : `failed: HTTP ${res.status}`;
    } catch (e) {
      return `failed: ${(e as Error).message}`;
    }
  }
}
