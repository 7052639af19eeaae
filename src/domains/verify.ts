// Domain verification: look each record up through the configured resolver, compare it with what
// Posthorn asked for, and move record and domain statuses as docs/api.md §9.8 describes.
// Started by POST /domains/{id}/verify (answered at once, checked in the background) and re-run
// periodically by the scheduler for domains awaiting verification or degraded.
import type { Store, DomainRec, RecordStatus } from '../store';
import type { Config } from '../config';
import { BlockList, isIP } from 'node:net';
import type { Resolver } from '../dns/resolver';
import { recordHosts, recordSpecs, deriveStatus, type RecordId } from './records';
import { parseTags, rotationVerified, completeRotation } from './dkim';
import type { Events } from '../events';
import { nowIso } from '../ids';
import { log } from '../log';
import { putDomain, type DomainEventDeps } from './events';

/** How long a missing record may stay pending, and a degraded domain be re-checked (docs/api.md §9.8). */
export const VERIFY_WINDOW_MS = 72 * 3_600_000;
const VERIFIED_RECHECK_MS = 3_600_000;

type Outcome = 'ok' | 'missing' | 'wrong' | 'error';

const sameHost = (a: string, b: string) => a.replace(/\.$/, '').toLowerCase() === b.replace(/\.$/, '').toLowerCase();

export class DomainVerifier {
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly queued = new Map<string, Promise<void>>();
  private stopped = false;

  /** What a domain write needs for its `domain.updated` (events.ts). */
  private readonly changes: DomainEventDeps;

  constructor(
    private readonly store: Store,
    private readonly dns: Resolver,
    private readonly config: Pick<Config, 'smtp' | 'public_url' | 'dkim'>,
    events: Events,
  ) {
    this.changes = { events, hosts: this.hosts() };
  }

  /** Mark the domain as being checked and start the check; resolves once the new state is durable. */
  async request(team: string, id: string): Promise<DomainRec | undefined> {
    const now = nowIso();
    const updated = await this.store.write(async (tx) => {
      const d = await tx.domains.get(team, id);
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
      await putDomain(this.changes, tx, d, next);
      return next;
    });
    if (updated) void this.check(team, id);
    return updated;
  }

  /**
   * Check now. One check per domain runs at a time; a check asked for while one is running runs
   * once after it (its lookups may predate records the user just published).
   */
  check(team: string, id: string): Promise<void> {
    const running = this.inFlight.get(id);
    if (!running) return this.start(team, id);
    let next = this.queued.get(id);
    if (!next) {
      next = running.then(() => {
        this.queued.delete(id);
        return this.start(team, id);
      });
      this.queued.set(id, next);
    }
    return next;
  }

  private start(team: string, id: string): Promise<void> {
    const p: Promise<void> = this.runCheck(team, id)
      .catch((e) => log.error('domain.verify_failed', { domain_id: id, error: String(e) }))
      .finally(() => {
        if (this.inFlight.get(id) === p) this.inFlight.delete(id);
      });
    this.inFlight.set(id, p);
    return p;
  }

  /** Wait for every running and queued check (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.inFlight.size || this.queued.size) await Promise.all([...this.inFlight.values(), ...this.queued.values()]);
  }

  /** Scheduler entry: re-check domains that are waiting, degraded, or verified but not seen lately. */
  async recheckDue(): Promise<void> {
    const now = Date.now();
    const due: DomainRec[] = [];
    for (const d of await this.store.domains.everything()) {
      if (this.stopped) return;
      const last = d.verification.checked_at ? Date.parse(d.verification.checked_at) : 0;
      // A pending DKIM rotation switches once its records are found (docs/mail.md §2.1).
      if (['pending', 'partially_verified', 'partially_failed', 'temporary_failure'].includes(d.status) || d.dkim_next) due.push(d);
      else if (d.status === 'verified' && now - last >= VERIFIED_RECHECK_MS) due.push(d);
    }
    for (const d of due) if (!this.stopped) await this.check(d.team_id, d.id);
  }

