// One delivery attempt of one queue entry (an email's recipients at one domain): find the
// destination (MX hosts, or the relay), open a session, compose and sign the message, hand it over,
// and return a reply for every recipient. Touches no state: the engine persists before and after.
import type { Config } from '../config';
import type { DomainRec, MtaStsPolicy, QueueEntry, TlsFailure } from '../store';
import { DnsError, type Resolver } from '../dns/resolver';
import { resolveMx, hostAddresses, type MxRoute } from './mx';
import { isPrivateAddress } from '../net/guard';
import { relayTarget } from './relay';
import { localReply, type Reply } from '../mail/smtp-reply';
import { ConnectError, type OutgoingMessage, type SmtpSession, type Target } from './smtp-client';
import type { ConnectionPool, Lease } from './pool';
import { mxAllowed, tlsResultType, type TlsResultType } from '../mail/mta-sts';
import type { StsLookup } from './mta-sts';
import { BIND_FAILURES, type Choice, type Source } from './ips';

export interface AttemptInput {
  entry: QueueEntry;
  domain: DomainRec;
  /**
   * The signed message, asked for once a destination has taken the connection: nothing is
   * composed or signed for a destination that cannot be reached.
   */
  message: () => Promise<OutgoingMessage>;
  /** The VERP envelope sender. */
  from: string;
}

export interface AttemptResult {
  /** A reply for every recipient of the entry. */
  replies: Map<string, Reply>;
  /** The host that took the transaction, or null when none did, and the address connected to. */
  host: string | null;
  ip?: string | null;
  tls: boolean | null;
  tlsVersion?: string | null;
  tlsCipher?: string | null;
  /** The destination's shaping site, once known (docs/mail.md §3.1). */
  site?: string;
  /** Server replies that refused a connection (a 421 greeting): shaping reads them beside the recipients' replies. */
  refusals?: Reply[];
  /** The host whose greeting refused last (an incident names it). */
  refusedBy?: string | null;
  /** The local address the transaction was sent from (an incident names it). */
  localIp?: string | null;
  /** The sending IP of `delivery.ips` the attempt was bound to (kept on its attempt record). */
  source?: string;
  /** Not attempted: the site has no room before this time (ms). Nothing happened but the wait. */
  deferred?: number;
  /** The MTA-STS policy applied and the TLS-RPT results of this attempt (docs/mail.md §3.2), when the domain has one. */
  sts?: StsOutcome;
  /** Answered without a connection, for sandbox addresses (sandbox.ts, docs/api.md §7.11). */
  simulated?: true;
}

/** What an attempt adds to its destination's TLS-RPT data (RFC 8460 §4.4). */
export interface StsOutcome {
  /** The policy the sessions were made under; null when its fetch failed and none was stored. */
  policy: MtaStsPolicy | null;
  /** Sessions that met the policy. */
  success: number;
  /** Sessions (and policy fetches) that did not, one entry each. */
  failures: TlsFailure[];
}

/** Where a destination's connections go (shaping.ts): its site and the lease they take, or a wait. */
export type Route = { site: string; lease?: Lease; defer?: undefined } | { site: string; defer: number };

export interface AttemptDeps {
  config: Pick<Config, 'delivery' | 'smtp' | 'security'>;
  dns: Resolver;
  pool: ConnectionPool;
  /** Shaping: the destination's site once its MX hosts are known (none in relay mode), and its room. */
  route: (domain: string, hosts: string[]) => Route;
  /** MTA-STS in direct mode (docs/mail.md §3.2): a recipient domain's policy, and the authorities MX certificates may chain to. */
  mtaSts?: { lookup: (domain: string) => Promise<StsLookup>; ca: string[] };
  /**
   * Sending IPs (ips.ts), when `delivery.ips` is set: the address the connections to a site bind
   * to, chosen once the site is known, and what to do when its bind fails.
   */
  source?: { choose: (site: string) => Choice; bindFailed: (address: string, reason: string) => void };
  /** A per-site route (shaping's `relay`): the smarthost a site's mail goes through instead of its MX hosts. */
  siteRelay?: (site: string) => string | undefined;
}

