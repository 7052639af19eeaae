// DNS lookups through the configured servers (`dns.servers`, SPEC.md §4), or the system's.
// On Bun a NODATA answer surfaces as ENOTFOUND, indistinguishable from NXDOMAIN, so both are
// "no records" (STACK-NOTES.md); only real failures (timeouts, SERVFAIL) are errors.
//
// TXT lookups do not go through node:dns: Bun's `resolveTxt` (c-ares `ares_parse_txt_reply`)
// returns every <character-string> as a record of its own, losing the record boundaries
// (oven-sh/bun#21370, still present in Bun 1.4.5). A 2048-bit DKIM key is longer than 255 bytes,
// so it always arrives as two or more strings of one record, and SPF (RFC 7208 §3.3) and DKIM
// (RFC 6376 §3.6.2.2) both need the strings of each record joined — and only those. So TXT
// queries are sent here directly: RFC 1035 wire format over UDP (EDNS0, 1232-byte payload; without
// EDNS for a server answering FORMERR), retried over TCP when the answer is truncated, with the same
// servers, timeout and tries as node:dns. Nothing is cached: every check sees the zone as it is.
import { promises as dns } from 'node:dns';
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
    let edns: Buffer;
    let plain: Buffer;
    try {
      edns = buildQuery(name, TYPE_TXT, true);
      plain = buildQuery(name, TYPE_TXT, false);
    } catch {
      throw new DnsError('EBADNAME', host);
    }
    let last = 'ECONNREFUSED';
    for (let attempt = 0; attempt < Math.max(1, this.tries); attempt++) {
      for (const server of this.servers.map(parseServer)) {
        try {
          let query = edns;
          let res = parseResponse(await udpExchange(server, query, this.timeoutMs), query);
          if (res.rcode === RCODE_FORMERR) {
            // RFC 6891 §7: a server that does not know EDNS answers FORMERR; ask it again without.
            query = plain;
            res = parseResponse(await udpExchange(server, query, this.timeoutMs), query);
          }
          if (res.truncated) res = parseResponse(await tcpExchange(server, query, this.timeoutMs), query);
          if (res.rcode === RCODE_NOERROR) return res.txt;
          if (res.rcode === RCODE_NXDOMAIN) return [];
          last = RCODE_NAMES[res.rcode] ?? 'EBADRESP';
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

// --- A minimal stub resolver for TXT (RFC 1035 §4, RFC 6891 for the OPT record) ---------------

interface Server {
  host: string;
  port: number;
  family: 4 | 6;
}

const TYPE_TXT = 16;
const TYPE_OPT = 41;
const CLASS_IN = 1;
const RCODE_NOERROR = 0;
const RCODE_FORMERR = 1;
const RCODE_NXDOMAIN = 3;
const RCODE_NAMES: Record<number, string> = { 1: 'EFORMERR', 2: 'ESERVFAIL', 4: 'ENOTIMP', 5: 'EREFUSED' };
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

function buildQuery(name: string, type: number, edns: boolean): Buffer {
  if (!/^[\x21-\x7e]+$/.test(name)) throw dnsError('EBADNAME'); // IDNs arrive in their ASCII form
  const labels = name.split('.').map((l) => Buffer.from(l, 'ascii'));
  if (labels.some((l) => l.length === 0 || l.length > 63) || labels.reduce((n, l) => n + l.length + 1, 1) > 255) throw dnsError('EBADNAME');
  const header = Buffer.alloc(12);
  randomBytes(2).copy(header, 0); // id
  header.writeUInt16BE(0x0100, 2); // RD
  header.writeUInt16BE(1, 4); // QDCOUNT
  header.writeUInt16BE(edns ? 1 : 0, 10); // ARCOUNT: the OPT record
  const qname = Buffer.concat([...labels.flatMap((l) => [Buffer.from([l.length]), l]), Buffer.from([0])]);
  const question = Buffer.alloc(4);
  question.writeUInt16BE(type, 0);
  question.writeUInt16BE(CLASS_IN, 2);
  if (!edns) return Buffer.concat([header, qname, question]);
  // OPT: root name, type 41, class = UDP payload size, ttl 0 (no extended flags), no options.
  const opt = Buffer.alloc(11);
  opt.writeUInt8(0, 0);
  opt.writeUInt16BE(TYPE_OPT, 1);
  opt.writeUInt16BE(EDNS_PAYLOAD, 3);
  opt.writeUInt32BE(0, 5);
  opt.writeUInt16BE(0, 9);
  return Buffer.concat([header, qname, question, opt]);
}

/** Offset after the (possibly compressed) name starting at `off`. */
function skipName(buf: Buffer, off: number): number {
  for (;;) {
    const len = buf.readUInt8(off);
    if ((len & 0xc0) === 0xc0) return off + 2;
    if (len & 0xc0) throw dnsError('EBADRESP');
    off += 1 + len;
    if (len === 0) return off;
  }
}

interface Parsed {
  rcode: number;
  truncated: boolean;
  txt: string[][];
}

/** Parse an answer to `query`; throws EBADRESP when it is malformed or answers something else. */
function parseResponse(buf: Buffer, query: Buffer): Parsed {
  try {
    if (buf.readUInt16BE(0) !== query.readUInt16BE(0)) throw dnsError('EBADRESP');
    const flags = buf.readUInt16BE(2);
    if (!(flags & 0x8000)) throw dnsError('EBADRESP'); // not a response
    const truncated = (flags & 0x0200) !== 0;
    const rcode = flags & 0x000f;
    const qd = buf.readUInt16BE(4);
    const an = buf.readUInt16BE(6);
    let off = 12;
    if (qd === 1) {
      // The question must be ours (case-insensitively, RFC 4343).
      const qEnd = skipName(query, 12) + 4;
      const end = skipName(buf, off) + 4;
      if (end - off !== qEnd - 12 || buf.subarray(off, end).toString('latin1').toLowerCase() !== query.subarray(12, qEnd).toString('latin1').toLowerCase())
        throw dnsError('EBADRESP');
      off = end;
    } else if (qd !== 0 || (rcode === RCODE_NOERROR && !truncated)) throw dnsError('EBADRESP'); // errors may omit the question
    const txt: string[][] = [];
    if (!truncated) {
      for (let i = 0; i < an; i++) {
        off = skipName(buf, off);
        const type = buf.readUInt16BE(off);
        const cls = buf.readUInt16BE(off + 2);
        const rdlen = buf.readUInt16BE(off + 8);
        off += 10;
        const end = off + rdlen;
        if (end > buf.length) throw dnsError('EBADRESP');
        if (type === TYPE_TXT && cls === CLASS_IN) {
          const strings: string[] = [];
          for (let p = off; p < end; ) {
            const len = buf.readUInt8(p);
            if (p + 1 + len > end) throw dnsError('EBADRESP');
            strings.push(buf.subarray(p + 1, p + 1 + len).toString('utf8'));
            p += 1 + len;
          }
          txt.push(strings);
        }
        off = end;
      }
    }
    return { rcode, truncated, txt };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code) throw e;
    throw dnsError('EBADRESP'); // RangeError: read past the end
  }
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
