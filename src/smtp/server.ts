// One SMTP listener (docs/mail.md §4, docs/api.md §17) on smtp-server: STARTTLS (RFC 3207) or
// implicit TLS (RFC 8314), AUTH PLAIN/LOGIN (RFC 4954) only once TLS is up, SIZE (RFC 1870).
// A session that authenticated submits mail through the sending core (submission.ts); one that
// did not may only reach Posthorn's own domains (recipients.ts, inbound.ts).
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { SMTPServer, type SMTPServerOptions, type SMTPServerSession, type SMTPServerDataStream } from 'smtp-server';
import type { Config } from '../config';
import type { ApiKeyRec } from '../store';
import { log } from '../log';
import type { Certificate } from './certificate';
import { HAS_ENHANCED_CODE, replies, replyFor } from './replies';
import { smtpLogin, currentKey } from './auth';
import { destinationOf } from './recipients';
import { submitMessage, type SubmissionDeps } from './submission';
import { spoolInbound, type SpoolDeps } from './inbound';
import { ConnectionGate, AuthGuard } from './limits';
import { LineEndingCheck } from './line-endings';

/** What the SMTP listeners need: submission's and inbound's, and the `smtp` settings. */
export interface SmtpDeps extends SubmissionDeps, SpoolDeps {
  config: Pick<Config, 'smtp' | 'security' | 'limits' | 'data_dir' | 'public_url'>;
}

/** docs/api.md §17: 40 MB, advertised with SIZE; larger messages get 552 5.3.4. */
export const MAX_MESSAGE_BYTES = 40 * 1024 * 1024;
/** Envelope recipients per message (RFC 5321 §4.5.3.1.8 requires at least 100 to be accepted). */
export const MAX_RECIPIENTS = 100;
/**
 * Message bytes held in memory at once, over every session of every listener: each connection may
 * send 40 MB, so without a shared cap a few hundred slow senders could exhaust memory. Past it a
 * message is refused with a temporary 452 4.3.1 and the sender retries later.
 */
export const MAX_BUFFERED_BYTES = 512 * 1024 * 1024;
let buffered = 0;
/** Message bytes held right now (tests: nothing stays counted after a session is gone). */
export const bufferedBytes = () => buffered;
/** Idle time before a session is dropped (RFC 5321 §4.5.3.2.7: a server waits at least 5 minutes). */
export const SOCKET_TIMEOUT_MS = 5 * 60_000;
/** On shutdown, how long open sessions get to finish before they are closed. */
export const CLOSE_TIMEOUT_MS = 10_000;

type SMTPConnection = SMTPServer['connections'] extends Set<infer C> ? C : never;
/** smtp-server's command parser (its SMTPStream), which the socket is piped into. */
type Parser = { write(chunk: unknown, ...rest: unknown[]): boolean; isClosed: boolean };
type ConnectionInternals = {
  _parser: Parser;
  _createParser(): Parser;
  close(): void;
  connectionReady(next?: () => void): void;
  _setListeners(callback: () => void): void;
  _closing: boolean;
  _closed: boolean;
};

/** What every listener shares: the session count, the AUTH failure counts. */
export interface SharedLimits {
  gate: ConnectionGate;
  auth: AuthGuard;
}

export function sharedLimits(config: Pick<Config, 'smtp'>): SharedLimits {
  return { gate: new ConnectionGate(config.smtp.max_connections), auth: new AuthGuard() };
}

/** What an authenticated session keeps as `session.user`: the key, looked up again per message. */
type SessionUser = Pick<ApiKeyRec, 'id' | 'team_id'>;

/**
 * smtp-server, with three replies changed on every connection to match docs/api.md §17: AUTH on
 * an unencrypted session is 530 5.7.0 (smtp-server says 538, a non-standard code); EHLO lists AUTH
 * only once TLS is up, so that well-behaved clients never offer a key in the clear (RFC 4954 §4);
 * and a reply text that starts with its own enhanced status code goes out as written — otherwise
 * smtp-server adds the default one for the basic code (550 → 5.1.1, wrong for a relay refusal).
 * And the greeting goes out after `smtp.greeting_delay` (0: at once) instead of smtp-server's
 * fixed 100 ms (docs/mail.md §4).
 */
class PosthornSmtpServer extends SMTPServer {
  constructor(
    options: SMTPServerOptions,
    private readonly limits: SharedLimits,
    private readonly settings: Config['smtp'],
  ) {
    super(options);
    // smtp-server adds each new connection here just before its init(): the one place to adapt
    // the connection before it reads or writes anything.
    const add = this.connections.add.bind(this.connections);
    this.connections.add = (conn: SMTPConnection) => {
      adapt(conn, !settings.allow_bare_newlines);
      greetAfter(conn, settings.greeting_delay);
      return add(conn);
    };
  }