export async function attemptDelivery(input: AttemptInput, deps: AttemptDeps): Promise<AttemptResult> {
  const { entry, domain } = input;
  const { config, dns, pool } = deps;
  const refusals: Reply[] = [];
  let refusedBy: string | null = null;
  let site: string | undefined;
  let sts: StsOutcome | undefined;
  const everyone = (reply: Reply): AttemptResult => ({
    replies: new Map(entry.recipients.map((r) => [r, reply])),
    host: null,
    tls: null,
    site,
    refusals,
    refusedBy,
    sts,
  });

  // Composed and signed once, when the first destination has answered.
  let message: OutgoingMessage | null = null;
  const signed = async (): Promise<OutgoingMessage | Reply> => {
    try {
      message ??= await input.message();
      return message;
    } catch (e) {
      // A broken key is the operator's to fix: retry (and bounce Transient when the window ends).
      return localReply(451, '4.3.0', (e as Error).message);
    }
  };

  const security = domain.tls === 'enforced' ? 'require-starttls' : 'starttls';
  let targets: AsyncIterable<Step>;
  let route: Route;
  if (config.delivery.mode === 'relay') {
    route = deps.route(entry.domain, []);
    targets = single({ target: relayTarget(config.delivery.relay_url!, config.smtp.hostname, domain.tls === 'enforced') });
  } else {
    let mx: MxRoute;
    try {
      mx = await resolveMx(dns, entry.domain);
    } catch (e) {
      return everyone(dnsFailure(entry.domain, e));
    }
    // RFC 7505 §4.2: mail for a null-MX domain fails at once with 556 5.1.10.
    if (mx.kind === 'null') return everyone(localReply(556, '5.1.10', `${entry.domain}: the domain accepts no mail (null MX)`));
    // RFC 5321 §5.1: no MX and no address — there is nowhere to deliver (RFC 3463 X.1.2).
    if (mx.kind === 'none') return everyone(localReply(550, '5.1.2', `${entry.domain}: no MX or address records`));
    let policy: MtaStsPolicy | null = null;
    if (deps.mtaSts) {
      const found = await deps.mtaSts.lookup(entry.domain);
      policy = found.policy?.mode === 'none' ? null : found.policy;
      if (policy || found.failure) sts = { policy, success: 0, failures: found.failure ? [failure(found.failure.type, null, null, found.failure.reason)] : [] };
    }
    route = deps.route(entry.domain, mx.hosts);
    targets = mxTargets(
      mx.hosts,
      dns,
      config.delivery.mx_port,
      security,
      config.smtp.hostname,
      policy && sts ? { policy, ca: deps.mtaSts!.ca, outcome: sts, domain: entry.domain } : null,
      config.security.allow_private_networks,
    );
  }
  site = route.site;
  if (route.defer !== undefined) return { replies: new Map(), host: null, tls: null, site, deferred: route.defer };
  const lease = route.lease;
  // A per-site route (README "Sending IPs and warm-up"): the site's mail goes through its smarthost.
  const viaRelay = config.delivery.mode === 'direct' ? deps.siteRelay?.(site) : undefined;
  if (viaRelay) {
    sts = undefined;
    targets = single({ target: relayTarget(viaRelay, config.smtp.hostname, domain.tls === 'enforced') });
  }
  // The sending IP, once the site is known: over every address's allowance the attempt waits (never bounces).
  let source: Source | null = null;
  if (deps.source) {
    const pick = deps.source.choose(site);
    if (!pick.source) {
      if (pick.why === 'allowance' && pick.until !== null) return { replies: new Map(), host: null, tls: null, site, deferred: pick.until };
      return everyone(localReply(451, '4.3.0', `no sending IP of the domain's pool can send to ${site} now (${pick.why})`));
    }
    source = pick.source;
  }
  const siteName = site;
  /** A session to `target` from the chosen address; a failed bind takes the address out of rotation and tries another. */
  const open = async (target: Target): Promise<SmtpSession> => {
    for (;;) {
      const bound = source ? { ...target, ehloName: source.ehlo, localAddress: source.address } : target;
      try {
        // A site's connection limit holds per sending IP, as receivers count connections per peer
        // address: one address's sessions are never closed to make room for another's.
        return await pool.acquire(bound, source && lease ? { ...lease, group: `${lease.group} ${source.address}` } : lease);
      } catch (e) {
        if (!(e instanceof ConnectError) || !source || !deps.source || !BIND_FAILURES.has(e.code)) throw e;
        deps.source.bindFailed(source.address, e.reply.text);
        const next = deps.source.choose(siteName);
        if (!next.source) throw e;
        source = next.source;
      }
    }
  };

  let last: Reply | null = null;
  try {
    for await (const step of targets) {
      if ('failure' in step) {
        last = step.failure;
        continue;
      }
      const { target } = step;
      let session: SmtpSession;
      try {
        session = await open(target);
      } catch (e) {
        if (!(e instanceof ConnectError)) throw e;
        last = e.reply;
        if (e.remote) {
          refusals.push(e.remote);
          refusedBy = target.host;
        }
        // RFC 8461 §4.2: no session that meets the policy — a TLS-RPT failure; the next host may do better.
        if (sts && target.verify?.enforce && e.code === 'ETLS')
          sts.failures.push(failure(tlsResultType(e.tlsReason ?? 'TLS_FAILURE'), target.host, null, e.tlsReason));
        continue; // RFC 5321 §5.1: try the next host
      }
      // A new session under a policy counts once in TLS-RPT (one reused is already counted).
      if (sts && target.verify && session.messages === 0 && !step.counted) {
        const v = session.tls.verified;
        if (v?.ok) sts.success++;
        else sts.failures.push(failure(tlsResultType(v?.reason ?? 'TLS_FAILURE'), target.host, session.address, v?.reason ?? null));
      }
      const bytes = await signed();
      if ('code' in bytes) {
        pool.release(session, true);
        return everyone(bytes);
      }
      const reused = session.messages > 0;
      let out = await session.send(input.from, entry.recipients, bytes);
      if (out.lost && reused) {
        // A kept-open session the server had already dropped: once more on a fresh connection.
        pool.release(session, false);
        try {
          session = await open(target);
        } catch (e) {
          if (!(e instanceof ConnectError)) throw e;
          last = e.reply;
          if (e.remote) {
            refusals.push(e.remote);
            refusedBy = target.host;
          }
          continue;
        }
        out = await session.send(input.from, entry.recipients, bytes);
      }
      // The replies are final: return them now so the engine records them at once (a crash after
      // a 250 and before that commit is what sends an email twice). Giving the session back —
      // after an RSET when the transaction ended without one — is done on the side.
      const done = session;
      const tls = done.tls;
      if (out.reusable && out.needsReset)
        void done.reset().then(
          (ok) => pool.release(done, ok),
          () => pool.release(done, false),
        );
      else pool.release(done, out.reusable);
      return {
        replies: out.replies,
        host: target.host,
        ip: done.address,
        localIp: done.localAddress,
        ...(source ? { source: source.address } : {}),
        tls: done.secure,
        tlsVersion: tls.version,
        tlsCipher: tls.cipher,
        site,
        refusals,
        sts,
      };
    }
  } catch (e) {
    last = localReply(451, '4.4.0', `delivery failed: ${(e as Error).message}`);
  }
  return everyone(last ?? localReply(451, '4.4.4', `${entry.domain}: no reachable mail server`));
}

