// DNS lookups through the configured servers (`dns.servers`, config.example.toml), or the system's.
// On Bun a NODATA answer surfaces as ENOTFOUND, indistinguishable from NXDOMAIN, so both are
// "no records"; only real failures (timeouts, SERVFAIL) are errors.
//
// TXT lookups do not go through node:dns: Bun's `resolveTxt` (c-ares `ares_parse_txt_reply`)
// returns every <character-string> as a record of its own, losing the record boundaries
// (oven-sh/bun#21370, still present in Bun 1.4.5). A 2048-bit DKIM key is longer than 255 bytes,
// so it always arrives as two or more strings of one record, and SPF (RFC 7208 §3.3) and DKIM
// (RFC 6376 §3.6.2.2) both need the strings of each record joined — and only those. So TXT
// queries are sent here directly, encoded and decoded by the dns-packet library: RFC 1035 over UDP
// (EDNS0, 1232-byte payload; without EDNS for a server answering FORMERR), retried over TCP when the
// answer is truncated, with the same servers, timeout and tries as node:dns. Only the exchange is
// ours. Nothing is cached: every check sees the zone as it is.
import { promises as dns } from 'node:dns';
import packet from 'dns-packet';
import { createSocket } from 'node:dgram';
import { connect, isIP } from 'node:net';
import { randomBytes } from 'node:crypto';

const NO_RECORDS = new Set(['ENOTFOUND', 'ENODATA', 'NXDOMAIN', 'ENONAME']);

export class DnsError extends Error {
  constructor(readonly code: string, readonly host: string) {
    super(`DNS lookup of ${host} failed: ${code}`);
  }
}

export class Resolver {
  private readonly servers: string[];

  constructor(servers: string[], private readonly timeoutMs = 5000, private readonly tries = 2) {
    const probe = new dns.Resolver();
    if (servers.length) probe.setServers(servers);
    this.servers = probe.getServers();
  }

  /**
   * A fresh c-ares channel per lookup: a Bun channel keeps a NODATA answer cached regardless of
   * the SOA's TTL (checked on 1.4.5: a name that had no MX did not show the MX published later),
   * which would keep a domain pending until a restart. A channel costs well under a millisecond
   * and holds no file descriptor between lookups.
   */
  private channel(): dns.Resolver {
    const r = new dns.Resolver({ timeout: this.timeoutMs, tries: this.tries });
    r.setServers(this.servers);
    return r;
  }

  private async wrap<T>(host: string, fn: (r: dns.Resolver) => Promise<T[]>): Promise<T[]> {
    try {
      return await fn(this.channel());
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? 'EUNKNOWN';
      if (NO_RECORDS.has(code)) return [];
      throw new DnsError(code, host);
    }
  }

  /** TXT records, each one's strings joined (RFC 7208 §3.3 / RFC 6376 §3.6.2.2). */
  async txt(host: string): Promise<string[]> {
    return (await this.txtStrings(host)).map((parts) => parts.join(''));
  }

  /** TXT records as their character-strings (node:dns `resolveTxt` shape); [] for NXDOMAIN/NODATA. */
  async txtStrings(host: string): Promise<string[][]> {
    const name = host.replace(/\.$/, '');
    if (!validName(name)) throw new DnsError('EBADNAME', host);
    const edns = txtQuery(name, true);
    const plain = txtQuery(name, false);
    let last = 'ECONNREFUSED';
    for (let attempt = 0; attempt < Math.max(1, this.tries); attempt++) {
      for (const server of this.servers.map(parseServer)) {
        try {
          let query = edns;
          let res = readTxtAnswer(await udpExchange(server, query, this.timeoutMs), query);
          if (res.rcode === 'FORMERR') {
            // RFC 6891 §7: a server that does not know EDNS answers FORMERR; ask it again without.
            query = plain;
            res = readTxtAnswer(await udpExchange(server, query, this.timeoutMs), query);
          }
          if (res.truncated) res = readTxtAnswer(await tcpExchange(server, query, this.timeoutMs), query);
          if (res.rcode === 'NOERROR') return res.txt;
          if (res.rcode === 'NXDOMAIN') return [];
          last = RCODE_ERRORS[res.rcode] ?? 'EBADRESP';
        } catch (e) {
          last = (e as NodeJS.ErrnoException).code ?? 'EBADRESP';
        }
      }
    }
    throw new DnsError(last, host);
  }

  async mx(host: string): Promise<{ exchange: string; priority: number }[]> {
    return this.wrap(host, (r) => r.resolveMx(host));
  }

  async a(host: string): Promise<string[]> {
    return this.wrap(host, (r) => r.resolve4(host));
  }

  async aaaa(host: string): Promise<string[]> {
    return this.wrap(host, (r) => r.resolve6(host));
  }

  async cname(host: string): Promise<string[]> {
    return this.wrap(host, (r) => r.resolveCname(host));
  }
}

// --- The TXT exchange (RFC 1035 §4.2, RFC 6891 for the OPT record) ------------------------------

interface Server {
  host: string;
  port: number;
  family: 4 | 6;
}

const RCODE_ERRORS: Record<string, string> = { FORMERR: 'EFORMERR', SERVFAIL: 'ESERVFAIL', NOTIMP: 'ENOTIMP', REFUSED: 'EREFUSED' };
const EDNS_PAYLOAD = 1232;

