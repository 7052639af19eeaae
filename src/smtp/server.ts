// One SMTP listener (docs/mail.md §4, docs/api.md §17) on smtp-server: STARTTLS (RFC 3207) or
// implicit TLS (RFC 8314), AUTH PLAIN/LOGIN (RFC 4954) only once TLS is up, SIZE (RFC 1870).
// A session that authenticated submits mail through the sending core (submission.ts); one that
// did not may only reach Posthorn's own domains (recipients.ts, inbound.ts).
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { SMTPServer, type SMTPServerOptions, type SMTPServerSession, type SMTPServerDataStream } from 'smtp-server';
import type { Config } from '../config';
import type { ApiKeyRec, Store } from '../store';
import { log } from '../log';
import type { Certificate } from './certificate';
import { replies, replyFor, SmtpReply } from './replies';
import { smtpLogin, currentKey } from './auth';
import { destinationOf } from './recipients';
import { submitMessage, type SubmissionDeps } from './submission';
import { spoolInbound, type SpoolDeps } from './inbound';
import { ConnectionGate, AuthGuard, MessageBudget, sharedCells, acceptedCell, threadOpenCell } from './limits';
import { adaptConnection, type SmtpConnection } from './adapt';

/** What the SMTP listeners need: submission's and inbound's, and the `smtp` settings. */
export interface SmtpDeps extends SubmissionDeps, SpoolDeps {
  config: Pick<Config, 'smtp' | 'security' | 'limits' | 'data_dir' | 'public_url' | 'delivery'>;
}

/** docs/api.md §17: 40 MB, advertised with SIZE; larger messages get 552 5.3.4. */
export const MAX_MESSAGE_BYTES = 40 * 1024 * 1024;
/** Envelope recipients per message (RFC 5321 §4.5.3.1.8 requires at least 100 to be accepted). */
export const MAX_RECIPIENTS = 100;
/**
 * Message bytes held in memory at once, over every session of every listener (limits.ts
 * `MessageBudget`). Past it a message is refused with a temporary 452 4.3.1 and the sender
 * retries later.
 */
export const MAX_BUFFERED_BYTES = 512 * 1024 * 1024;
/** Idle time before a session is dropped (RFC 5321 §4.5.3.2.7: a server waits at least 5 minutes). */
export const SOCKET_TIMEOUT_MS = 5 * 60_000;
/** On shutdown, how long open sessions get to finish before they are closed. */
export const CLOSE_TIMEOUT_MS = 10_000;

/**
 * What every listener of every thread shares: the session count and the bytes held in memory, in
 * cells of shared memory (limits.ts `sharedCells`); `thread` is this thread's place in them (0: the
 * main thread). The AUTH failure counts are the main thread's alone (`localDesk`).
 */
export interface SharedLimits {
  gate: ConnectionGate;
  budget: MessageBudget;
  cells: Int32Array;
  thread: number;
}

export function sharedLimits(config: Pick<Config, 'smtp'>, cells = sharedCells(1), thread = 0): SharedLimits {
  return {
    gate: new ConnectionGate(config.smtp.max_connections, Date.now, cells),
    budget: new MessageBudget(MAX_BUFFERED_BYTES, cells),
    cells,
    thread,
  };
}

/** What an authenticated session keeps as `session.user`: the key, looked up again per message. */
export type SessionUser = Pick<ApiKeyRec, 'id' | 'team_id'>;

/**
 * What a listener asks of the service beyond its store: AUTH (with the failure limits), submission,
 * and where a refused session is counted. The main thread's listeners do it themselves
 * (`localDesk`); a listener thread's ask the main thread (threads.ts), so that the AUTH lockout, the
 * rate limit, idempotency and the sending core's group commit stay one for the whole service.
 */
