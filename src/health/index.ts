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
import { certificateCheck } from './certificate';
import { port25Check } from './port25';
import { domainBlocklistCheck, ipBlocklistCheck } from './blocklists';

export type { CheckResult, CheckStatus } from './check';
export { unusableHostname } from './host';
export { worst } from './check';

export interface DoctorRun {
  checked_at: string;
  checks: CheckResult[];
}

export interface DoctorDeps {
  config: Config;
  dns: Resolver;
  /** Every team's domains (the store's `domains.everything`). */
  domains: () => Promise<DomainRec[]>;
  /** The network interfaces to find the sending addresses on (tests give their own). */
  interfaces?: () => Interfaces;
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
      Promise.resolve(certificateCheck(config)),
      port25Check(config),
      ...ips.map((ip) => ipBlocklistCheck(ip, config, dns)),
    ]);
    const perDomain: CheckResult[] = [];
    // A few domains at a time: each asks a dozen names of the resolver.
    for (let i = 0; i < domains.length; i += 8) {
      const batch = await Promise.all(
        domains.slice(i, i + 8).map(async (d) => {
          const scope = { team_id: d.team_id, id: d.id };
          const checks = await Promise.all([
            spfCheck(d, ips, config, dns),
            dkimCheck(d, config, dns),
            dmarcCheck(d, dns),
            domainBlocklistCheck(d.name, config, dns),
          ]);
          return checks.map((c) => ({ ...c, domain: scope }));
        }),
      );
      perDomain.push(...batch.flat());
    }
    this.last = { checked_at: nowIso(), checks: [...(await machine), ...perDomain] };
    return this.last;
  }
}

/** What a team is shown: the machine's checks and those of its own domains, without the scope. */
export function checksOfTeam(run: DoctorRun, team: string): DoctorRun {
  return {
    checked_at: run.checked_at,
    checks: run.checks.filter((c) => !c.domain || c.domain.team_id === team).map(({ domain: _, ...c }) => c),
  };
}
