// Domain verification: look each record up through the configured resolver, compare it with what
// Posthorn asked for, and move record and domain statuses as api-reference §9.8 describes.
// Started by POST /domains/{id}/verify (answered at once, checked in the background) and re-run
// periodically by the scheduler for domains awaiting verification or degraded.
import type { Store, DomainRec, RecordStatus } from '../store';
import type { Config } from '../config';
import { Resolver } from '../dns/resolver';
import { recordSpecs, deriveStatus, type RecordId } from './records';
import { parseTags } from './dkim';
import { nowIso } from '../ids';
import { log } from '../log';

/** How long a missing record may stay pending, and a degraded domain be re-checked (§9.8). */
export const VERIFY_WINDOW_MS = 72 * 3_600_000;
const VERIFIED_RECHECK_MS = 3_600_000;

type Outcome = 'ok' | 'missing' | 'wrong' | 'error';

const sameHost = (a: string, b: string) => a.replace(/\.$/, '').toLowerCase() === b.replace(/\.$/, '').toLowerCase();

export class DomainVerifier {
  private readonly inFlight = new Map<string, Promise<void>>();
  private stopped = false;

  constructor(
    private readonly store: Store,
    private readonly dns: Resolver,
    private readonly config: Config,
  ) {}

  /** Mark the domain as being checked and start the check; resolves once the new state is durable. */
  async request(team: string, id: string): Promise<DomainRec | undefined> {
    const now = nowIso();
    const updated = await this.store.transaction(() => {
      const d = this.store.domains.get(team, id);
      if (!d) return undefined;
      const record_status = { ...d.record_status };
      for (const { id: rid } of recordSpecs(d, this.hosts())) {
        const s = record_status[rid];
        if (s === undefined || s === 'not_started' || s === 'failed') record_status[rid] = 'pending';
      }
      const windowOpen = d.verification.requested_at && Date.now() - Date.parse(d.verification.requested_at) < VERIFY_WINDOW_MS;
      const next: DomainRec = {
        ...d,
        record_status,
        verification: { ...d.verification, requested_at: windowOpen ? d.verification.requested_at : now },
      };
      next.status = deriveStatus(next);
      this.store.domains.putInTxn(next);
      return next;
    });
    if (updated) void this.check(team, id);
    return updated;
  }

  /** Check now (one check per domain at a time). */
  check(team: string, id: string): Promise<void> {
    const running = this.inFlight.get(id);
    if (running) return running;
    const p = this.runCheck(team, id)
      .catch((e) => log.error('domain.verify_failed', { domain_id: id, error: String(e) }))
      .finally(() => this.inFlight.delete(id));
    this.inFlight.set(id, p);
    return p;
  }

  /** Wait for every running check (tests, shutdown). */
  async idle(): Promise<void> {
    await Promise.all(this.inFlight.values());
  }

  /** Scheduler entry: re-check domains that are waiting, degraded, or verified but not seen lately. */
  async recheckDue(): Promise<void> {
    const now = Date.now();
    const due: DomainRec[] = [];
    for (const d of this.store.domains.everything()) {
      if (this.stopped) return;
      const last = d.verification.checked_at ? Date.parse(d.verification.checked_at) : 0;
      if (['pending', 'partially_verified', 'partially_failed', 'temporary_failure'].includes(d.status)) due.push(d);
      else if (d.status === 'verified' && now - last >= VERIFIED_RECHECK_MS) due.push(d);
    }
    for (const d of due) if (!this.stopped) await this.check(d.team_id, d.id);
  }

  stop(): void {
    this.stopped = true;
  }

  private hosts() {
    return { smtpHostname: this.config.smtp.hostname, publicUrl: this.config.public_url };
  }

  private async runCheck(team: string, id: string): Promise<void> {
    const d = this.store.domains.get(team, id);
    if (!d) return;
    const specs = recordSpecs(d, this.hosts());
    const outcomes = new Map<RecordId, Outcome>();
    await Promise.all(
      specs.map(async (s) => {
        if (s.id === 'Tracking') return; // informational: links live under public_url
        outcomes.set(s.id, await this.lookup(s.id, s.fqdn, d).catch(() => 'error' as const));
      }),
    );
    const at = nowIso();
    await this.store.transaction(() => {
      const cur = this.store.domains.get(team, id);
      if (!cur) return;
      const record_status: Record<string, RecordStatus> = { ...cur.record_status };
      const inWindow = !cur.verification.requested_at || Date.now() - Date.parse(cur.verification.requested_at) < VERIFY_WINDOW_MS;
      const degradedFor = cur.verification.degraded_at ? Date.now() - Date.parse(cur.verification.degraded_at) : 0;
      for (const [rid, outcome] of outcomes) {
        const prev = record_status[rid];
        if (outcome === 'ok') record_status[rid] = 'verified';
        else if (outcome === 'error') record_status[rid] = prev && prev !== 'not_started' ? prev : 'pending';
        else if (prev === 'verified' || prev === 'temporary_failure')
          record_status[rid] = degradedFor < VERIFY_WINDOW_MS ? 'temporary_failure' : 'failed';
        else if (outcome === 'wrong') record_status[rid] = 'failed';
        else record_status[rid] = inWindow ? 'pending' : 'failed';
      }
      const next: DomainRec = { ...cur, record_status };
      next.status = deriveStatus(next);
      next.verification = {
        ...cur.verification,
        checked_at: at,
        verified_at: next.status === 'verified' ? cur.verification.verified_at ?? at : cur.verification.verified_at,
        degraded_at: next.status === 'temporary_failure' ? cur.verification.degraded_at ?? at : null,
      };
      this.store.domains.putInTxn(next);
      if (next.status !== cur.status) log.info('domain.status', { domain: cur.name, from: cur.status, to: next.status });
    });
  }

  private async lookup(id: RecordId, fqdn: string, d: DomainRec): Promise<Outcome> {
    const host = this.config.smtp.hostname;
    switch (id) {
      case 'SPF:MX':
      case 'Receiving': {
        const mx = await this.dns.mx(fqdn);
        if (mx.length === 0) return 'missing';
        return mx.some((r) => sameHost(r.exchange, host)) ? 'ok' : 'wrong';
      }
      case 'SPF:TXT': {
        // RFC 7208 §4.5: exactly one record starting with "v=spf1".
        const spf = (await this.dns.txt(fqdn)).filter((t) => /^v=spf1(\s|$)/i.test(t.trim()));
        if (spf.length === 0) return 'missing';
        if (spf.length > 1) return 'wrong';
        const terms = spf[0].trim().toLowerCase().split(/\s+/);
        const h = host.toLowerCase();
        return terms.some((t) => [`a:${h}`, `+a:${h}`, `include:${h}`, 'mx', '+mx'].includes(t)) ? 'ok' : 'wrong';
      }
      case 'DKIM': {
        const keys = (await this.dns.txt(fqdn)).map(parseTags).filter((t) => t.has('p'));
        if (keys.length === 0) return 'missing';
        return keys.some((t) => t.get('p') === d.dkim.public_key && (t.get('k') ?? 'rsa') === 'rsa') ? 'ok' : 'wrong';
      }
      case 'DMARC': {
        const recs = (await this.dns.txt(fqdn)).filter((t) => /^v=DMARC1/i.test(t.trim()));
        return recs.length ? 'ok' : 'missing';
      }
      default:
        return 'missing';
    }
  }
}
