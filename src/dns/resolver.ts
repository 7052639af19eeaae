// DNS lookups through the configured servers (`dns.servers`, config.example.toml), or the system's
// (/etc/resolv.conf as node:dns reads it). Every query is sent here (exchange.ts: dns-packet over
// one long-lived UDP socket, TCP when truncated), not through node:dns: Bun's `resolveTxt` loses
// the record boundaries of TXT answers (oven-sh/bun#21370, still in Bun 1.4.5) — a 2048-bit DKIM
// key is always several strings of one record, and SPF (RFC 7208 §3.3) and DKIM (RFC 6376
// §3.6.2.2) need the strings of each record joined, and only those — and a Bun `dns.Resolver`
// keeps a NODATA answer whatever its SOA says, while a fresh one per lookup cost a socket each.
//
// NXDOMAIN and NODATA are both "no records" ([]); only real failures (timeouts, SERVFAIL, REFUSED)
// are errors (DnsError). `new Resolver(…)` asks the servers every time (domain verification must
// see the zone as it is now); `withCache()` is a view of it, on the same socket, that keeps answers
// for their TTL (cache.ts) and asks once for identical lookups in flight — for mail: inbound
// SPF/DKIM/DMARC and delivery's MX and address lookups, as any MTA's resolver does.
import { promises as dns } from 'node:dns';
import type packet from 'dns-packet';
import { DnsCache, type CacheLimits } from './cache';
import { reverseName } from './reverse';
import { UdpExchange, tcpAsk, parseServer, type Answer, type QueryType, type Rr, type Server } from './exchange';

export { readAnswer } from './exchange';

export class DnsError extends Error {
  constructor(
    readonly code: string,
    readonly host: string,
  ) {
    super(`DNS lookup of ${host} failed: ${code}`);
  }
}

const RCODE_ERRORS: Record<string, string> = { FORMERR: 'EFORMERR', SERVFAIL: 'ESERVFAIL', NOTIMP: 'ENOTIMP', REFUSED: 'EREFUSED' };

/** The records of one lookup, and how long they may be kept (seconds; 0 = not at all). */
interface RRset {
  records: Rr[];
  ttl: number;
  size: number;
}

/** RFC 2181 §8: a TTL with the top bit set is read as 0. */
const ttlOf = (a: { ttl?: number }) => (a.ttl === undefined || a.ttl > 0x7fffffff ? 0 : a.ttl);

/**
 * The records of `type` for `name` in an answer, following CNAMEs inside it (a recursive server
 * includes the chain, RFC 1034 §4.3.2), with the least TTL of everything used; for no records, the
 * negative-caching TTL: min(SOA TTL, SOA MINIMUM), RFC 2308 §5, or 0 without an SOA.
 */
function rrset(res: Answer, name: string, type: QueryType): RRset {
  let owner = name.toLowerCase();
  let ttl = Infinity;
  for (let hop = 0; hop < 8; hop++) {
    const here = res.answers.filter((a) => (a.class ?? 'IN') === 'IN' && a.name.toLowerCase() === owner);
    const records = here.filter((a) => a.type === type);
    if (records.length) return { records, ttl: Math.min(ttl, ...records.map(ttlOf)), size: res.size };
    const cname = here.find((a) => a.type === 'CNAME');
    if (!cname) break;
    ttl = Math.min(ttl, ttlOf(cname));
    owner = String(cname.data).toLowerCase();
  }
  const soa = res.authorities.find((a) => a.type === 'SOA');
  const negative = soa ? Math.min(ttlOf(soa), (soa.data as packet.SoaData).minimum ?? 0) : 0;
  return { records: [], ttl: Math.min(ttl, negative), size: res.size };
}

/** A name a query can carry (RFC 1035 §2.3.4): printable ASCII (IDNs in their A-label form), labels of 1–63 bytes, 255 in all. */
function validName(name: string): boolean {
  if (!/^[\x21-\x7e]+$/.test(name)) return false;
  const labels = name.split('.');
  return labels.every((l) => l.length > 0 && l.length <= 63) && labels.reduce((n, l) => n + l.length + 1, 1) <= 255;
}

export class Resolver {
  /** As node:dns `getServers()` lists them. */
  private readonly serverList: string[];
  private readonly servers: Server[];
  private readonly udp: UdpExchange;
  private readonly cache: DnsCache<RRset> | null;
  private readonly inFlight = new Map<string, Promise<RRset>>();