  stop(): void {
    this.stopped = true;
  }

  private hosts() {
    return recordHosts(this.config);
  }

  private async runCheck(team: string, id: string): Promise<void> {
    const d = await this.store.domains.get(team, id);
    if (!d) return;
    const specs = recordSpecs(d, this.hosts());
    const outcomes = new Map<RecordId, Outcome>();
    await Promise.all(
      specs.map(async (s) => {
        outcomes.set(s.id, await this.lookup(s.id, s.fqdn, d).catch(() => 'error' as const));
      }),
    );
    if (this.stopped) return;
    const at = nowIso();
    await this.store.write(async (tx) => {
      const cur = await tx.domains.get(team, id);
      if (!cur) return;
      const record_status: Record<string, RecordStatus> = { ...cur.record_status };
      const inWindow = !cur.verification.requested_at || Date.now() - Date.parse(cur.verification.requested_at) < VERIFY_WINDOW_MS;
      const degradedFor = cur.verification.degraded_at ? Date.now() - Date.parse(cur.verification.degraded_at) : 0;
      // A PATCH during the lookups may have changed what a record is (tracking subdomain) or
      // dropped it (capability disabled): apply only outcomes still about the same name.
      const looked = new Map(specs.map((s) => [s.id, s.fqdn]));
      const current = new Map(recordSpecs(cur, this.hosts()).map((s) => [s.id, s.fqdn]));
      for (const [rid, outcome] of outcomes) {
        if (current.get(rid) !== looked.get(rid)) continue;
        const prev = record_status[rid];
        if (outcome === 'ok') record_status[rid] = 'verified';
        else if (prev === undefined || prev === 'not_started')
          continue; // not asked for yet (e.g. added by PATCH): only a match moves it
        else if (outcome === 'error')
          continue; // DNS unreachable: nothing learned, keep the status
        else if (prev === 'verified' || prev === 'temporary_failure') record_status[rid] = degradedFor < VERIFY_WINDOW_MS ? 'temporary_failure' : 'failed';
        else if (outcome === 'wrong') record_status[rid] = 'failed';
        else record_status[rid] = inWindow ? 'pending' : 'failed';
      }
      let next: DomainRec = { ...cur, record_status };
      if (rotationVerified(next)) {
        next = completeRotation(next, this.config.dkim.rotation_grace);
        log.info('domain.dkim_rotated', {
          domain: cur.name,
          selector: next.dkim.selector,
          ed25519: next.dkim_ed25519?.selector ?? null,
          previous: next.dkim_previous!.records.map((r) => r.selector),
          remove_after: next.dkim_previous!.remove_after,
        });
      }
      next.status = deriveStatus(next);
      next.verification = {
        ...cur.verification,
        checked_at: at,
        verified_at: next.status === 'verified' ? (cur.verification.verified_at ?? at) : cur.verification.verified_at,
        degraded_at: next.status === 'temporary_failure' ? (cur.verification.degraded_at ?? at) : null,
      };
      await putDomain(this.changes, tx, cur, next);
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
        // RFC 7208 §4.5: of the TXT records, those beginning with the version section "v=spf1";
        // none → no SPF, more than one → permerror.
        const spf = (await this.dns.txt(fqdn)).filter((t) => /^v=spf1( |$)/i.test(t));
        if (spf.length === 0) return 'missing';
        if (spf.length > 1) return 'wrong';
        return (await this.spfAuthorises(spf[0], fqdn)) ? 'ok' : 'wrong';
      }
      case 'DKIM':
      case 'DKIM:ed25519':
      case 'DKIM:next':
      case 'DKIM:next-ed25519':
      case 'DKIM:previous':
      case 'DKIM:previous-ed25519': {
        const expected = parseTags(recordSpecs(d, this.hosts()).find((s) => s.id === id)!.view.value);
        const keys = (await this.dns.txt(fqdn)).map(parseTags).filter((t) => t.has('p'));
        if (keys.length === 0) return 'missing';
        return keys.some((t) => isOurKey(t, expected.get('p')!, expected.get('k') ?? 'rsa')) ? 'ok' : 'wrong';
      }
      case 'DMARC': {
        const recs = (await this.dns.txt(fqdn)).filter((t) => /^v=DMARC1\s*(;|$)/i.test(t.trim()));
        return recs.length ? 'ok' : 'missing';
      }
      case 'Tracking': {
        const target = await this.dns.cname(fqdn);
        if (target.length === 0) return 'missing';
        return target.some((t) => sameHost(t, new URL(this.config.public_url).hostname)) ? 'ok' : 'wrong';
      }
      default:
        return 'missing';
    }
  }

