// Who is on the other end of an HTTP request (README "Security": proxies). The connection's own
// address, unless it is one of the operator's reverse proxies (`http.trusted_proxies`): then
// `X-Forwarded-For`, read from the right — each proxy appends the address it received from — and
// the right-most address that is not itself a trusted proxy is the client. Everything to its left
// was written by the client and is never believed. Unset, nothing forwarded is believed at all.
// One function for every use: sign-in limits, sessions, tracking events, the request log.
import ipaddr from 'ipaddr.js';
import { isIP } from 'node:net';

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** An address in one spelling: IPv4-mapped IPv6 (`::ffff:1.2.3.4`) unwrapped, IPv6 in RFC 5952 form. */
export function canonicalAddress(ip: string): string {
  if (!isIP(ip)) return ip;
  const a = ipaddr.process(ip);
  return a.kind() === 'ipv6' ? (a as ipaddr.IPv6).toRFC5952String() : a.toString();
}

/** `1.2.3.4`, `10.0.0.0/8`, `::1` or `fd00::/8` as a range; null when it is none of those. */
export function parseRange(text: string): Range | null {
  const t = text.trim();
  const [addr = '', bits] = t.split('/');
  if (!isIP(addr)) return null; // strict spellings only (ipaddr.js also reads `0x7f.1`)
  if (bits === undefined) {
    const a = ipaddr.process(addr);
    return [a, a.kind() === 'ipv4' ? 32 : 128];
  }
  if (!/^\d{1,3}$/.test(bits) || !ipaddr.isValidCIDR(t)) return null;
  const [a, n] = ipaddr.parseCIDR(t);
  // An IPv4-mapped range (`::ffff:10.0.0.0/104`) is the IPv4 range it maps.
  if (a.kind() === 'ipv6' && (a as ipaddr.IPv6).isIPv4MappedAddress() && n >= 96) return [(a as ipaddr.IPv6).toIPv4Address(), n - 96];
  return [a, n];
}

/** Connections' addresses kept in their one spelling: a server hears few peers, each on every request. */
const PEERS_KEPT = 4096;

export class TrustedProxies {
  private readonly ranges: Range[];
  /** `canonicalAddress` of recent peers: ipaddr.js's parse was 2.5 % of the HTTP thread under POST /emails. */
  private readonly peers = new Map<string, string>();

  /** `list`: addresses and CIDR ranges (checked by config.ts); entries that parse as neither are ignored. */
  constructor(list: readonly string[]) {
    this.ranges = list.map(parseRange).filter((r): r is Range => r !== null);
  }

  /** Whether `ip` (any spelling) is one of the proxies. */
  trusts(ip: string): boolean {
    if (this.ranges.length === 0 || !isIP(ip)) return false;
    const a = ipaddr.process(ip);
    return this.ranges.some(([net, bits]) => net.kind() === a.kind() && a.match(net, bits));
  }

  private peerAddress(peer: string): string {
    let canonical = this.peers.get(peer);
    if (canonical === undefined) {
      canonical = canonicalAddress(peer);
      if (this.peers.size >= PEERS_KEPT) this.peers.clear();
      this.peers.set(peer, canonical);
    }
    return canonical;
  }

  /**
   * The client's address: `peer` (the connection's) unless it is a trusted proxy; then the
   * right-most entry of `forwardedFor` that is not one, or the left-most when all are. An entry that
   * is no address ends the walk at the proxy that passed it on.
   */
  clientAddress(peer: string, forwardedFor: string | null): string {
    let client = this.peerAddress(peer);
    if (!forwardedFor || !this.trusts(client)) return client;
    const hops = forwardedFor.split(',');
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = hops[i]!.trim();
      if (!isIP(hop)) return client;
      client = canonicalAddress(hop);
      if (!this.trusts(client)) return client;
    }
    return client;
  }
}