  override connect(socket: Socket | TLSSocket, socketOptions?: Parameters<SMTPServer['connect']>[1]): void {
    // Counted before smtp-server sees the socket, so the session past the limit never waits for a
    // banner (RFC 5321 §3.1: 421 at connection time when the service is not available).
    if (!this.limits.gate.enter()) {
      refuseConnection(socket, this.settings.hostname, this.limits.gate.max);
      return;
    }
    socket.once('close', () => this.limits.gate.leave());
    super.connect(socket, socketOptions);
  }
}

/**
 * smtp-server's init() checks its client limit, then waits a fixed 100 ms before
 * connectionReady() (greeting, and commands accepted from then on; a command before it is refused
 * "421 You talk too soon"). That pause capped 16 sessions near 140 messages a second. Here the
 * library's own call is made a no-op and connectionReady() runs after `delayMs` instead — at once
 * for 0, so the greeting is written before any client byte is read. Its early-talker refusal
 * still applies while a delay runs.
 */
function greetAfter(conn: SMTPConnection, delayMs: number): void {
  const internals = conn as unknown as ConnectionInternals;
  const ready = internals.connectionReady.bind(conn);
  const setListeners = internals._setListeners.bind(conn);
  let started = false;
  internals.connectionReady = () => {};
  internals._setListeners = (afterListeners) =>
    setListeners(() => {
      afterListeners(); // the client limit check, and the library's timer (now a no-op)
      if (started || internals._closing || internals._closed) return; // refused over the limit
      started = true;
      if (delayMs <= 0) return ready();
      setTimeout(() => internals._closing || internals._closed || ready(), delayMs).unref();
    });
}

let refusedSince = 0;
let refusedCount = 0;

function refuseConnection(socket: Socket | TLSSocket, hostname: string, max: number): void {
  socket.on('error', () => {});
  socket.end(`421 4.7.0 ${hostname} Too many connections, try again later\r\n`);
  // A client that never reads its side must not keep the descriptor.
  setTimeout(() => socket.destroy(), 5_000).unref();
  // One log line per 10 s however hard the door is knocked on.
  refusedCount++;
  const now = Date.now();
  if (now - refusedSince >= 10_000) {
    log.warn('smtp.too_many_connections', { max_connections: max, refused: refusedCount, ip: socket.remoteAddress });
    refusedSince = now;
    refusedCount = 0;
  }
}

/**
 * Refuse bare CR/LF (line-endings.ts): every byte the socket hands the command parser is looked at
 * first, so a message with one is never accepted and a command after one never runs.
 */
function strictLineEndings(conn: SMTPConnection, parser: Parser): Parser {
  const check = new LineEndingCheck();
  const write = parser.write.bind(parser);
  parser.write = (chunk: unknown, ...rest: unknown[]) => {
    if (!parser.isClosed && chunk instanceof Uint8Array) {
      const bare = check.scan(chunk);
      if (bare) {
        parser.isClosed = true;
        const r = replies.bareLineEnding(bare);
        log.warn('smtp.bare_line_ending', { session: conn.id, ip: conn.remoteAddress, kind: bare });
        conn.send(r.responseCode, r.message);
        (conn as unknown as ConnectionInternals).close();
        return true;
      }
    }
    return write(chunk, ...rest);
  };
  return parser;
}

function adapt(conn: SMTPConnection, strictLines: boolean): void {
  if (strictLines) {
    const internals = conn as unknown as ConnectionInternals;
    strictLineEndings(conn, internals._parser);
    // STARTTLS gives the TLS session a parser of its own.
    const create = internals._createParser.bind(conn);
    internals._createParser = () => strictLineEndings(conn, create());
  }
  const send = conn.send.bind(conn);
  conn.send = (code, data, context) => {
    // The EHLO reply is the only multi-line 250 smtp-server sends: its extension list.
    if (code === 250 && Array.isArray(data) && !conn.secure) data = data.filter((line) => !/^AUTH /i.test(line));
    send(code, data, typeof data === 'string' && HAS_ENHANCED_CODE.test(data) ? false : context);
  };
  const auth = conn.handler_AUTH.bind(conn);
  conn.handler_AUTH = (command, callback) => {
    if (conn.secure) return auth(command, callback);
    const r = replies.startTlsFirst();
    conn.send(r.responseCode, r.message);
    callback();
  };
}

