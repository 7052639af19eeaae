// Outbound HTTP to URLs that API callers choose (attachment `path`, webhook endpoints) without
// letting them reach the host's own network (SSRF). The host is resolved here, every address it
// resolves to must be public, and the connection goes to the vetted address itself — a second,
// different DNS answer (rebinding) never gets used. Redirects are followed by hand, each hop
// vetted again. `security.allow_private_networks` (tests, trusted LANs) lifts the address check.
import { BlockList, isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { lookup } from 'node:dns/promises';
import { rootCertificates } from 'node:tls';
import { readBounded } from './stream';

export type GuardErrorCode = 'invalid_url' | 'forbidden_address' | 'unresolvable' | 'redirects' | 'too_large' | 'timeout' | 'network';

/** Why a URL was refused or its fetch failed; the message completes "could not fetch <url>: …". */
export class GuardError extends Error {
  constructor(
    readonly code: GuardErrorCode,
    message: string,
    /** The underlying error's code for a failed connection (ECONNREFUSED, CERT_HAS_EXPIRED, …). */
    readonly reason: string | null = null,
  ) {
    super(message);
  }
}

// Addresses no caller-chosen URL may reach: RFC 6890 special-purpose ranges plus multicast.
// An IPv6 address carrying an IPv4 one is judged by the IPv4 rules (isPrivateAddress).
const PRIVATE = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // RFC 1918
  ['100.64.0.0', 10], // CGNAT, RFC 6598
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata lives here)
  ['172.16.0.0', 12], // RFC 1918
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.168.0.0', 16], // RFC 1918
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const)
  PRIVATE.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['64:ff9b:1::', 48], // local-use NAT64, RFC 8215
  ['100::', 64], // discard
  ['2001::', 32], // Teredo (RFC 4380): tunnels to an IPv4 address written obfuscated
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated, still routed by some stacks)
  ['ff00::', 8], // multicast
] as const)
  PRIVATE.addSubnet(net, bits, 'ipv6');

/**
 * The IPv4 address an IPv6 address carries in any of its spellings, or null: IPv4-compatible
 * (`::a.b.c.d`, ::/96, RFC 4291 §2.5.5.1), IPv4-mapped (`::ffff:a.b.c.d`, §2.5.5.2), IPv4-translated
 * (`::ffff:0:a.b.c.d`, RFC 2765 §2.1), NAT64 (64:ff9b::/96, RFC 6052) and 6to4 (2002::/16, RFC
 * 3056). The address is parsed by ipaddr.js — every textual form (dotted tail, zero runs, case, zone
 * id) comes out as the same eight groups — never matched as text.
 */
function embeddedIpv4(a: ipaddr.IPv6): string | null {
  const p = a.parts;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zeros = (from: number, to: number) => p.slice(from, to).every((g) => g === 0);
  if (zeros(0, 6)) return v4(p[6]!, p[7]!);
  if (zeros(0, 5) && p[5] === 0xffff) return v4(p[6]!, p[7]!);
  if (zeros(0, 4) && p[4] === 0xffff && p[5] === 0) return v4(p[6]!, p[7]!);
  if (p[0] === 0x64 && p[1] === 0xff9b && zeros(2, 6)) return v4(p[6]!, p[7]!);
  if (p[0] === 0x2002) return v4(p[1]!, p[2]!);
  return null;
}

/** True when `ip` (a literal IPv4 or IPv6 address, any spelling) is loopback, private, link-local or otherwise not public. */
export function isPrivateAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 4) return PRIVATE.check(ip, 'ipv4');
  if (family !== 6 || !ipaddr.IPv6.isValid(ip)) return true; // not an address at all: never treat as public
  const a = ipaddr.IPv6.parse(ip);
  const v4 = embeddedIpv4(a);
  if (v4 !== null) return PRIVATE.check(v4, 'ipv4');
  return PRIVATE.check(new ipaddr.IPv6(a.parts).toRFC5952String(), 'ipv6');
}

/** A host's addresses from a resolver of the caller's (mail's: `dns.servers`) instead of the system's. */
export type Resolve = (host: string) => Promise<string[]>;

export interface VettedUrl {
  url: URL;
  /** The address to connect to. */
  address: string;
  family: 4 | 6;
}

/**
 * Parse `url`, insist on http(s), resolve its host (all addresses) and refuse it when any address
 * is not public — unless `allowPrivate`. Returns the address to connect to.
 */
