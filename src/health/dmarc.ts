// What a domain's DMARC aggregate reports say (docs/deliverability.md §4, docs/api.md GET
// /domains/{id}/dmarc): the addresses mail in its name came from — with their PTR, volume and
// DMARC-aligned SPF and DKIM results, and whether each is one of Posthorn's own sending addresses —
// day by day, and the next step of its policy: monitoring (`p=none`) becomes `p=quarantine`, then
// `p=reject`, once thirty days of reports show every message from Posthorn's addresses aligned.
import type { Config } from '../config';
import type { Resolver } from '../dns/resolver';
import type { DmarcReportRec, DomainRec, StoreReader } from '../store';
import type { DmarcSummary } from '../schemas/dmarc';
import { dmarcRua } from '../domains/records';
import { sendingAddresses, type Interfaces } from './addresses';

const DAY = 86_400_000;
/** Days of reports a policy step needs, all aligned from Posthorn's addresses (Google's and Yahoo's sender guidance). */
export const STEP_DAYS = 30;
/** Sources answered, the largest first (each costs a PTR lookup). */
export const MAX_SOURCES = 100;

export interface DmarcDeps {
  store: StoreReader;
  dns: Resolver;
  config: Pick<Config, 'smtp' | 'delivery' | 'deliverability'>;
  /** The network interfaces (tests give their own). */
  interfaces?: () => Interfaces;
}

/** `tag=value` pairs of a DMARC record (RFC 7489 §6.4), names lowercased. */
export function dmarcTags(record: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of record.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) out[part.slice(0, eq).trim().toLowerCase()] = part.slice(eq + 1).trim();
  }
  return out;
}

type Source = DmarcSummary['sources'][number];

export class DmarcSummaries {
  constructor(private readonly deps: DmarcDeps) {}

  /**
   * Posthorn's own sending addresses: the doctor's (addresses.ts `sendingAddresses`: `delivery.ips`,
   * else `deliverability.sending_addresses`, else the interfaces' public ones) and those
   * `smtp.hostname` resolves to — what the SPF record Posthorn asks for (`a:<smtp.hostname>`) authorizes.
   */
  async ownAddresses(): Promise<Set<string>> {
    const { dns, config } = this.deps;
    const host = config.smtp.hostname;
    const [a, aaaa] = await Promise.all([dns.a(host).catch(() => []), dns.aaaa(host).catch(() => [])]);
    return new Set([...sendingAddresses(config, this.deps.interfaces?.()).found.public, ...a, ...aaaa].map((ip) => ip.toLowerCase()));
  }

  /** The domain's published DMARC record, or null. */
  private async record(d: DomainRec): Promise<string | null> {
    const txt = await this.deps.dns.txt(`_dmarc.${d.name}`).catch(() => [] as string[]);
    return txt.find((t) => /^v=DMARC1\s*(;|$)/i.test(t.trim()))?.trim() ?? null;
  }

  async summary(d: DomainRec, days: number, now = Date.now()): Promise<DmarcSummary> {
    const since = new Date(now - days * DAY).toISOString().slice(0, 10);
    const all = await this.deps.store.dmarcReports.findAll('domain', d.id, d.team_id);
    const reports = all.filter((r) => r.day >= since);
    const [own, record] = await Promise.all([this.ownAddresses(), this.record(d)]);
    const sources = new Map<string, Source>();
    const series = new Map<string, { date: string; messages: number; aligned: number }>();
    const totals = { reports: reports.length, messages: 0, dmarc_pass: 0, dkim_aligned: 0, spf_aligned: 0 };
    for (const r of reports) {
      for (const row of r.rows) {
        const pass = row.dkim === 'pass' || row.spf === 'pass';
        let s = sources.get(row.source_ip);
        if (!s) {
          s = {
            ip: row.source_ip,
            ptr: null,
            own: own.has(row.source_ip),
            messages: 0,
            dmarc_pass: 0,
            dkim_aligned: 0,
            spf_aligned: 0,
            quarantined: 0,
            rejected: 0,
          };
          sources.set(row.source_ip, s);
        }
        s.messages += row.count;
        totals.messages += row.count;
        const dkim = row.dkim === 'pass' ? row.count : 0;
        const spf = row.spf === 'pass' ? row.count : 0;
        const aligned = pass ? row.count : 0;
        s.dmarc_pass += aligned;
        s.dkim_aligned += dkim;
        s.spf_aligned += spf;
        totals.dmarc_pass += aligned;
        totals.dkim_aligned += dkim;
        totals.spf_aligned += spf;
        if (row.disposition === 'quarantine') s.quarantined += row.count;
        if (row.disposition === 'reject') s.rejected += row.count;
        const day = series.get(r.day) ?? { date: r.day, messages: 0, aligned: 0 };
        day.messages += row.count;
        if (pass) day.aligned += row.count;
        series.set(r.day, day);
      }
    }
    const top = [...sources.values()].sort((a, b) => b.messages - a.messages || a.ip.localeCompare(b.ip)).slice(0, MAX_SOURCES);
    await Promise.all(
      top.map(async (s) => {
        s.ptr = (await this.deps.dns.ptr(s.ip).catch(() => [] as string[]))[0] ?? null;
      }),
    );
    const expected = dmarcRua(d, this.deps.config.deliverability.dmarc_rua);
    const tags = record ? dmarcTags(record) : null;
    return {
      object: 'dmarc_summary',
      domain_id: d.id,
      domain: d.name,
      days,
      record,
      policy: tags ? policyOf(tags.p) : null,
      rua: expected,
      reports_received: all.length,
      totals,
      sources: top,
      series: [...series.values()].sort((a, b) => a.date.localeCompare(b.date)),
      step: policyStep({ record, tags, expected, reports: all, own, now }),
    };
  }
}

