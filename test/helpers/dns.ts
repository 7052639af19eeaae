// An authoritative DNS server for tests, on 127.0.0.1 (UDP and TCP on the same random free port),
// answering from a mutable in-memory zone. Built on the `dns2` package's wire codec (Packet);
// the sockets are plain node:dgram / node:net so the server controls truncation and failures.
//
//   const dns = await startDnsServer();
//   const p = await startPosthorn({ 'dns.servers': [dns.address] });
//   dns.zone.set('send.example.test', 'MX', [{ exchange: 'mx.posthorn.test', priority: 10 }]);
//   dns.zone.set('send.example.test', 'TXT', ['v=spf1 a:mx.posthorn.test ~all']);
//   dns.zone.set('posthorn._domainkey.example.test', 'TXT', [`v=DKIM1; k=rsa; p=${key}`]); // split at 255 bytes
//   dns.zone.set('mx1.example.test', 'A', ['127.0.0.1']);
//   dns.zone.set('1.0.0.127.in-addr.arpa', 'PTR', ['mx1.example.test']);   // reverse DNS
//   dns.zone.clear('send.example.test', 'TXT');
//   dns.zone.publish('example.test', domain.records);          // everything GET /domains/{id} lists
//   dns.failWith('SERVFAIL');   // every query fails (also 'REFUSED', 'DROP' = never answer)
//   await dns.close();
//
// Behaviour (what a real authoritative server does, as far as resolvers notice):
// - Names are case-insensitive, a trailing dot is ignored; everything lives in one flat zone.
// - A name with records of another type (or with records only below it, an "empty non-terminal"
//   such as `_domainkey.example.test`) answers NOERROR with no answers (NODATA); any other name
//   answers NXDOMAIN. Both carry an SOA in the authority section with TTL 0 and minimum 0, so no
//   resolver should cache the negative answer (RFC 2308 §5); `zone.setNegativeTtl(ttl, minimum)`
//   gives the SOA other values, for tests of negative caching.
// - A name holding a CNAME answers any other type with the CNAME, followed by the target's records
//   of the asked type when the target is in the zone (chains are followed up to 8 steps).
// - Records default to TTL 0: the zone is mutable and resolvers (c-ares keeps a query cache) must
//   see each change on the next query.
// - TXT: a record given as a string is split into 255-byte character-strings (RFC 1035 §3.3.14;
//   needed for DKIM keys); give a string[] to choose the split yourself. Resolvers return the
//   strings separately (node:dns `resolveTxt` → string[][]); consumers join them. Bun's own
//   `resolveTxt` loses which strings belong to which record (oven-sh/bun#21370): read TXT with
//   Posthorn's `Resolver#txt` / `#txtStrings` (e.g. as mailauth's `resolver`).
// - `publish(domain, records)` puts the records of a `GET /domains/{id}` answer into the zone.
// - UDP answers larger than the client's limit (512 bytes, or its EDNS payload size) are sent
//   truncated (TC bit, no records) so the client retries over TCP, which is served on the same port.
// - `queries` logs every question received ({name, type}), for tests that assert lookups happened.
// - Failures on demand: `zone.fail(name, …)` or `failWith(…)` for SERVFAIL / REFUSED / DROP (no
//   answer: the client times out); `setEdns(false)` for a server that answers FORMERR to EDNS.
import { createSocket, type RemoteInfo, type Socket as UdpSocket } from 'node:dgram';
import { createServer, type Server as TcpServer, type Socket as TcpSocket } from 'node:net';
import { createRequire } from 'node:module';

// dns2 ships no type declarations; only its Packet codec is used, through this narrow view.
interface DnsPacket {
  header: { id: number; qr: number; aa: number; tc: number; rd: number; ra: number; rcode: number; [k: string]: unknown };
  questions: { name: string; type: number; class: number }[];
  answers: Record<string, unknown>[];
  authorities: Record<string, unknown>[];
  additionals: Record<string, unknown>[];
  toBuffer(): Buffer;
}
interface PacketStatic {
  parse(buf: Buffer): DnsPacket;
  createResponseFromRequest(req: DnsPacket): DnsPacket;
  TYPE: Record<string, number>;
  CLASS: Record<string, number>;
}
const Packet = (createRequire(import.meta.url)('dns2') as { Packet: PacketStatic }).Packet;

export type RecordType = 'A' | 'AAAA' | 'MX' | 'TXT' | 'CNAME' | 'PTR';

/** Record data per type, as given to `zone.set`. */
export interface RecordData {
  A: string; // '127.0.0.1'
  AAAA: string; // '::1'
  MX: { exchange: string; priority: number };
  TXT: string | string[]; // one record: a string (auto-split at 255 bytes) or explicit character-strings
  CNAME: string; // target name
  PTR: string; // the address's name, at its reverse name (`1.0.0.127.in-addr.arpa`, RFC 1035 §3.5)
}