/** `ip`, `ipv4:port`, `[ipv6]`, `[ipv6]:port` (the forms `setServers`/`getServers` use). */
function parseServer(s: string): Server {
  const bracket = /^\[([^\]]+)\](?::(\d+))?$/.exec(s);
  if (bracket) return { host: bracket[1], port: Number(bracket[2] ?? 53), family: 6 };
  if (isIP(s) === 6) return { host: s, port: 53, family: 6 };
  const [host, port] = s.split(':');
  return { host, port: Number(port ?? 53), family: 4 };
}

function dnsError(code: string): NodeJS.ErrnoException {
  const e = new Error(code) as NodeJS.ErrnoException;
  e.code = code;
  return e;
}

/** A name a query can carry (RFC 1035 §2.3.4): printable ASCII (IDNs in their A-label form), labels of 1–63 bytes, 255 in all. */
function validName(name: string): boolean {
  if (!/^[\x21-\x7e]+$/.test(name)) return false;
  const labels = name.split('.');
  return labels.every((l) => l.length > 0 && l.length <= 63) && labels.reduce((n, l) => n + l.length + 1, 1) <= 255;
}

/** A recursive TXT query with a random id, with or without the EDNS0 OPT record. */
function txtQuery(name: string, edns: boolean): Buffer {
  return packet.encode({
    type: 'query',
    id: randomBytes(2).readUInt16BE(0),
    flags: packet.RECURSION_DESIRED,
    questions: [{ type: 'TXT', class: 'IN', name }],
    additionals: edns ? [{ type: 'OPT', name: '.', udpPayloadSize: EDNS_PAYLOAD, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] }] : [],
  });
}

export interface TxtAnswer {
  rcode: string;
  truncated: boolean;
  /** Each TXT record's character-strings, decoded as UTF-8. */
  txt: string[][];
}

/**
 * Read an answer to `query`; throws EBADRESP when it cannot be decoded, is not a response, or
 * answers another id or question (compared case-insensitively, RFC 4343).
 */
export function readTxtAnswer(buf: Buffer, query: Buffer): TxtAnswer {
  // dns-packet names the response code (`rcode`: NOERROR, NXDOMAIN, …); its types leave it out.
  let res: packet.DecodedPacket & { rcode?: string };
  try {
    res = packet.decode(buf);
  } catch {
    throw dnsError('EBADRESP');
  }
  const asked = packet.decode(query).questions![0];
  const truncated = !!res.flag_tc;
  const rcode = res.rcode ?? 'NOERROR';
  if (res.id !== query.readUInt16BE(0) || res.type !== 'response') throw dnsError('EBADRESP');
  const questions = res.questions ?? [];
  if (questions.length === 1) {
    const q = questions[0];
    if (q.type !== asked.type || q.name.toLowerCase() !== asked.name.toLowerCase()) throw dnsError('EBADRESP');
  } else if (questions.length !== 0 || (rcode === 'NOERROR' && !truncated)) throw dnsError('EBADRESP'); // errors may omit the question
  const txt: string[][] = [];
  if (!truncated)
    for (const a of res.answers ?? [])
      if (a.type === 'TXT' && (a.class ?? 'IN') === 'IN') txt.push((Array.isArray(a.data) ? a.data : [a.data]).map((d) => Buffer.from(d).toString('utf8')));
  return { rcode, truncated, txt };
}

/** One query over UDP; answers from elsewhere or with another id are ignored (RFC 5452). */
function udpExchange(server: Server, query: Buffer, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const sock = createSocket(server.family === 6 ? 'udp6' : 'udp4');
    let done = false;
    const finish = (err: Error | null, msg?: Buffer) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      try {
        sock.close();
      } catch {}
      if (err) reject(err);
      else resolve(msg!);
    };
    const timer = setTimeout(() => finish(dnsError('ETIMEOUT')), timeoutMs);
    sock.on('error', (e) => finish(e));
    sock.on('message', (msg) => {
      if (msg.length >= 2 && msg.readUInt16BE(0) === query.readUInt16BE(0)) finish(null, msg);
    });
    // Connected: only the server's datagrams arrive, and ICMP "port unreachable" → ECONNREFUSED.
    sock.connect(server.port, server.host, () => sock.send(query, (e) => e && finish(e)));
  });
}

/** One query over TCP (RFC 1035 §4.2.2: two-byte length prefix). */
function tcpExchange(server: Server, query: Buffer, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: server.host, port: server.port });
    let buf = Buffer.alloc(0);
    let done = false;
    const finish = (err: Error | null, msg?: Buffer) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      if (err) reject(err);
      else resolve(msg!);
    };
    const timer = setTimeout(() => finish(dnsError('ETIMEOUT')), timeoutMs);
    sock.on('error', (e) => finish(e));
    sock.on('connect', () => {
      const prefix = Buffer.alloc(2);
      prefix.writeUInt16BE(query.length);
      sock.write(Buffer.concat([prefix, query]));
    });
    sock.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) finish(null, buf.subarray(2, 2 + buf.readUInt16BE(0)));
    });
    sock.on('end', () => finish(dnsError('EBADRESP')));
  });
}
