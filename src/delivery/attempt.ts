// One delivery attempt of one queue entry (an email's recipients at one domain): find the
// destination (MX hosts, or the relay), open a session, compose and sign the message, hand it over,
// and return a reply for every recipient. Touches no state: the engine persists before and after.
import type { Config } from '../config';
import type { DomainRec, QueueEntry } from '../store';
import { DnsError, type Resolver } from '../dns/resolver';
import { resolveMx, hostAddresses } from './mx';
import { relayTarget } from './relay';
import { localReply, type Reply } from '../mail/smtp-reply';
import { ConnectError, type Target } from './smtp-client';
import type { ConnectionPool, Lease } from './pool';

export interface AttemptInput {
  entry: QueueEntry;
  domain: DomainRec;
  /**
   * The unsigned message, asked for once a destination has taken the connection: nothing is
   * composed or signed for a destination that cannot be reached.
   */
  message: () => Promise<Uint8Array>;
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
  /** Not attempted: the site has no room before this time (ms). Nothing happened but the wait. */
  deferred?: number;
}

/** Where a destination's connections go (shaping.ts): its site and the lease they take, or a wait. */
export type Route = { site: string; lease?: Lease; defer?: undefined } | { site: string; defer: number };

export interface AttemptDeps {
  config: Pick<Config, 'delivery' | 'smtp'>;
  dns: Resolver;
  pool: ConnectionPool;
  /** DKIM signing with the sending domain's keys: the signed message as its two parts (header, message). */
  sign: (raw: Uint8Array) => Promise<[Buffer, Buffer]>;
  /** Shaping: the destination's site once its MX hosts are known (none in relay mode), and its room. */
  route: (domain: string, hosts: string[]) => Route;
}

export async function attemptDelivery(input: AttemptInput, deps: AttemptDeps): Promise<AttemptResult> {
  const { entry, domain } = input;
  const { config, dns, pool } = deps;
  const refusals: Reply[] = [];
  let site: string | undefined;
  const everyone = (reply: Reply): AttemptResult => ({ replies: new Map(entry.recipients.map((r) => [r, reply])), host: null, tls: null, site, refusals });

  // Composed and signed once, when the first destination has answered.
  let message: [Buffer, Buffer] | null = null;
  const signed = async (): Promise<[Buffer, Buffer] | Reply> => {
    try {
      return (message ??= await deps.sign(await input.message()));
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
    let mx;
    try {
      mx = await resolveMx(dns, entry.domain);
    } catch (e) {
      return everyone(dnsFailure(entry.domain, e));
    }
    // RFC 7505 §4.2: mail for a null-MX domain fails at once with 556 5.1.10.
    if (mx.kind === 'null') return everyone(localReply(556, '5.1.10', `${entry.domain}: the domain accepts no mail (null MX)`));
    // RFC 5321 §5.1: no MX and no address — there is nowhere to deliver (RFC 3463 X.1.2).
    if (mx.kind === 'none') return everyone(localReply(550, '5.1.2', `${entry.domain}: no MX or address records`));
    route = deps.route(entry.domain, mx.hosts);
    targets = mxTargets(mx.hosts, dns, config.delivery.mx_port, security, config.smtp.hostname);
  }
  site = route.site;
  if (route.defer !== undefined) return { replies: new Map(), host: null, tls: null, site, deferred: route.defer };
  const lease = route.lease;

  let last: Reply | null = null;
  try {
    for await (const step of targets) {
      if ('failure' in step) {
        last = step.failure;
        continue;
      }
      const { target } = step;
      let session;
      try {
        session = await pool.acquire(target, lease);
      } catch (e) {
        if (!(e instanceof ConnectError)) throw e;
        last = e.reply;
        if (e.remote) refusals.push(e.remote);
        continue; // RFC 5321 §5.1: try the next host
      }
      const bytes = await signed();
      if (!Array.isArray(bytes)) {
        pool.release(session, true);
        return everyone(bytes);
      }
      const reused = session.messages > 0;
      let out = await session.send(input.from, entry.recipients, bytes);
      if (out.lost && reused) {
        // A kept-open session the server had already dropped: once more on a fresh connection.
        pool.release(session, false);
        try {
          session = await pool.acquire(target, lease);
        } catch (e) {
          if (!(e instanceof ConnectError)) throw e;
          last = e.reply;
          if (e.remote) refusals.push(e.remote);
          continue;
        }
        out = await session.send(input.from, entry.recipients, bytes);
      }
      // The replies are final: return them now so the engine records them at once (a crash after
      // a 250 and before that commit is what sends an email twice). Giving the session back —
      // after an RSET when the transaction ended without one — is done on the side.
      const done = session;
      const tls = done.tls;
      if (out.reusable && out.needsReset) void done.reset().then((ok) => pool.release(done, ok), () => pool.release(done, false));
      else pool.release(done, out.reusable);
      return { replies: out.replies, host: target.host, ip: done.address, tls: done.secure, tlsVersion: tls.version, tlsCipher: tls.cipher, site, refusals };
    }
  } catch (e) {
    last = localReply(451, '4.4.0', `delivery failed: ${(e as Error).message}`);
  }
  return everyone(last ?? localReply(451, '4.4.4', `${entry.domain}: no reachable mail server`));
}

/** A host to try, or why a host cannot be tried. */
type Step = { target: Target } | { failure: Reply };

async function* single(step: Step): AsyncIterable<Step> {
  yield step;
}

/** MX hosts in order, each resolved as it is reached; a host that fails DNS yields its failure. */
async function* mxTargets(hosts: string[], dns: Resolver, port: number, security: Target['security'], ehloName: string): AsyncIterable<Step> {
  for (const host of hosts) {
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
    yield { target: { host, addresses, port, security, ehloName } };
  }
}

/** RFC 3463 X.4.3: directory server failure — a temporary DNS error. */
function dnsFailure(name: string, e: unknown): Reply {
  if (e instanceof DnsError) return localReply(451, '4.4.3', `DNS lookup of ${name} failed: ${e.code}`);
  return localReply(451, '4.4.3', `DNS lookup of ${name} failed: ${(e as Error).message}`);
}