export type Failure = 'SERVFAIL' | 'REFUSED' | 'DROP';

/** A DNS record as the domains API lists it (docs/api.md §9.7). */
export interface PublishedRecord {
  record?: string;
  name: string;
  type: string;
  value: string;
  priority?: number;
}

const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const;
const TYPE_NAMES: Record<number, string> = Object.fromEntries(Object.entries(Packet.TYPE).map(([k, v]) => [v, k]));

const norm = (name: string) => name.trim().replace(/\.$/, '').toLowerCase();

/** Split a string into character-strings of at most 255 bytes (UTF-8, never inside a character). */
export function splitTxt(text: string): string[] {
  const parts: string[] = [];
  let cur = '';
  let curBytes = 0;
  for (const ch of text) {
    const n = Buffer.byteLength(ch);
    if (curBytes + n > 255) {
      parts.push(cur);
      cur = '';
      curBytes = 0;
    }
    cur += ch;
    curBytes += n;
  }
  parts.push(cur);
  return parts;
}

interface Stored {
  ttl: number;
  records: unknown[];
}

/** The mutable zone. All names are absolute (`send.example.test`), no trailing dot needed. */
export class Zone {
  private readonly data = new Map<string, Map<RecordType, Stored>>();
  private readonly failures = new Map<string, Failure>();
  /** TTL and MINIMUM of the SOA in negative answers (RFC 2308 §5: a resolver keeps the lesser). */
  negative = { ttl: 0, minimum: 0 };

  setNegativeTtl(ttl: number, minimum = ttl): this {
    this.negative = { ttl, minimum };
    return this;
  }

  /** Replace the records of one name and type (an empty list is the same as `clear`). */
  set<T extends RecordType>(name: string, type: T, records: RecordData[T][], opts: { ttl?: number } = {}): this {
    if (records.length === 0) return this.clear(name, type);
    if (type === 'CNAME' && records.length !== 1) throw new Error('a name holds at most one CNAME');
    const n = norm(name);
    const byType = this.data.get(n) ?? new Map<RecordType, Stored>();
    byType.set(type, { ttl: opts.ttl ?? 0, records: records.map((r) => (type === 'CNAME' ? norm(r as string) : r)) });
    this.data.set(n, byType);
    return this;
  }

  /** Add records to a name and type, keeping those already there. */
  add<T extends RecordType>(name: string, type: T, ...records: RecordData[T][]): this {
    return this.set(name, type, [...this.get(name, type), ...records]);
  }

  /** The records of one name and type (as given to `set`). */
  get<T extends RecordType>(name: string, type: T): RecordData[T][] {
    return (this.data.get(norm(name))?.get(type)?.records ?? []) as RecordData[T][];
  }

  /** Remove the records of one type, or (no type) every record of the name. */
  clear(name: string, type?: RecordType): this {
    const n = norm(name);
    const byType = this.data.get(n);
    if (!byType) return this;
    if (type) byType.delete(type);
    if (!type || byType.size === 0) this.data.delete(n);
    return this;
  }

  /**
   * Make queries for one name (of one type, if given) fail (SERVFAIL / REFUSED) or go unanswered
   * (DROP); null restores it.
   */
  fail(name: string, failure: Failure | null, type?: RecordType): this {
    const key = type ? `${norm(name)} ${type}` : norm(name);
    if (failure) this.failures.set(key, failure);
    else this.failures.delete(key);
    return this;
  }

  /**
   * Publish records as Posthorn's `GET /domains/{id}` lists them (`name` relative to the domain,
   * `@` = the domain itself), optionally only some (`only: r => r.record !== 'DKIM'`).
   */
  publish(domain: string, records: PublishedRecord[], only: (r: PublishedRecord) => boolean = () => true): this {
    for (const r of records.filter(only)) {
      const fqdn = r.name === '@' ? domain : `${r.name}.${domain}`;
      if (r.type === 'MX') this.add(fqdn, 'MX', { exchange: r.value, priority: r.priority ?? 10 });
      else if (r.type === 'TXT') this.add(fqdn, 'TXT', r.value);
      else if (r.type === 'CNAME') this.set(fqdn, 'CNAME', [r.value]);
      else if (r.type === 'A' || r.type === 'AAAA') this.add(fqdn, r.type, r.value);
    }
    return this;
  }

  /** Forget every record and failure. */
  reset(): this {
    this.data.clear();
    this.failures.clear();
    this.negative = { ttl: 0, minimum: 0 };
    return this;
  }

