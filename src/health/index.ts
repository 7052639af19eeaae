// The doctor (docs/deliverability.md §1): every check of whether this machine can deliver and is
// trusted, run by `posthorn doctor`, by `serve` every `deliverability.check_interval`, and shown by
// GET /deliverability/checks. Checks inform; they never block sending.
import type { Config } from '../config';
import type { Resolver } from '../dns/resolver';
import type { DomainRec } from '../store';
import { nowIso } from '../ids';
import { log } from '../log';
import { type CheckResult, worst } from './check';
import { hostnameCheck, publicUrlCheck } from './host';
import { addressesCheck, sendingAddresses, type Interfaces } from './addresses';
import { reverseDnsCheck } from './reverse-dns';
import { dkimCheck, dmarcCheck, spfCheck } from './domain-auth';
import { acmeCertificateCheck, certificateCheck, type AcmeCertificateState } from './certificate';
import { port25Check } from './port25';
import { domainBlocklist, ipBlocklist, type TargetVerdict } from './blocklists';

export type { CheckResult, CheckStatus } from './check';
export { unusableHostname } from './host';
export { worst } from './check';
export type { TargetVerdict } from './blocklists';
export { startupProblems } from './startup';

export interface DoctorRun {
  checked_at: string;
  checks: CheckResult[];
  /** Every zone's verdict on every sending address and domain (the blocklist checks' detail). */
  blocklists: TargetVerdict[];
}

export interface DoctorDeps {
  config: Config;
  dns: Resolver;
  /** Every team's domains (the store's `domains.everything`). */
  domains: () => Promise<DomainRec[]>;
  /** The network interfaces to find the sending addresses on (tests give their own). */
  interfaces?: () => Interfaces;
  /** The stored ACME certificate and its renewal state (`tls.acme.enabled`, acme/manager.ts `storedCertificate`). */
  acme?: () => Promise<AcmeCertificateState | undefined>;
  /**
   * `serve`'s doctor acts on listings (delivery/listings.ts: the store's standings, incidents and
   * their webhooks), given each run's verdicts and which teams each target concerns; `posthorn
   * doctor` only reports.
   */
  onVerdicts?: (verdicts: TargetVerdict[], teamsOf: (v: TargetVerdict) => string[], at: number) => Promise<void>;
}

/** Domains whose records were asked for and that send: the ones mail goes out from. */
const sending = (d: DomainRec) => d.capabilities.sending === 'enabled' && d.status !== 'not_started';

export class Doctor {
  private last: DoctorRun | null = null;
  private running: Promise<DoctorRun> | null = null;

  constructor(private readonly deps: DoctorDeps) {}

  /** Run every check now (one run at a time: a second caller waits for the running one). */
  run(): Promise<DoctorRun> {
    this.running ??= this.runAll().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** The last run, if any. */
  lastRun(): DoctorRun | null {
    return this.last;
  }

  /** `serve`'s timer: run when the last run is older than `deliverability.check_interval`. */
  async runIfDue(now = Date.now()): Promise<void> {
    if (this.last && now - Date.parse(this.last.checked_at) < this.deps.config.deliverability.check_interval) return;
    const run = await this.run();
    const failing = run.checks.filter((c) => c.status !== 'pass');
    if (failing.length)
      log.warn('deliverability.checks', { status: worst(run.checks), failing: failing.map((c) => ({ name: c.name, status: c.status, evidence: c.evidence })) });
  }

  private async runAll(): Promise<DoctorRun> {
    const { config, dns } = this.deps;
    const all = await this.deps.domains();
    const domains = all.filter(sending);
    const { found, ehlo } = sendingAddresses(config, this.deps.interfaces?.());
    const ips = found.public;
    const machine = Promise.all([
      hostnameCheck(config, dns),
      publicUrlCheck(config, all.length),
      Promise.resolve(addressesCheck(found)),
      ...ips.map((ip) => reverseDnsCheck(ip, config, dns, ehlo.get(ip))),
      config.tls.acme.enabled
        ? (this.deps.acme?.() ?? Promise.resolve(undefined)).then((s) => acmeCertificateCheck(config, s))
        : Promise.resolve(certificateCheck(config)),
      port25Check(config),
    ]);
    const ipLists = Promise.all(ips.map((ip) => ipBlocklist(ip, config, dns)));
    const perDomain: CheckResult[] = [];
    const verdicts: TargetVerdict[] = [];
    // A few domains at a time: each asks a dozen names of the resolver.
    for (let i = 0; i < domains.length; i += 8) {
      const batch = await Promise.all(
        domains.slice(i, i + 8).map(async (d) => {
          const scope = { team_id: d.team_id, id: d.id };
          const [spf, dkim, dmarc, listed] = await Promise.all([
            spfCheck(d, ips, config, dns),
            dkimCheck(d, config, dns),
            dmarcCheck(d, dns),
            domainBlocklist(d.name, config, dns),
          ]);
          verdicts.push(...listed.verdicts);
          return [spf, dkim, dmarc, listed.check].map((c) => ({ ...c, domain: scope }));
        }),
      );
      perDomain.push(...batch.flat());
    }
    const ipChecks = await ipLists;
    verdicts.unshift(...ipChecks.flatMap((l) => l.verdicts));
    const run: DoctorRun = { checked_at: nowIso(), checks: [...(await machine), ...ipChecks.map((l) => l.check), ...perDomain], blocklists: verdicts };
    if (this.deps.onVerdicts) {
      // A listed address concerns every team that sends from it; a listed domain, its own team.
      const senders = [...new Set(domains.map((d) => d.team_id))];
      const teamOf = new Map(domains.map((d) => [d.name, d.team_id]));
      const teamsOf = (v: TargetVerdict) => (v.target_type === 'ip' ? senders : [teamOf.get(v.target)!].filter(Boolean));
      await this.deps.onVerdicts(verdicts, teamsOf, Date.parse(run.checked_at));
    }
    this.last = run;
    return run;
  }
}

/** What a team is shown: the machine's checks and those of its own domains, without the scope. */
export function checksOfTeam(run: DoctorRun, team: string): DoctorRun {
  const checks = run.checks.filter((c) => !c.domain || c.domain.team_id === team);
  const own = new Set(checks.filter((c) => c.domain).map((c) => c.name.replace(/^dbl:/, '')));
  return {
    checked_at: run.checked_at,
    blocklists: run.blocklists.filter((v) => v.target_type === 'ip' || own.has(v.target)),
    checks: checks.map(({ domain: _, ...c }) => c),
  };
}