export interface SmtpDesk {
  config: SmtpDeps['config'];
  /** For RCPT and the inbound spool (this thread's own handle on the store). */
  store: Store;
  /** The user of a session whose credentials are good; rejects with the SmtpReply to answer (after any delay). */
  login(ip: string, session: string, username: string | null | undefined, password: string | null | undefined): Promise<SessionUser>;
  closed(session: string): void;
  /** Submit a message for the session's key; resolves to the 250's text. */
  submit(user: SessionUser, recipients: string[], raw: Buffer, session: string): Promise<string>;
  /** A session refused at `smtp.max_connections`: counted, and logged now and then. */
  refused(ip: string | undefined): void;
}

/** An SMTP reply decided on another thread, which logged there whatever it had to. */
export class RemoteReply extends SmtpReply {}

/**
 * The reply to a DATA that failed; an unexpected failure (451 4.3.0) is logged with its stack where
 * it happened — so not again on a listener thread, which gets a RemoteReply from the main thread.
 */
export function dataFailure(e: unknown, session: string): SmtpReply {
  const reply = replyFor(e);
  if (reply.responseCode === 451 && reply.enhanced === '4.3.0' && !(e instanceof RemoteReply))
    log.error('smtp.data_failed', { session, error: String((e as Error)?.stack ?? e) });
  return reply;
}

/** The desk of the main thread's listeners: its services, the AUTH failure limits kept here. */
export function localDesk(svc: SmtpDeps, gate: ConnectionGate, auth = new AuthGuard()): SmtpDesk {
  return {
    config: svc.config,
    store: svc.store,
    async login(ip, session, username, password) {
      const admitted = auth.admit(ip, session);
      if (!admitted.ok) throw admitted.reply;
      try {
        const key = await smtpLogin(svc, username, password);
        return { id: key.id, team_id: key.team_id };
      } catch (e) {
        const reply = replyFor(e);
        if (reply.responseCode !== 535) throw reply;
        const { delay, reply: answer } = auth.failed(ip, session, reply);
        if (delay) await new Promise((resolve) => setTimeout(resolve, delay));
        throw answer;
      }
    },
    closed(session) {
      auth.closed(session);
    },
    async submit(user, recipients, raw) {
      const key = await currentKey(svc.store, user);
      if (!key) throw replies.keyRevoked();
      const id = await submitMessage(svc, key, recipients, raw);
      log.info('smtp.submitted', { team_id: key.team_id, email_id: id, api_key_id: key.id, recipients: recipients.length, size: raw.byteLength });
      return replies.accepted(id);
    },
    refused(ip) {
      const refused = gate.refused();
      if (refused !== null) log.warn('smtp.too_many_connections', { max_connections: gate.max, refused, ip });
    },
  };
}

/** smtp-server, each connection adapted (adapt.ts) and counted across the listeners before it is served. */
class PosthornSmtpServer extends SMTPServer {
  constructor(
    options: SMTPServerOptions,
    private readonly limits: SharedLimits,
    private readonly settings: Config['smtp'],
    private readonly desk: SmtpDesk,
  ) {
    super(options);
    // smtp-server adds each new connection here just before its init(): the one place to adapt
    // the connection before it reads or writes anything.
    const add = this.connections.add.bind(this.connections);
    this.connections.add = (conn: SmtpConnection) => {
      adaptConnection(conn, settings);
      return add(conn);
    };
  }

  override connect(socket: Socket | TLSSocket, socketOptions?: Parameters<SMTPServer['connect']>[1]): void {
    // Counted before smtp-server sees the socket, so the session past the limit never waits for a
    // banner (RFC 5321 §3.1: 421 at connection time when the service is not available).
    if (!this.limits.gate.enter()) {
      refuseConnection(socket, this.settings.hostname, this.desk);
      return;
    }
    const { cells, thread } = this.limits;
    Atomics.add(cells, acceptedCell(thread), 1);
    Atomics.add(cells, threadOpenCell(cells, thread), 1);
    socket.once('close', () => {
      Atomics.sub(cells, threadOpenCell(cells, thread), 1);
      this.limits.gate.leave();
    });
    super.connect(socket, socketOptions);
  }
}