  constructor(
    servers: string[],
    private readonly timeoutMs = 5000,
    private readonly tries = 2,
    shared?: { udp: UdpExchange; cache: DnsCache<RRset> },
  ) {
    const probe = new dns.Resolver();
    if (servers.length) probe.setServers(servers);
    this.serverList = probe.getServers();
    this.servers = this.serverList.map(parseServer);
    this.udp = shared?.udp ?? new UdpExchange();
    this.cache = shared?.cache ?? null;
  }

  /** The same resolver (servers, socket) with a cache of its own, keeping answers for their TTL. */
  withCache(now: () => number = Date.now, limits?: CacheLimits): Resolver {
    return new Resolver(this.serverList, this.timeoutMs, this.tries, { udp: this.udp, cache: new DnsCache(limits, now) });
  }

  /** Close the socket (shutdown); lookups after this open a new one. */
  close(): void {
    this.udp.close();
  }

  /** TXT records, each one's strings joined (RFC 7208 §3.3 / RFC 6376 §3.6.2.2). */
  async txt(host: string): Promise<string[]> {
    return (await this.txtStrings(host)).map((parts) => parts.join(''));
  }

  /** TXT records as their character-strings (node:dns `resolveTxt` shape), decoded as UTF-8. */
  async txtStrings(host: string): Promise<string[][]> {
    return (await this.lookup(host, 'TXT')).map((a) => {
      const data = (a as packet.TxtAnswer).data;
      return (Array.isArray(data) ? data : [data]).map((d) => Buffer.from(d).toString('utf8'));
    });
  }

  async mx(host: string): Promise<{ exchange: string; priority: number }[]> {
    return (await this.lookup(host, 'MX')).map((a) => {
      const { exchange, preference } = (a as packet.MxAnswer).data;
      return { exchange, priority: preference ?? 0 };
    });
  }

  async a(host: string): Promise<string[]> {
    return (await this.lookup(host, 'A')).map((a) => String(a.data));
  }

  async aaaa(host: string): Promise<string[]> {
    return (await this.lookup(host, 'AAAA')).map((a) => String(a.data));
  }

  async cname(host: string): Promise<string[]> {
    return (await this.lookup(host, 'CNAME')).map((a) => String(a.data));
  }

  /** The names of an address (RFC 1035 §3.5, RFC 3596 §2.5): its PTR records. */
  async ptr(ip: string): Promise<string[]> {
    return (await this.lookup(reverseName(ip), 'PTR')).map((a) => String(a.data).replace(/\.$/, ''));
  }

  private async lookup(host: string, type: QueryType): Promise<Rr[]> {
    const name = host.replace(/\.$/, '');
    if (!validName(name)) throw new DnsError('EBADNAME', host);
    if (!this.cache) return (await this.query(name, type)).records;
    const key = `${type} ${name.toLowerCase()}`;
    const hit = this.cache.get(key);
    if (hit) return hit.records;
    let p = this.inFlight.get(key);
    if (!p) {
      p = this.query(name, type).then((set) => {
        this.cache!.set(key, set, set.ttl, set.size + key.length);
        return set;
      });
      this.inFlight.set(key, p);
      p.then(
        () => this.inFlight.delete(key),
        () => this.inFlight.delete(key),
      );
    }
    return (await p).records;
  }

  /** Every server in turn, `tries` rounds; the last failure's code when none answers. */
  private async query(name: string, type: QueryType): Promise<RRset> {
    let last = 'ECONNREFUSED';
    for (let attempt = 0; attempt < Math.max(1, this.tries); attempt++) {
      for (const server of this.servers) {
        try {
          let edns = true;
          let res = await this.udp.ask(server, name, type, edns, this.timeoutMs);
          if (res.rcode === 'FORMERR') {
            // RFC 6891 §7: a server that does not know EDNS answers FORMERR; ask it again without.
            edns = false;
            res = await this.udp.ask(server, name, type, edns, this.timeoutMs);
          }
          if (res.truncated) res = await tcpAsk(server, name, type, edns, this.timeoutMs);
          if (res.rcode === 'NOERROR' || res.rcode === 'NXDOMAIN') return rrset(res, name, type);
          last = RCODE_ERRORS[res.rcode] ?? 'EBADRESP';
        } catch (e) {
          last = (e as NodeJS.ErrnoException).code ?? 'EBADRESP';
        }
      }
    }
    throw new DnsError(last, name);
  }
}