export async function assertPublicUrl(url: string, allowPrivate: boolean, resolve?: Resolve): Promise<VettedUrl> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new GuardError('invalid_url', 'it is not a valid URL');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new GuardError('invalid_url', 'only http and https URLs can be fetched');
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: { address: string; family: number }[];
  if (isIP(host)) addresses = [{ address: host, family: isIP(host) }];
  else {
    try {
      addresses = resolve ? (await resolve(host)).map((address) => ({ address, family: isIP(address) })) : await lookup(host, { all: true, verbatim: true });
    } catch {
      addresses = [];
    }
    if (addresses.length === 0) throw new GuardError('unresolvable', `the host \`${host}\` cannot be resolved`);
  }
  // Refuse when any address is private: which one a client would pick is not ours to predict.
  const blocked = allowPrivate ? undefined : addresses.find((a) => isPrivateAddress(a.address));
  if (blocked) throw new GuardError('forbidden_address', `the host \`${host}\` resolves to a private or loopback address (${blocked.address})`);
  const first = addresses[0];
  return { url: u, address: first.address, family: first.family === 6 ? 6 : 4 };
}

export interface SafeFetchOptions {
  allowPrivate: boolean;
  /** Largest response body accepted (bytes, after content decoding). */
  maxBytes: number;
  /** Time for the whole exchange, redirects and body included. */
  timeoutMs: number;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** Redirects followed (each hop vetted again); 0 returns the 3xx response itself. */
  maxRedirects?: number;
  /** Keep the first `maxBytes` of a longer body instead of failing (e.g. a webhook reply excerpt). */
  truncate?: boolean;
  /** Resolve host names with this instead of the system resolver (MTA-STS: the mail resolver). */
  resolve?: Resolve;
  /** Certificate authorities (PEM) trusted beside the system's for https:// (`delivery.mta_sts.ca_file`). */
  ca?: string[];
}

export interface SafeResponse {
  status: number;
  headers: Headers;
  bytes: Uint8Array;
  /** The URL that answered, after redirects. */
  url: string;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Fetch a caller-chosen URL under the rules above; throws GuardError on refusal or failure. */
export async function safeFetch(url: string, opts: SafeFetchOptions): Promise<SafeResponse> {
  const signal = AbortSignal.timeout(opts.timeoutMs);
  const timedOut = () => new GuardError('timeout', `no complete answer within ${opts.timeoutMs / 1000} s`);
  const maxRedirects = opts.maxRedirects ?? 3;
  let method = (opts.method ?? 'GET').toUpperCase();
  let body = opts.body;
  let current = url;
  try {
    for (let hop = 0; ; hop++) {
      const target = await abortable(assertPublicUrl(current, opts.allowPrivate, opts.resolve), signal);
      const res = await connect(target, { method, body, headers: opts.headers ?? {}, signal, ca: opts.ca });
      const location = res.headers.get('location');
      if (REDIRECTS.has(res.status) && location && maxRedirects > 0) {
        await res.body?.cancel();
        if (hop >= maxRedirects) throw new GuardError('redirects', `more than ${maxRedirects} redirects`);
        current = new URL(location, target.url).href;
        // RFC 9110 §15.4: 303 (and, by long practice, 301/302 after POST) continue as GET without a body.
        if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
          if (method !== 'HEAD') method = 'GET';
          body = undefined;
        }
        continue;
      }
      const bytes = await readLimited(res, opts.maxBytes, opts.truncate ?? false);
      return { status: res.status, headers: res.headers, bytes, url: target.url.href };
    }
  } catch (e) {
    if (signal.aborted) throw timedOut();
    if (e instanceof GuardError) throw e;
    throw new GuardError('network', `the connection failed (${(e as Error).message})`, (e as { code?: string }).code ?? null);
  }
}

/** One request to the vetted address, the original host in `Host` (and in SNI and certificate checks). */
function connect(target: VettedUrl, init: { method: string; body?: string | Uint8Array; headers: Record<string, string>; signal: AbortSignal; ca?: string[] }) {
  const direct = new URL(target.url.href);
  direct.hostname = target.family === 6 ? `[${target.address}]` : target.address;
  const hostname = target.url.hostname.replace(/^\[(.*)\]$/, '$1');
  return fetch(direct.href, {
    method: init.method,
    body: init.body,
    headers: { ...init.headers, host: target.url.host },
    redirect: 'manual',
    signal: init.signal,
    proxy: false, // the vetted address is where we connect, not some proxy's idea of the host
    tls: { ...(isIP(hostname) ? {} : { serverName: hostname }), ...(init.ca?.length ? { ca: [...rootCertificates, ...init.ca] } : {}) },
  } as RequestInit);
}

/**
 * The response body, refusing more than `maxBytes` while streaming (Content-Length may lie or be
 * absent) — or, with `truncate`, cut at `maxBytes`.
 */
async function readLimited(res: Response, maxBytes: number, truncate: boolean): Promise<Uint8Array> {
  const tooLarge = () => new GuardError('too_large', `the response is larger than ${maxBytes} bytes`);
  const declared = Number(res.headers.get('content-length'));
  if (!truncate && !res.headers.get('content-encoding') && declared > maxBytes) {
    await res.body?.cancel();
    throw tooLarge();
  }
  const bytes = await readBounded(res.body, maxBytes, truncate);
  if (!bytes) throw tooLarge();
  return bytes;
}

/** `p`, or a rejection as soon as `signal` aborts (DNS lookups cannot be cancelled themselves). */
function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