  /**
   * Does the SPF record authorise Posthorn's host? Its terms are read left to right (RFC 7208
   * §4.6.2) up to the first that matches the host: it must carry the pass qualifier (`+` or none).
   * Matching: `a:<host>` and `include:<host>` (with or without a CIDR suffix), a bare `mx` when
   * the return-path's MX is the host, `ip4:`/`ip6:` covering one of the host's addresses. `all` ends the
   * search (even `+all`: a record that authorises everyone does not name Posthorn); other
   * includes, `exists`, `ptr` and `redirect=` are not followed.
   */
  private async spfAuthorises(record: string, fqdn: string): Promise<boolean> {
    const host = this.config.smtp.hostname;
    const addresses = new Map<string, Promise<string[]>>();
    const hostAddresses = (family: 'ipv4' | 'ipv6') => {
      let p = addresses.get(family);
      if (!p) {
        p = (family === 'ipv4' ? this.dns.a(host) : this.dns.aaaa(host)).catch(() => []);
        addresses.set(family, p);
      }
      return p;
    };
    for (const term of record.toLowerCase().split(' ').slice(1).filter(Boolean)) {
      const m = /^([+\-~?]?)(all|include|a|mx|ptr|ip4|ip6|exists)(?::([^/]+))?((?:\/\/?\d+){0,2})$/.exec(term);
      if (!m) continue; // modifiers (redirect=, exp=) and unknown terms
      const [, qualifier, mech, arg, cidr] = m;
      let match = false;
      if (mech === 'all') return false;
      if ((mech === 'a' || mech === 'include') && arg) match = sameHost(arg, host);
      else if (mech === 'mx' && !arg) match = (await this.dns.mx(fqdn).catch(() => [])).some((r) => sameHost(r.exchange, host));
      else if ((mech === 'ip4' || mech === 'ip6') && arg && isIP(arg)) {
        const family = mech === 'ip4' ? 'ipv4' : 'ipv6';
        const bits = Number(/\d+/.exec(cidr ?? '')?.[0] ?? (mech === 'ip4' ? 32 : 128));
        const range = new BlockList();
        try {
          range.addSubnet(arg, bits, family);
        } catch {
          continue;
        }
        match = (await hostAddresses(family)).some((a) => range.check(a, family));
      }
      if (match) return qualifier === '' || qualifier === '+';
    }
    return false;
  }
}

/** A DKIM key record (RFC 6376 §3.6.1, RFC 8463) publishing our key: v=DKIM1 if present, k= its kind, h incl. sha256. */
export function isOurKey(tags: Map<string, string>, publicKey: string, kind: string): boolean {
  const v = tags.get('v');
  if (v !== undefined && v !== 'DKIM1') return false;
  if ((tags.get('k') ?? 'rsa').toLowerCase() !== kind.toLowerCase()) return false;
  const h = tags.get('h');
  if (h !== undefined && !h.toLowerCase().split(':').includes('sha256')) return false;
  return tags.get('p') === publicKey;
}
