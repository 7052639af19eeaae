// Domain claims (docs/api.md §9.9): a team that wants a domain another team holds proves control
// of its DNS with a TXT record, and the domain moves to it. The claiming team learns nothing of the
// holder: not its id, its team, its settings or its records. The claimed domain is created anew on
// the claiming team (fresh DKIM key, status `not_started`, with the id the claim announced as
// `domain_id`), and the holder's domain is deleted in the same unit of work — for the holder exactly
// as a DELETE /domains/{id} (docs/api.md §9.6).
//
// POST /domains/{domain_id}/claim/verify answers at once; the TXT record is looked up in the
// background through the configured resolver, and again every few minutes (the scheduler) while
// the claim is pending and verification was asked for, until it expires (7 days).
import { writeOrRefuse, type DomainClaimRec, type Store, type StoreReader } from '../store';
import type { CreateDomainRequest } from '../schemas/domains';
import type { Resolver } from '../dns/resolver';
import { errors } from '../errors';
import { newId, nowIso } from '../ids';
import { randomBytes } from 'node:crypto';
import { log } from '../log';
import { domainSettings, nameAvailable, nameTaken, newDomain } from './create';
import { addDomain, removeDomain, type DomainEventDeps } from './events';

export const CLAIM_TTL_MS = 7 * 24 * 3_600_000;
/** The value of the TXT record starts with this, followed by the claim's token. */
export const CLAIM_PREFIX = 'posthorn-domain-verification=';

/** A pending claim whose time is up reads as `expired` (docs/api.md §9.9). */
export function claimStatus(c: DomainClaimRec, now = Date.now()): DomainClaimRec['status'] {
  return c.status === 'pending' && Date.parse(c.expires_at) <= now ? 'expired' : c.status;
}

/** The latest claim announcing this domain id, of this team. */
export function findClaim(r: StoreReader, team: string, domainId: string): Promise<DomainClaimRec | undefined> {
  return r.domainClaims.find('domain', domainId, team);
}

export class DomainClaims {
  private readonly running = new Map<string, Promise<void>>();
  private stopped = false;

  constructor(
    private readonly store: Store,
    private readonly dns: Resolver,
    /** A completed claim deletes the holder's domain and creates the claimer's, each with its event (events.ts). */
    private readonly changes: DomainEventDeps,
  ) {}

  /**
   * Start a claim (POST /domains/claim): the body is POST /domains's. The name must be held by
   * another team (422 otherwise, naming no one); a pending claim of this team for the name is
   * superseded by the new one.
   */
  async create(team: string, body: CreateDomainRequest): Promise<DomainClaimRec> {
    const s = domainSettings(body);
    const at = new Date();
    const claim: DomainClaimRec = {
      id: newId(),
      team_id: team,
      created_at: at.toISOString(),
      name: s.name,
      status: 'pending',
      domain_id: newId(),
      region: s.region,
      options: {
        custom_return_path: s.custom_return_path,
        open_tracking: s.open_tracking,
        click_tracking: s.click_tracking,
        tracking_subdomain: s.tracking_subdomain,
      },
      token: randomBytes(16).toString('hex'),
      expires_at: new Date(at.getTime() + CLAIM_TTL_MS).toISOString(),
      failure_reason: null,
      verify_requested_at: null,
    };
    return writeOrRefuse(this.store, async (tx) => {
      const holder = await tx.domains.find('name', s.name);
      if (!holder) return errors.validation(`The \`${s.name}\` domain is not registered by another team: add it with POST /domains.`);
      if (holder.team_id === team) return errors.validation(`The \`${s.name}\` domain already belongs to this team.`);
      // Anything else that keeps the name from this team (another team's parent domain, a
      // return-path host) is the 403 a create gets.
      if (!(await nameAvailable(tx, s.name, s.custom_return_path, team, holder))) return nameTaken(s.name);
      for (const old of await tx.domainClaims.findAll('name', s.name, team))
        if (claimStatus(old) === 'pending') tx.domainClaims.put({ ...old, status: 'superseded' });
      tx.domainClaims.put(claim);
      return claim;
    });
  }

