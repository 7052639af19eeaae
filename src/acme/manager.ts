// The ACME certificate's life in a running Posthorn (docs/mail.md §4, "Certificates by ACME"): read from the store at
// start and handed to the listeners; checked every minute (scheduler/index.ts) — a certificate
// another node renewed is picked up, one that is due is renewed by one node at a time (the store's
// `singleton`: a PostgreSQL advisory lock in a cluster); a failure is kept with its error and tried
// again with backoff (schedule.ts), while the certificate in use keeps being served.
import type { Config } from '../config';
import { nowIso } from '../ids';
import { log } from '../log';
import { ACME_TEAM, type AcmeCertificateRec, type Store } from '../store';
import { requestCertificate, validity, type IssuedCertificate } from './client';
import { certificateId, certificateNames } from './names';
import { renewalDue, retryAfter } from './schedule';

export type { IssuedCertificate } from './client';

export interface AcmeDeps {
  store: Store;
  config: Pick<Config, 'tls' | 'public_url' | 'smtp'>;
  now: () => number;
}

/** The name of the job one node at a time runs (Store.singleton). */
export const RENEWAL_JOB = 'acme-renewal';

/** The stored certificate of this configuration's names, if any (the doctor reads it). */
export async function storedCertificate(store: Store, config: Pick<Config, 'public_url' | 'smtp'>): Promise<AcmeCertificateRec | undefined> {
  const names = certificateNames(config);
  if (!names.length) return undefined;
  return (await store.acme.get(ACME_TEAM, certificateId(names))) as AcmeCertificateRec | undefined;
}

export class AcmeManager {
  readonly names: string[];
  private serving: IssuedCertificate | null = null;
  private readonly listeners: ((c: IssuedCertificate) => void)[] = [];
  private renewing: Promise<void> | null = null;
  /** `acme.no_names` is said once, not every minute. */
  private warned = false;

  constructor(private readonly deps: AcmeDeps) {
    this.names = certificateNames(deps.config);
  }

  /** The certificate served now, if one was issued. */
  current(): IssuedCertificate | null {
    return this.serving;
  }

  /** Call `fn` with every certificate put in service from now on (and the current one, at once). */
  onCertificate(fn: (c: IssuedCertificate) => void): void {
    this.listeners.push(fn);
    if (this.serving) fn(this.serving);
  }

  /** Load the stored certificate (start-up), without asking the CA. */
  async load(): Promise<AcmeCertificateRec | undefined> {
    if (!this.names.length) {
      if (this.warned) return undefined;
      this.warned = true;
      log.warn('acme.no_names', {
        public_url: this.deps.config.public_url,
        smtp_hostname: this.deps.config.smtp.hostname,
        why: 'neither the public_url host nor smtp.hostname is a public DNS name a CA can certify',
      });
      return undefined;
    }
    const rec = (await this.deps.store.acme.get(ACME_TEAM, certificateId(this.names))) as AcmeCertificateRec | undefined;
    if (rec) this.serve(rec);
    return rec;
  }

  /** The minute's check: pick up a certificate renewed elsewhere, renew one that is due. */
  async tick(): Promise<void> {
    const rec = await this.load();
    if (!this.names.length) return;
    if (!rec || Date.parse(rec.due_at) <= this.deps.now()) await this.renew(false);
  }

  /** Renew now under the lock, due or not when `force` (tests; an operator's doctor run). */
  async renew(force = true): Promise<void> {
    // One renewal at a time in this process; a forced one waits for the one under way, then runs.
    if (force && this.renewing) await this.renewing.catch(() => {});
    this.renewing ??= this.deps.store
      .singleton(RENEWAL_JOB, () => this.renewLocked(force))
      .then(() => {})
      .finally(() => {
        this.renewing = null;
      });
    return this.renewing;
  }

  private async renewLocked(force: boolean): Promise<void> {
    const { store, now } = this.deps;
    const id = certificateId(this.names);
    // Read again under the lock: another node may have renewed it a moment ago.
    const before = (await store.acme.get(ACME_TEAM, id)) as AcmeCertificateRec | undefined;
    if (before && !force && Date.parse(before.due_at) > now()) return this.serve(before);
    const base: AcmeCertificateRec = before ?? {
      id,
      team_id: ACME_TEAM,
      created_at: nowIso(),
      kind: 'certificate',
      names: this.names,
      key: null,
      cert: null,
      not_before: null,
      not_after: null,
      due_at: new Date(now()).toISOString(),
      failures: 0,
      last_error: null,
      last_attempt_at: null,
      issued_at: null,
    };
    const attemptAt = new Date(now()).toISOString();
    let next: AcmeCertificateRec;
    try {
      const issued = await requestCertificate(this.deps, this.names);
      const { notBefore, notAfter } = await validity(issued.cert);
      next = {
        ...base,
        ...issued,
        not_before: new Date(notBefore).toISOString(),
        not_after: new Date(notAfter).toISOString(),
        due_at: new Date(renewalDue(notBefore, notAfter)).toISOString(),
        failures: 0,
        last_error: null,
        last_attempt_at: attemptAt,
        issued_at: attemptAt,
      };
      log.info('acme.certificate_issued', { names: this.names, not_after: next.not_after, renew_at: next.due_at });
    } catch (e) {
      const failures = base.failures + 1;
      next = {
        ...base,
        failures,
        last_error: (e as Error).message || String(e),
        last_attempt_at: attemptAt,
        due_at: new Date(retryAfter(failures, now())).toISOString(),
      };
      log.error('acme.renewal_failed', { names: this.names, failures, error: next.last_error, retry_at: next.due_at });
    }
    await store.write(async (tx) => tx.acme.put(next));
    this.serve(next);
  }

  /** Put a stored certificate in service when it differs from the one served. */
  private serve(rec: AcmeCertificateRec): void {
    if (!rec.key || !rec.cert || rec.cert === this.serving?.cert) return;
    this.serving = { key: rec.key, cert: rec.cert };
    log.info('acme.certificate_in_service', { names: rec.names, not_after: rec.not_after });
    for (const fn of this.listeners) {
      try {
        fn(this.serving);
      } catch (e) {
        log.error('acme.swap_failed', { error: String(e) });
      }
    }
  }
}
