// The DNS exchange (RFC 1035 §4): one question to one server, encoded and decoded by dns-packet.
// Over UDP through one long-lived socket per address family, shared by every query in flight
// (§4.2.1), and over TCP with its two-byte length prefix when the answer came back truncated
// (§4.2.2). EDNS0 (RFC 6891) asks for answers up to 1232 bytes.
//
// Forged answers (RFC 5452): each query has a random id, and a datagram is taken as its answer only
// if it comes from the server asked (address and port), carries that id and answers the same
// question (names compared case-insensitively, RFC 4343); anything else is dropped and the real
// answer is still awaited. One socket means one source port for every query (§9.2 would have it
// random per query); the servers are the operator's own recursive resolvers (`dns.servers`), and
// the id, source and question checks remain.
import packet from 'dns-packet';
import { createSocket, type Socket as UdpSocket, type RemoteInfo } from 'node:dgram';
import { connect, isIP } from 'node:net';
import { randomInt } from 'node:crypto';

export interface Server {
  host: string;
  port: number;
  family: 4 | 6;
}

/** `ip`, `ipv4:port`, `[ipv6]`, `[ipv6]:port` (the forms `setServers`/`getServers` use). */
export function parseServer(s: string): Server {
  const bracket = /^\[([^\]]+)\](?::(\d+))?$/.exec(s);
  if (bracket) return { host: bracket[1], port: Number(bracket[2] ?? 53), family: 6 };
  if (isIP(s) === 6) return { host: s, port: 53, family: 6 };
  const [host, port] = s.split(':');
  return { host, port: Number(port ?? 53), family: 4 };
}

export type QueryType = 'A' | 'AAAA' | 'MX' | 'TXT' | 'CNAME' | 'PTR';

const EDNS_PAYLOAD = 1232;

export function dnsError(code: string): NodeJS.ErrnoException {
  const e = new Error(code) as NodeJS.ErrnoException;
  e.code = code;
  return e;
}

/** A recursive query with a random id, with or without the EDNS0 OPT record (RFC 6891 §6.1). */
export function encodeQuery(name: string, type: QueryType, edns: boolean, id = randomInt(0x10000)): Buffer {
  return packet.encode({
    type: 'query',
    id,
    flags: packet.RECURSION_DESIRED,
    questions: [{ type, class: 'IN', name }],
    additionals: edns
      ? [{ type: 'OPT', name: '.', udpPayloadSize: EDNS_PAYLOAD, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] }]
      : [],
  });
}

/** A resource record (the OPT pseudo-record, RFC 6891 §6.1, is none). */
export type Rr = Exclude<packet.Answer, packet.OptAnswer>;
const isRr = (a: packet.Answer): a is Rr => a.type !== 'OPT';

export interface Answer {
  /** NOERROR, NXDOMAIN, SERVFAIL, … */
  rcode: string;
  truncated: boolean;
  answers: Rr[];
  authorities: Rr[];
  /** Bytes of the message (what a cache holding it costs, roughly). */
  size: number;
}

/**
 * Read an answer to `query`; throws EBADRESP when it cannot be decoded, is not a response, or
 * answers another id or question.
 */
export function readAnswer(buf: Buffer, query: Buffer): Answer {
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
  return { rcode, truncated, answers: truncated ? [] : (res.answers ?? []).filter(isRr), authorities: (res.authorities ?? []).filter(isRr), size: buf.length };
}

interface Pending {
  server: Server;
  query: Buffer;
  resolve(a: Answer): void;
  reject(e: Error): void;
  timer: ReturnType<typeof setTimeout>;
}

/** Queries over one UDP socket per family, answers matched to their query (see the top). */
export class UdpExchange {
  private readonly sockets = new Map<4 | 6, UdpSocket>();
  private readonly pending = new Map<number, Pending>();

  ask(server: Server, name: string, type: QueryType, edns: boolean, timeoutMs: number): Promise<Answer> {
    return new Promise((resolve, reject) => {
      // A free id: a random one, tried again while it is taken by a query in flight.
      let id = randomInt(0x10000);
      for (let n = 0; this.pending.has(id); n++) {
        if (n > 64) return reject(dnsError('EBUSY'));
        id = randomInt(0x10000);
      }
      const query = encodeQuery(name, type, edns, id);
      const timer = setTimeout(() => this.settle(id, dnsError('ETIMEOUT')), timeoutMs);
      this.pending.set(id, { server, query, resolve, reject, timer });
      this.socket(server.family).send(query, server.port, server.host, (e) => e && this.settle(id, e));
    });
  }

  /** Close the sockets; queries in flight fail. */
  close(): void {
    for (const id of [...this.pending.keys()]) this.settle(id, dnsError('ECANCELLED'));
    for (const s of this.sockets.values()) s.close();
    this.sockets.clear();
  }

  private socket(family: 4 | 6): UdpSocket {
    let s = this.sockets.get(family);
    if (s) return s;
    s = createSocket(family === 6 ? 'udp6' : 'udp4');
    const sock = s;
    sock.on('message', (msg, from) => this.received(msg, from));
    sock.on('error', (e) => {
      // The socket is unusable: its queries fail now, and the next query opens a new one.
      this.sockets.delete(family);
      for (const [id, p] of this.pending) if (p.server.family === family) this.settle(id, e);
      sock.close();
    });
    // An idle socket must not keep the process alive.
    sock.unref();
    this.sockets.set(family, sock);
    return sock;
  }

  private received(msg: Buffer, from: RemoteInfo): void {
    if (msg.length < 12) return;
    const id = msg.readUInt16BE(0);
    const p = this.pending.get(id);
    if (!p || from.port !== p.server.port || from.address !== p.server.host) return;
    let answer: Answer;
    try {
      answer = readAnswer(msg, p.query);
    } catch {
      return; // not an answer to this question: wait for the real one
    }
    this.pending.delete(id);
    clearTimeout(p.timer);
    p.resolve(answer);
  }

  private settle(id: number, e: Error): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    clearTimeout(p.timer);
    p.reject(e);
  }
}

/** One query over TCP (RFC 1035 §4.2.2: two-byte length prefix), a connection of its own. */
export function tcpAsk(server: Server, name: string, type: QueryType, edns: boolean, timeoutMs: number): Promise<Answer> {
  const query = encodeQuery(name, type, edns);
  return new Promise((resolve, reject) => {
    const sock = connect({ host: server.host, port: server.port });
    let buf = Buffer.alloc(0);
    let done = false;
    const finish = (err: Error | null, msg?: Buffer) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      if (err) return reject(err);
      try {
        resolve(readAnswer(msg!, query));
      } catch (e) {
        reject(e);
      }
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