  /** POST /domains/{domain_id}/claim/verify: a pending claim is checked in the background. */
  async verify(team: string, domainId: string): Promise<DomainClaimRec> {
    const claim = await writeOrRefuse(this.store, async (tx) => {
      const c = await findClaim(tx, team, domainId);
      if (!c) return errors.notFound('Domain claim');
      const status = claimStatus(c);
      if (status === 'expired') return errors.validation('The claim has expired: start a new one with POST /domains/claim.');
      if (status !== 'pending') return errors.validation(`Only pending claims can be verified; this one is ${status}.`);
      const next = { ...c, verify_requested_at: nowIso() };
      tx.domainClaims.put(next);
      return next;
    });
    void this.check(team, claim.id);
    return claim;
  }

  /** DELETE /domains/{domain_id} of a domain that is only a claim's placeholder: the claim is canceled. */
  async cancel(team: string, domainId: string): Promise<boolean> {
    return this.store.write(async (tx) => {
      const c = await findClaim(tx, team, domainId);
      if (!c || claimStatus(c) !== 'pending') return false;
      tx.domainClaims.put({ ...c, status: 'canceled' });
      return true;
    });
  }

  /** Look the claim's record up now (one check per claim at a time). */
  check(team: string, claimId: string): Promise<void> {
    const running = this.running.get(claimId);
    if (running) return running;
    const p = this.runCheck(team, claimId)
      .catch((e) => log.error('domain.claim_check_failed', { claim_id: claimId, error: String(e) }))
      .finally(() => this.running.delete(claimId));
    this.running.set(claimId, p);
    return p;
  }

  /** Scheduler entry: pending claims whose verification was asked for are looked at again. */
  async recheckDue(): Promise<void> {
    for (const c of await this.store.domainClaims.everything()) {
      if (this.stopped) return;
      if (c.verify_requested_at && claimStatus(c) === 'pending') await this.check(c.team_id, c.id);
    }
  }

  /** Wait for running checks (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.running.size) await Promise.all([...this.running.values()]);
  }

  stop(): void {
    this.stopped = true;
  }

  private async runCheck(team: string, claimId: string): Promise<void> {
    const claim = await this.store.domainClaims.get(team, claimId);
    if (!claim || claimStatus(claim) !== 'pending') return;
    const value = `${CLAIM_PREFIX}${claim.token}`;
    // A DNS failure teaches nothing: the claim stays pending and is looked at again.
    const found = (await this.dns.txt(claim.name).catch(() => [] as string[])).some((t) => t.trim() === value);
    if (!found || this.stopped) return;
    const s = domainSettings({ name: claim.name, region: claim.region, ...claim.options });
    const domain = await newDomain(team, claim.domain_id, s);
    await this.store.write(async (tx) => {
      const cur = await tx.domainClaims.get(team, claimId);
      if (!cur || claimStatus(cur) !== 'pending') return;
      const holder = await tx.domains.find('name', cur.name);
      if (holder?.team_id === team) return void tx.domainClaims.put({ ...cur, status: 'failed', failure_reason: 'The domain already belongs to this team.' });
      if (!(await nameAvailable(tx, cur.name, s.custom_return_path, team, holder))) {
        tx.domainClaims.put({ ...cur, status: 'failed', failure_reason: 'Another team holds a domain that keeps this name from moving.' });
        return;
      }
      if (holder) await removeDomain(this.changes, tx, holder);
      await addDomain(this.changes, tx, domain);
      tx.domainClaims.put({ ...cur, status: 'completed' });
      tx.afterCommit(() => log.info('domain.claimed', { domain: cur.name, team_id: team, domain_id: domain.id }));
    });
  }
}
