// Which MTA-STS policy applies to a recipient domain now (RFC 8461 §3.3 and §5.1, docs/mail.md
// §3.2): the `_mta-sts` TXT record is looked up through the mail resolver (its answers cached for
// their TTL); a policy stored under the same id and not expired is used as it is; a new id (or none
// stored) fetches https://mta-sts.<domain>/.well-known/mta-sts.txt — no redirects, 200 and
// text/plain only, at most 64 KB, 10 s, a certificate valid for the policy host — and stores it
// for its max_age. When no live policy can be found or fetched, a stored one that has not expired
// still applies (§3.3); a failed fetch is tried again after FETCH_RETRY_MS, not at every attempt.
import type { Store, MtaStsPolicy } from '../store';
import type { Resolver } from '../dns/resolver';
import { safeFetch, GuardError } from '../net/guard';
import { MAX_POLICY_BYTES, parsePolicy, policyId, policyUrl, type TlsResultType } from '../mail/mta-sts';
import { hostAddresses } from './mx';
import { log } from '../log';

/** RFC 8461 §3.3 leaves the fetch timeout to senders; an attempt waits for it, so it is short. */
export const FETCH_TIMEOUT_MS = 10_000;
/** How long a failed fetch (under one TXT id) is not tried again. */
export const FETCH_RETRY_MS = 15 * 60_000;
/** Failed fetches, and domains' stored policies, remembered at once (the oldest are forgotten first). */
const MAX_REMEMBERED = 10_000;
/**
 * How long a domain's stored policy (or that none is stored) is used from memory rather than read
 * again: every attempt to a domain looks it up, and on PostgreSQL each read is a round trip. This
 * node's own fetches replace it at once; another node's are seen after at most this long (until
 * then this node fetches a new policy itself, and stores the same).
 */
export const STORED_MEMO_MS = 60_000;

/** A policy fetch that failed (RFC 8460 §4.3.2.2). */
export interface FetchFailure {
  type: Extract<TlsResultType, 'sts-policy-fetch-error' | 'sts-policy-invalid' | 'sts-webpki-invalid'>;
  reason: string;
}

export interface StsLookup {
  /** The policy to apply (any mode), or null: the domain has none we know of. */
  policy: MtaStsPolicy | null;
  /** A fetch this lookup made that failed: TLS-RPT records it. */
  failure?: FetchFailure;
}

export interface MtaStsOptions {
  store: Store;
  dns: Resolver;
  /** Extra trusted authorities (PEM) for policy hosts (`delivery.mta_sts.ca_file`). */
  ca: string[];
  /** HTTPS port of policy hosts (`delivery.mta_sts.port`). */
  port: number;
  /** `security.allow_private_networks`: policy hosts are chosen by whoever runs the recipient domain's DNS. */
  allowPrivate: boolean;
  now?: () => number;
}

export class MtaSts {
  /** `domain id` → when a failed fetch may be tried again (ms). */
  private readonly failed = new Map<string, number>();
  private readonly fetching = new Map<string, Promise<StsLookup>>();
  /** `domain` → its stored policy (null: none) and when it was read (ms), for STORED_MEMO_MS. */
  private readonly stored = new Map<string, { policy: MtaStsPolicy | null; at: number }>();
  private readonly now: () => number;

  constructor(private readonly o: MtaStsOptions) {
    this.now = o.now ?? Date.now;
  }

  async lookup(domain: string): Promise<StsLookup> {
    const now = this.now();
    let id: string | null;
    try {
      id = await policyId(domain, (name) => this.o.dns.txtStrings(name));
    } catch {
      id = null; // DNS failed: no live policy discoverable now
    }
    const stored = await this.storedPolicy(domain, now);
    const live = stored && stored.expires_at > now ? stored : null;
    if (!id || live?.id === id) return { policy: live };
    const key = `${domain} ${id}`;
    if ((this.failed.get(key) ?? 0) > now) return { policy: live };
    let p = this.fetching.get(key);
    if (!p) {
      p = this.fetch(domain, id, live).finally(() => this.fetching.delete(key));
      this.fetching.set(key, p);
    }
    return p;
  }

  private async fetch(domain: string, id: string, live: MtaStsPolicy | null): Promise<StsLookup> {
    const url = policyUrl(domain, this.o.port);
    let failure: FetchFailure;
    try {
      const res = await safeFetch(url, {
        allowPrivate: this.o.allowPrivate,
        maxBytes: MAX_POLICY_BYTES,
        timeoutMs: FETCH_TIMEOUT_MS,
        maxRedirects: 0, // RFC 8461 §3.3: redirects are not followed
        resolve: (host) => hostAddresses(this.o.dns, host),
        ca: this.o.ca,
      });
      const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
      if (res.status !== 200) failure = { type: 'sts-policy-fetch-error', reason: `HTTP status ${res.status}` };
      else if (type !== 'text/plain') failure = { type: 'sts-policy-invalid', reason: `Content-Type ${type || 'missing'}, not text/plain` };
      else {
        const text = new TextDecoder().decode(res.bytes);
        try {
          const parsed = parsePolicy(text);
          const at = this.now();
          const policy: MtaStsPolicy = { domain, id, ...parsed, text, fetched_at: at, expires_at: at + parsed.max_age * 1000 };
          await this.o.store.write(async (tx) => tx.mtaSts.put(policy));
          this.remember(domain, policy, at);
          this.failed.delete(`${domain} ${id}`);
          log.info('delivery.mta_sts_policy', { domain, id, mode: policy.mode, max_age: policy.max_age });
          return { policy };
        } catch (e) {
          failure = { type: 'sts-policy-invalid', reason: (e as Error).message };
        }
      }
    } catch (e) {
      // A certificate the policy host cannot show as valid is its own result type (RFC 8460 §4.3.2.2).
      const reason = e instanceof GuardError ? e.reason : null;
      const webpki = reason !== null && /CERT|SELF_SIGNED|UNABLE_TO_|ALTNAME|HOSTNAME/.test(reason);
      failure = { type: webpki ? 'sts-webpki-invalid' : 'sts-policy-fetch-error', reason: reason ?? (e as Error).message };
    }
    this.rememberFailure(`${domain} ${id}`);
    log.warn('delivery.mta_sts_fetch_failed', { domain, id, url, result: failure.type, reason: failure.reason, stored: live ? live.id : null });
    return { policy: live, failure };
  }

  private async storedPolicy(domain: string, now: number): Promise<MtaStsPolicy | null> {
    const hit = this.stored.get(domain);
    if (hit && now - hit.at < STORED_MEMO_MS) return hit.policy;
    const policy = (await this.o.store.mtaSts.get(domain)) ?? null;
    this.remember(domain, policy, now);
    return policy;
  }

  private remember(domain: string, policy: MtaStsPolicy | null, at: number): void {
    this.stored.delete(domain);
    if (this.stored.size >= MAX_REMEMBERED) this.stored.delete(this.stored.keys().next().value!);
    this.stored.set(domain, { policy, at });
  }

  private rememberFailure(key: string): void {
    this.failed.delete(key);
    if (this.failed.size >= MAX_REMEMBERED) this.failed.delete(this.failed.keys().next().value!);
    this.failed.set(key, this.now() + FETCH_RETRY_MS);
  }
}
