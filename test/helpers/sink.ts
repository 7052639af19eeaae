// A destination MTA for tests: an `smtp-server` on 127.0.0.1 (random free port) that records every
// message it accepts — envelope, raw bytes, whether TLS was in use — and answers per recipient on
// command.
//
//   const sink = await startSink();                        // STARTTLS offered (self-signed cert)
//   const plain = await startSink({ tls: 'none' });        // no STARTTLS
//   const relay = await startSink({ auth: { user: 'u', pass: 'p' } });  // AUTH required (after TLS)
//   const other = await startSink({ host: '127.0.0.2', port: sink.port, certificate: ca.issue([...]) }); // same port, another address
//   sink.respond('bob@dest.test', { code: 450, message: '4.2.0 try later' }, { times: 1 });
//   sink.respond('gone@dest.test', { code: 550, message: '5.1.1 no such user' });  // every time
//   sink.respondData({ code: 552, message: '5.3.4 too big' });   // the reply to the end of DATA
//   sink.refuseConnections({ code: 421, message: '4.3.2 busy' }); // greeting refused (null: accept)
//   sink.respondFrom('127.0.0.4', { code: 550, message: '5.7.1 blocked' }); // every RCPT from that peer address (null: as usual)
//   sink.delayData(200);                    // answer the end of DATA 200 ms late (attempts in flight)
//   sink.throttleAfter(3, { code: 421, message: '4.7.0 Try again later' }); // accept 3 messages, then refuse DATA (null: accept again)
//   const [msg] = await sink.waitFor(1);   // bounded wait (default 10 s), then the messages
//   await sink.close();
//
// Replies go out as `<code> <message>`, so give the enhanced status code (RFC 3463) in `message`.
// Recipients refused at RCPT are not in `rcptTo` of the recorded message, like a real MTA.
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { until } from './wait';
import { generate } from 'selfsigned';
import type { TlsOptions } from 'node:tls';

export interface SinkReply {
  code: number;
  message: string;
}

export interface Received {
  mailFrom: string;
  rcptTo: string[];
  raw: Buffer;
  /** TLS in use when the message was sent (STARTTLS or implicit). */
  secure: boolean;
  /** The AUTH user, when the client authenticated. */
  user: string | null;
  /** The client's EHLO/HELO name. */
  helo: string;
  /** Sessions are numbered from 1 in the order they connected: reuse shows as equal numbers. */
  session: number;
  /** The client's address as the sink sees it (a sending IP of `delivery.ips`). */
  remoteAddress: string;
}

export interface SinkOptions {
  /** 'starttls' (default): offered on a plain connection; 'none': not offered; 'implicit': TLS from the first byte. */
  tls?: 'starttls' | 'none' | 'implicit';
  /** Require AUTH PLAIN/LOGIN with these credentials (after TLS, unless tls is 'none'). */
  auth?: { user: string; pass: string };
  /** Bind address (default 127.0.0.1). */
  host?: string;
  /** Advertise SIZE with this limit (RFC 1870) and refuse bigger messages. */
  size?: number;
  /** Extra TLS server options (e.g. a protocol range no client accepts, to make handshakes fail). */
  tlsOptions?: TlsOptions;
  /** The certificate to show instead of the self-signed `sink.test` one (e.g. one from a test CA, helpers/pki.ts). */
  certificate?: { key: string; cert: string };
  /** Listen on this port (default: a free one) — sinks on several loopback addresses can share `delivery.mx_port`. */
  port?: number;
}