export function createSmtpServer(svc: SmtpDeps, cert: Certificate, mode: 'starttls' | 'tls', limits = sharedLimits(svc.config)): SMTPServer {
  const { hostname } = svc.config.smtp;
  const options: SMTPServerOptions = {
    secure: mode === 'tls',
    key: cert.key,
    cert: cert.cert,
    name: hostname,
    banner: 'Posthorn',
    authMethods: ['PLAIN', 'LOGIN'],
    // AUTH is for submission; without it a session is inbound (checked at RCPT).
    authOptional: true,
    // Refused by `adapt` with 530 before TLS; allowed through here so that the reply is ours.
    allowInsecureAuth: true,
    // RFC 2034 enhanced status codes on every reply (smtp-server's default is off).
    hideENHANCEDSTATUSCODES: false,
    size: MAX_MESSAGE_BYTES,
    rejectOversized: true,
    maxRecipients: MAX_RECIPIENTS,
    // Counted across listeners by the gate; smtp-server's own count also bounds TLS handshakes
    // in progress on this listener.
    maxClients: svc.config.smtp.max_connections,
    socketTimeout: SOCKET_TIMEOUT_MS,
    closeTimeout: CLOSE_TIMEOUT_MS,
    // Reverse lookups would go to the system resolver, not `dns.servers`; nothing here needs them.
    disableReverseLookup: true,
    logger: false,

    // Nothing to check at connection or after implicit TLS: answered at once, so the greeting
    // follows (smtp-server's defaults wait a turn of the event loop, in which a pipelining client's
    // EHLO would already be refused as an early talker).
    onConnect(_session, callback) {
      callback();
    },
    onSecure(_socket, _session, callback) {
      callback();
    },

    onAuth(auth, session, callback) {
      const ip = session.remoteAddress;
      const admitted = limits.auth.admit(ip, session.id);
      if (!admitted.ok) return callback(admitted.reply);
      smtpLogin(svc, auth.username, auth.password).then(
        (key) => callback(null, { user: { id: key.id, team_id: key.team_id } satisfies SessionUser }),
        (e) => {
          const reply = replyFor(e);
          if (reply.responseCode !== 535) return callback(reply);
          const { delay, reply: answer } = limits.auth.failed(ip, session.id, reply);
          if (delay) setTimeout(() => callback(answer), delay);
          else callback(answer);
        },
      );
    },

    onClose(session) {
      limits.auth.closed(session.id);
    },

    onRcptTo(address, session, callback) {
      if (session.user) return callback(); // submission: any recipient, through the sending core
      destinationOf(svc.store, address.address).then(
        (dest) => callback(dest ? null : replies.relayDenied()),
        (e) => callback(replyFor(e)),
      );
    },

    onData(stream: SMTPServerDataStream, session: SMTPServerSession, callback) {
      const chunks: Buffer[] = [];
      let size = 0;
      let held = 0; // bytes of this message counted in `buffered`
      let overBudget = false;
      const release = () => {
        buffered -= held;
        held = 0;
        chunks.length = 0;
      };
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        // Past the limit nothing is kept: smtp-server answers 552 5.3.4 itself (rejectOversized).
        if (size > MAX_MESSAGE_BYTES || overBudget) return;
        if (buffered + chunk.length > MAX_BUFFERED_BYTES) {
          overBudget = true;
          return release();
        }
        buffered += chunk.length;
        held += chunk.length;
        chunks.push(chunk);
      });
      // A connection dropped (or closed for a bare line ending) mid-message: the stream is
      // destroyed and never ends, so its bytes are given back here.
      let ended = false;
      stream.once('close', () => ended || release());
      stream.on('end', () => {
        ended = true;
        if (stream.sizeExceeded || size > MAX_MESSAGE_BYTES) {
          release();
          return callback(null);
        }
        if (overBudget) return callback(replies.overloaded());
        const raw = Buffer.concat(chunks, size);
        release();
        handleMessage(svc, session, raw).then(
          (text) => callback(null, text),
          (e) => {
            const reply = replyFor(e);
            if (reply.responseCode === 451 && reply.enhanced === '4.3.0')
              log.error('smtp.data_failed', { session: session.id, error: String((e as Error)?.stack ?? e) });
            callback(reply);
          },
        );
      });
    },
  };
  const server = new PosthornSmtpServer(options, limits, svc.config.smtp);
  // Per-connection failures (a client dropping mid-session, a TLS handshake a scanner abandons).
  server.on('error', (e: Error & { code?: string }) => log.debug('smtp.connection_error', { mode, code: e.code, error: e.message }));
  return server;
}

/** The DATA of one transaction: submission when authenticated, else inbound. Resolves to the 250's text. */
async function handleMessage(svc: SmtpDeps, session: SMTPServerSession, raw: Buffer): Promise<string> {
  const recipients = session.envelope.rcptTo.map((r) => r.address);
  const mailFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
  const user = session.user as SessionUser | undefined;
  if (user) {
    const key = await currentKey(svc.store, user);
    if (!key) throw replies.keyRevoked();
    const id = await submitMessage(svc, key, recipients, raw);
    log.info('smtp.submitted', { team_id: key.team_id, email_id: id, api_key_id: key.id, recipients: recipients.length, size: raw.byteLength });
    return replies.accepted(id);
  }
  await spoolInbound(
    svc,
    {
      raw,
      envelope: { mail_from: mailFrom, remote_address: session.remoteAddress, helo: session.hostNameAppearsAs || '', tls: session.secure },
      sessionId: session.id,
    },
    recipients,
  );
  return replies.received();
}