/** A host to try (`counted`: already in TLS-RPT, as a host the policy does not name), or why a host cannot be tried. */
type Step = { target: Target; counted?: boolean } | { failure: Reply };

/** The MTA-STS policy MX hosts are checked against, and where the results go. */
interface StsCheck {
  domain: string;
  policy: MtaStsPolicy;
  ca: string[];
  outcome: StsOutcome;
}

/** One TLS-RPT failure (RFC 8460 §4.4 failure-details). */
function failure(type: TlsResultType, mx: string | null, ip: string | null, reason: string | null): TlsFailure {
  return { result_type: type, receiving_mx_hostname: mx, receiving_ip: ip, failure_reason_code: reason, count: 1 };
}

async function* single(step: Step): AsyncIterable<Step> {
  yield step;
}

/**
 * MX hosts in order, each resolved as it is reached; a host that fails DNS yields its failure.
 * Under an MTA-STS policy (RFC 8461 §4.1, §4.2) a host must be one the policy names and show a
 * valid certificate: in enforce mode a host it does not name is not tried (4.7.10) and TLS is
 * required; in testing mode both are only recorded. Unless `allowPrivate`, a host with a private or
 * loopback address is not tried: the recipient domain's DNS chooses MX hosts, as a caller chooses a
 * webhook URL (net/guard.ts; README "Security").
 */
async function* mxTargets(
  hosts: string[],
  dns: Resolver,
  port: number,
  security: Target['security'],
  ehloName: string,
  sts: StsCheck | null,
  allowPrivate: boolean,
): AsyncIterable<Step> {
  const enforce = sts?.policy.mode === 'enforce';
  for (const host of hosts) {
    let verify: Target['verify'];
    let counted = false;
    if (sts && !mxAllowed(host, sts.policy)) {
      sts.outcome.failures.push(failure('validation-failure', host, null, 'MX_NOT_IN_POLICY'));
      counted = true;
      if (enforce) {
        yield { failure: localReply(451, '4.7.10', `${host}: not an MX host the MTA-STS policy of ${sts.domain} allows (RFC 8461 §4.1)`) };
        continue;
      }
    } else if (sts) verify = { ca: sts.ca, enforce };
    let addresses: string[];
    try {
      addresses = await hostAddresses(dns, host);
    } catch (e) {
      yield { failure: dnsFailure(host, e) };
      continue;
    }
    if (addresses.length === 0) {
      yield { failure: localReply(451, '4.4.4', `${host}: the MX host has no address records`) };
      continue;
    }
    const blocked = allowPrivate ? undefined : addresses.find(isPrivateAddress);
    if (blocked) {
      yield {
        failure: localReply(
          451,
          '4.4.4',
          `${host}: the MX host resolves to a private or loopback address (${blocked}); security.allow_private_networks is off`,
        ),
      };
      continue;
    }
    yield { target: { host, addresses, port, security: enforce ? 'require-starttls' : security, ehloName, ...(verify ? { verify } : {}) }, counted };
  }
}

/** RFC 3463 X.4.3: directory server failure — a temporary DNS error. */
function dnsFailure(name: string, e: unknown): Reply {
  if (e instanceof DnsError) return localReply(451, '4.4.3', `DNS lookup of ${name} failed: ${e.code}`);
  return localReply(451, '4.4.3', `DNS lookup of ${name} failed: ${(e as Error).message}`);
}