export interface Sink {
  host: string;
  port: number;
  /** Every accepted message, oldest first. */
  messages: Received[];
  /** Connections accepted so far. */
  connections(): number;
  respond(recipient: string, reply: SinkReply | null, opts?: { times?: number }): void;
  respondData(reply: SinkReply | null, opts?: { times?: number }): void;
  refuseConnections(reply: SinkReply | null): void;
  /** Answer every RCPT of sessions from this peer address with `reply` (null: as usual). */
  respondFrom(peer: string, reply: SinkReply | null): void;
  /** Wait this long before answering the end of DATA (a message counts as received when answered). */
  delayData(ms: number): void;
  /** Once `n` messages are accepted (in all), answer the end of DATA with `reply`; null accepts again. */
  throttleAfter(n: number | null, reply?: SinkReply): void;
  /** Messages for one recipient. */
  to(recipient: string): Received[];
  /** Wait until at least `n` messages arrived (polling, at most `timeoutMs`); throws on time-out. */
  waitFor(n: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

interface Rule {
  reply: SinkReply;
  times: number; // Infinity = always
}

let certPromise: Promise<{ key: string; cert: string }> | null = null;

/** One self-signed certificate per test process (RSA key generation is slow). */
export function sinkCertificate(): Promise<{ key: string; cert: string }> {
  certPromise ??= generate([{ name: 'commonName', value: 'sink.test' }], { keySize: 2048, algorithm: 'sha256' }).then((p) => ({
    key: p.private,
    cert: p.cert,
  }));
  return certPromise;
}

const smtpError = (r: SinkReply) => Object.assign(new Error(r.message), { responseCode: r.code });

/** Take one use of a rule; the rule is dropped when its uses run out. */
function use(rules: Map<string, Rule>, key: string): SinkReply | null {
  const rule = rules.get(key);
  if (!rule) return null;
  if (--rule.times <= 0) rules.delete(key);
  return rule.reply;
}

export async function startSink(opts: SinkOptions = {}): Promise<Sink> {
  const tls = opts.tls ?? 'starttls';
  const host = opts.host ?? '127.0.0.1';
  const messages: Received[] = [];
  const rcptRules = new Map<string, Rule>();
  const dataRules = new Map<string, Rule>();
  let refusal: SinkReply | null = null;
  let dataDelay = 0;
  let throttle: { after: number; reply: SinkReply } | null = null;
  let sessions = 0;
  const sessionNo = new Map<string, number>();
  const users = new Map<string, string>();

  const peerRules = new Map<string, SinkReply>();
  const disabled: string[] = [];
  if (tls === 'none') disabled.push('STARTTLS');
  if (!opts.auth) disabled.push('AUTH');
  const { key, cert } = opts.certificate ?? (await sinkCertificate());

  const options: SMTPServerOptions = {
    ...opts.tlsOptions,
    secure: tls === 'implicit',
    key,
    cert,
    name: 'sink.test',
    disabledCommands: disabled,
    authOptional: !opts.auth,
    allowInsecureAuth: tls === 'none',
    disableReverseLookup: true,
    logger: false,
    closeTimeout: 100,
    size: opts.size,
    onConnect(session, cb) {
      sessionNo.set(session.id, ++sessions);
      cb(refusal ? smtpError(refusal) : null);
    },
    onAuth(auth, session, cb) {
      if (opts.auth && auth.username === opts.auth.user && auth.password === opts.auth.pass) {
        users.set(session.id, auth.username);
        return cb(null, { user: auth.username });
      }
      cb(Object.assign(new Error('5.7.8 authentication failed'), { responseCode: 535 }));
    },
    onRcptTo(address, session, cb) {
      const reply = peerRules.get(session.remoteAddress.replace(/^::ffff:/, '')) ?? use(rcptRules, address.address.toLowerCase());
      cb(reply ? smtpError(reply) : null);
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => (dataDelay ? setTimeout(answer, dataDelay) : answer()));
      const answer = () => {
        const reply = use(dataRules, '*') ?? (throttle && messages.length >= throttle.after ? throttle.reply : null);
        if (reply) return cb(smtpError(reply));
        messages.push({
          mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          rcptTo: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks),
          secure: session.secure,
          user: users.get(session.id) ?? null,
          helo: session.hostNameAppearsAs,
          session: sessionNo.get(session.id) ?? 0,
          remoteAddress: session.remoteAddress.replace(/^::ffff:/, ''),
        });
        cb(null);
      };
    },
  } as SMTPServerOptions & { closeTimeout: number };

  const server = new SMTPServer(options);
  server.on('error', () => {}); // a client dropping mid-session is not the test's failure
  const port = await new Promise<number>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => resolve((server.server.address() as { port: number }).port));
  });

  return {
    host,
    port,
    messages,
    connections: () => sessions,
    respond(recipient, reply, o = {}) {
      if (reply) rcptRules.set(recipient.toLowerCase(), { reply, times: o.times ?? Infinity });
      else rcptRules.delete(recipient.toLowerCase());
    },
    respondData(reply, o = {}) {
      if (reply) dataRules.set('*', { reply, times: o.times ?? Infinity });
      else dataRules.delete('*');
    },
    refuseConnections(reply) {
      refusal = reply;
    },
    respondFrom(peer, reply) {
      if (reply) peerRules.set(peer, reply);
      else peerRules.delete(peer);
    },
    delayData(ms) {
      dataDelay = ms;
    },
    throttleAfter(n, reply) {
      throttle = n === null || !reply ? null : { after: n, reply };
    },
    to(recipient) {
      return messages.filter((m) => m.rcptTo.some((r) => r.toLowerCase() === recipient.toLowerCase()));
    },
    async waitFor(n, timeoutMs = 10_000) {
      await until(
        () => messages.length >= n,
        () => `${n} messages at the sink (${messages.length} so far)`,
        timeoutMs,
        10,
      );
      return messages;
    },
    close() {
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