  failureFor(name: string, type?: string): Failure | undefined {
    return (type && this.failures.get(`${norm(name)} ${type}`)) || this.failures.get(norm(name));
  }

  /** Does the name exist: records of any type at it, or at a name below it (empty non-terminal)? */
  exists(name: string): boolean {
    const n = norm(name);
    if (this.data.has(n)) return true;
    for (const k of this.data.keys()) if (k.endsWith(`.${n}`)) return true;
    return false;
  }

  lookup(name: string, type: RecordType): Stored | undefined {
    return this.data.get(norm(name))?.get(type);
  }

  /** Every record at a name (ANY queries). */
  entries(name: string): [RecordType, Stored][] {
    return [...(this.data.get(norm(name))?.entries() ?? [])];
  }
}

export interface TestDns {
  /** `127.0.0.1:PORT`, the form `dns.servers` and `Resolver#setServers` take. */
  address: string;
  host: string;
  port: number;
  zone: Zone;
  /** Every question received, oldest first ({name} lowercased without trailing dot, {type} e.g. 'MX'). */
  queries: { name: string; type: string; transport: 'udp' | 'tcp' }[];
  /** Fail every query (SERVFAIL, REFUSED) or ignore it (DROP, a timeout for the client); null to answer again. */
  failWith(failure: Failure | null): void;
  /** false: behave like a pre-EDNS server, answering FORMERR to queries that carry an OPT record. */
  setEdns(supported: boolean): void;
  close(): Promise<void>;
}

/** Start the server on 127.0.0.1, UDP and TCP on one free port. */
export async function startDnsServer(): Promise<TestDns> {
  const zone = new Zone();
  const queries: TestDns['queries'] = [];
  let globalFailure: Failure | null = null;
  let ednsSupported = true;

  /** The answer to one query packet, or null to stay silent. */
  const answer = (query: Buffer, transport: 'udp' | 'tcp'): Buffer | null => {
    let req: DnsPacket;
    try {
      req = Packet.parse(query);
    } catch {
      return null;
    }
    if (req.header.qr) return null; // a response, not a query
    const q = req.questions[0];
    const res = Packet.createResponseFromRequest(req);
    res.header.aa = 1;
    res.header.ra = 0;
    res.header.tc = 0;
    res.header.rcode = RCODE.NOERROR;
    res.answers = [];
    res.authorities = [];
    res.additionals = [];
    if (!q || req.questions.length !== 1) {
      res.header.rcode = 1; // FORMERR
      return res.toBuffer();
    }
    const name = norm(q.name);
    const typeName = TYPE_NAMES[q.type] ?? String(q.type);
    queries.push({ name, type: typeName, transport });
    const failure = globalFailure ?? zone.failureFor(name, typeName);
    if (failure === 'DROP') return null;
    if (failure) {
      res.header.rcode = RCODE[failure];
      return res.toBuffer();
    }
    if (!ednsSupported && hasOpt(query)) {
      res.header.rcode = 1; // FORMERR (RFC 6891 §7)
      return res.toBuffer();
    }

    // Follow CNAMEs inside the zone, then add the records of the asked type.
    let current = name;
    for (let hop = 0; hop < 8; hop++) {
      if (q.type === Packet.TYPE.ANY) {
        for (const [t, stored] of zone.entries(current)) res.answers.push(...resources(current, t, stored));
        break;
      }
      const wanted = typeName as RecordType;
      const direct = zone.lookup(current, wanted);
      if (direct) {
        res.answers.push(...resources(current, wanted, direct));
        break;
      }
      const cname = wanted !== 'CNAME' ? zone.lookup(current, 'CNAME') : undefined;
      if (!cname) break;
      res.answers.push(...resources(current, 'CNAME', cname));
      current = cname.records[0] as string;
    }
    if (res.answers.length === 0) {
      if (!zone.exists(current)) res.header.rcode = current === name ? RCODE.NXDOMAIN : RCODE.NOERROR;
      res.authorities.push(soa(current, zone.negative));
    }

    let out = res.toBuffer();
    if (transport === 'udp' && out.length > udpLimit(query)) {
      res.header.tc = 1;
      res.answers = [];
      res.authorities = [];
      out = res.toBuffer();
    }
    return out;
  };

  // UDP and TCP on the same port: bind UDP to a free port, then TCP to it; retry if TCP's is taken.
  for (let attempt = 0; ; attempt++) {
    const udp = createSocket('udp4');
    const port = await new Promise<number>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(0, '127.0.0.1', () => resolve(udp.address().port));
    });
    const tcp = createServer();
    const ok = await new Promise<boolean>((resolve) => {
      tcp.once('error', () => resolve(false));
      tcp.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (!ok) {
      udp.close();
      if (attempt >= 20) throw new Error('test DNS server: no port free for both UDP and TCP');
      continue;
    }
    return serve(udp, tcp, port);
  }

  function serve(udp: UdpSocket, tcp: TcpServer, port: number): TestDns {
    udp.on('error', () => {});
    udp.on('message', (msg: Buffer, rinfo: RemoteInfo) => {
      const out = answer(msg, 'udp');
      if (out) udp.send(out, rinfo.port, rinfo.address, () => {});
    });
    const sockets = new Set<TcpSocket>();
    tcp.on('connection', (sock) => {
      sockets.add(sock);
      sock.on('close', () => sockets.delete(sock));
      sock.on('error', () => sock.destroy());
      // TCP framing (RFC 1035 §4.2.2): 2-byte length prefix; several queries may share a connection.
      let buf = Buffer.alloc(0);
      sock.on('data', (chunk: Buffer) => {
        buf = Buffer.concat([buf, chunk]);
        while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
          const len = buf.readUInt16BE(0);
          const msg = buf.subarray(2, 2 + len);
          buf = buf.subarray(2 + len);
          const out = answer(Buffer.from(msg), 'tcp');
          if (!out) continue;
          const prefix = Buffer.alloc(2);
          prefix.writeUInt16BE(out.length);
          sock.write(Buffer.concat([prefix, out]));
        }
      });
    });
    let closed: Promise<void> | null = null;
    return {
      address: `127.0.0.1:${port}`,
      host: '127.0.0.1',
      port,
      zone,
      queries,
      failWith(failure) {
        globalFailure = failure;
      },
      setEdns(supported) {
        ednsSupported = supported;
      },
      close() {
        closed ??= Promise.all([
          new Promise<void>((resolve) => udp.close(() => resolve())),
          new Promise<void>((resolve) => {
            for (const s of sockets) s.destroy();
            tcp.close(() => resolve());
          }),
        ]).then(() => undefined);
        return closed;
      },
    };
  }
}