const policyOf = (p: string | undefined): 'none' | 'quarantine' | 'reject' => (p === 'quarantine' || p === 'reject' ? p : 'none');

/**
 * The next step of the domain's DMARC policy, from its record and the last STEP_DAYS days of
 * reports: publish a record; point `rua` at Posthorn; fix what fails from Posthorn's own addresses;
 * wait for thirty days of reports; then move `p=none` → `p=quarantine` → `p=reject`.
 */
export function policyStep(x: {
  record: string | null;
  tags: Record<string, string> | null;
  expected: string;
  reports: DmarcReportRec[];
  own: Set<string>;
  now: number;
}): DmarcSummary['step'] {
  const { record, tags, expected, reports, own, now } = x;
  const publish = `v=DMARC1; p=none; rua=mailto:${expected};`;
  if (!record || !tags)
    return { action: 'publish', message: `No DMARC record: publish one to start monitoring (reports come back to Posthorn).`, record: publish };
  const p = policyOf(tags.p);
  const ruas = (tags.rua ?? '').split(',').map((u) =>
    u
      .trim()
      .replace(/^mailto:/i, '')
      .replace(/!.*$/, '')
      .toLowerCase(),
  );
  if (!ruas.includes(expected.toLowerCase()))
    return {
      action: 'add_rua',
      message: `The DMARC record does not send its reports to Posthorn: add rua=mailto:${expected} to see who sends in the domain's name.`,
      record: withTag(record, 'rua', tags.rua ? `${tags.rua},mailto:${expected}` : `mailto:${expected}`),
    };
  if (p === 'reject') return { action: 'done', message: 'p=reject: mail that fails DMARC is refused. Nothing more to tighten.', record: null };
  const since = new Date(now - STEP_DAYS * DAY).toISOString().slice(0, 10);
  const recent = reports.filter((r) => r.day >= since);
  let known = 0;
  let knownFailed = 0;
  let otherFailed = 0;
  const otherSources = new Set<string>();
  for (const r of recent)
    for (const row of r.rows) {
      const pass = row.dkim === 'pass' || row.spf === 'pass';
      if (own.has(row.source_ip)) {
        known += row.count;
        if (!pass) knownFailed += row.count;
      } else if (!pass) {
        otherFailed += row.count;
        otherSources.add(row.source_ip);
      }
    }
  const n = otherSources.size;
  const others = otherFailed
    ? ` ${otherFailed} messages from ${n} other source${n === 1 ? '' : 's'} failed DMARC: if ${n === 1 ? 'it is' : 'they are'} yours (another mail service), authorize ${n === 1 ? 'it' : 'them'} in SPF and DKIM first.`
    : '';
  if (knownFailed)
    return {
      action: 'fix',
      message: `${knownFailed} of ${known} messages from Posthorn's addresses failed DMARC in the last ${STEP_DAYS} days: check SPF and DKIM (GET /deliverability/checks) before tightening the policy.${others}`,
      record: null,
    };
  const first = reports.reduce<string | null>((min, r) => (min === null || r.day < min ? r.day : min), null);
  const covered = first ? Math.floor((now - Date.parse(`${first}T00:00:00Z`)) / DAY) : 0;
  if (!known || covered < STEP_DAYS)
    return {
      action: 'wait',
      message: known
        ? `${Math.min(covered, STEP_DAYS)} of ${STEP_DAYS} days of reports, all aligned from Posthorn's addresses: keep p=${p} until ${STEP_DAYS} days are in.${others}`
        : `No reports of mail from Posthorn's addresses yet: keep p=${p} while they come in (providers send them daily).${others}`,
      record: null,
    };
  const next = p === 'none' ? 'quarantine' : 'reject';
  return {
    action: next,
    message: `${STEP_DAYS} days at 100 % aligned from known sources: move to p=${next}.${others}`,
    record: withTag(record, 'p', next),
  };
}

/** The record with one tag set (replaced where it is, else added at the end). */
function withTag(record: string, name: string, value: string): string {
  const parts = record
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean);
  const at = parts.findIndex((s) => s.slice(0, s.indexOf('=')).trim().toLowerCase() === name);
  if (at >= 0) parts[at] = `${name}=${value}`;
  else parts.push(`${name}=${value}`);
  return `${parts.join('; ')};`;
}