function refuseConnection(socket: Socket | TLSSocket, hostname: string, desk: SmtpDesk): void {
  socket.on('error', () => {});
  socket.end(`421 4.7.0 ${hostname} Too many connections, try again later\r\n`);
  // A client that never reads its side must not keep the descriptor.
  setTimeout(() => socket.destroy(), 5_000).unref();
  desk.refused(socket.remoteAddress);
}

export function createSmtpServer(desk: SmtpDesk, cert: Pick<Certificate, 'key' | 'cert'>, mode: 'starttls' | 'tls', limits: SharedLimits): SMTPServer {
  const { hostname } = desk.config.smtp;
  const options: SMTPServerOptions = {
    secure: mode === 'tls',
    key: cert.key,
    cert: cert.cert,
    name: hostname,
    banner: 'Posthorn',
    authMethods: ['PLAIN', 'LOGIN'],
    // AUTH is for submission; without it a session is inbound (checked at RCPT).
    authOptional: true,
    // Refused by adapt.ts with 530 before TLS; allowed through here so that the reply is ours.
    allowInsecureAuth: true,
    // RFC 2034 enhanced status codes on every reply (smtp-server's default is off).
    hideENHANCEDSTATUSCODES: false,
    size: MAX_MESSAGE_BYTES,
    rejectOversized: true,
    maxRecipients: MAX_RECIPIENTS,
    // Counted across listeners by the gate; smtp-server's own count also bounds TLS handshakes
    // in progress on this listener.
    maxClients: desk.config.smtp.max_connections,
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
      desk.login(session.remoteAddress, session.id, auth.username, auth.password).then(
        (user) => callback(null, { user }),
        (e) => callback(replyFor(e)),
      );
    },

    onClose(session) {
      desk.closed(session.id);
    },

    onRcptTo(address, session, callback) {
      if (session.user) return callback(); // submission: any recipient, through the sending core
      destinationOf(desk.store, address.address).then(
        (dest) => callback(dest ? null : replies.relayDenied()),
        (e) => callback(replyFor(e)),
      );
    },

    onData(stream: SMTPServerDataStream, session: SMTPServerSession, callback) {
      const chunks: Buffer[] = [];
      let size = 0;
      let held = 0; // bytes of this message counted in the shared budget
      let overBudget = false;
      const release = () => {
        limits.budget.give(held);
        held = 0;
        chunks.length = 0;
      };
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        // Past the limit nothing is kept: smtp-server answers 552 5.3.4 itself (rejectOversized).
        if (size > MAX_MESSAGE_BYTES || overBudget) return;
        if (!limits.budget.take(chunk.length)) {
          overBudget = true;
          return release();
        }
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
        handleMessage(desk, session, raw).then(
          (text) => callback(null, text),
          (e) => callback(dataFailure(e, session.id)),
        );
      });
    },
  };
  const server = new PosthornSmtpServer(options, limits, desk.config.smtp, desk);
  // Per-connection failures (a client dropping mid-session, a TLS handshake a scanner abandons).
  server.on('error', (e: Error & { code?: string }) => log.debug('smtp.connection_error', { mode, code: e.code, error: e.message }));
  return server;
}

/** The DATA of one transaction: submission when authenticated, else inbound. Resolves to the 250's text. */
async function handleMessage(desk: SmtpDesk, session: SMTPServerSession, raw: Buffer): Promise<string> {
  const recipients = session.envelope.rcptTo.map((r) => r.address);
  const mailFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
  const user = session.user as SessionUser | undefined;
  if (user) return desk.submit(user, recipients, raw, session.id);
  await spoolInbound(
    desk,
    {
      raw,
      envelope: { mail_from: mailFrom, remote_address: session.remoteAddress, helo: session.hostNameAppearsAs || '', tls: session.secure },
      sessionId: session.id,
    },
    recipients,
  );
  return replies.received();
}