/** dns2 resources for stored records. */
function resources(name: string, type: RecordType, stored: Stored): Record<string, unknown>[] {
  const base = { name, type: Packet.TYPE[type], class: Packet.CLASS.IN, ttl: stored.ttl };
  return stored.records.map((r) => {
    switch (type) {
      case 'A':
      case 'AAAA':
        return { ...base, address: r as string };
      case 'MX': {
        const mx = r as RecordData['MX'];
        return { ...base, exchange: norm(mx.exchange), priority: mx.priority };
      }
      case 'TXT':
        return { ...base, data: typeof r === 'string' ? splitTxt(r) : (r as string[]) };
      case 'CNAME':
      case 'PTR':
        return { ...base, domain: r as string };
    }
    throw new Error(`no resource data for ${type satisfies never}`);
  });
}

/** The SOA of negative answers: the zone is the name's parent-most two labels; TTL and minimum 0 unless set. */
function soa(name: string, negative: { ttl: number; minimum: number }): Record<string, unknown> {
  const apex = name.split('.').slice(-2).join('.');
  return {
    name: apex,
    type: Packet.TYPE.SOA,
    class: Packet.CLASS.IN,
    ttl: negative.ttl,
    primary: `ns.${apex}`,
    admin: `hostmaster.${apex}`,
    serial: 1,
    refresh: 3600,
    retry: 600,
    expiration: 86400,
    minimum: negative.minimum,
  };
}

/** The largest UDP answer the client accepts: 512, or the payload size of its EDNS OPT record. */
function udpLimit(query: Buffer): number {
  const size = optPayloadSize(query);
  return size === null ? 512 : Math.max(512, size);
}

function hasOpt(query: Buffer): boolean {
  return optPayloadSize(query) !== null;
}

/** The UDP payload size of the query's OPT record (RFC 6891 §6.1.2), or null without one. */
function optPayloadSize(query: Buffer): number | null {
  try {
    let off = 12;
    const skipName = () => {
      for (;;) {
        const len = query[off];
        if (len === undefined) throw new Error('short');
        if ((len & 0xc0) === 0xc0) {
          off += 2;
          return;
        }
        off += 1 + len;
        if (len === 0) return;
      }
    };
    const qd = query.readUInt16BE(4);
    const an = query.readUInt16BE(6);
    const ns = query.readUInt16BE(8);
    const ar = query.readUInt16BE(10);
    for (let i = 0; i < qd; i++) {
      skipName();
      off += 4;
    }
    for (let i = 0; i < an + ns + ar; i++) {
      skipName();
      const type = query.readUInt16BE(off);
      if (type === 41 && i >= an + ns) return query.readUInt16BE(off + 2);
      off += 10 + query.readUInt16BE(off + 8);
    }
  } catch {}
  return null;
}
