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
import { receiveInbound, type InboundDeps } from './inbound';

/** What the SMTP listeners need: submission's and inbound's, and the `smtp` settings. */
export interface SmtpDeps extends SubmissionDeps, InboundDeps {
  config: Pick<Config, 'smtp' | 'security' | 'limits' | 'data_dir' | 'public_url'>;
}

/** docs/api.md §17: 40 MB, advertised with SIZE; larger messages get 552 5.3.4. */
export const MAX_MESSAGE_BYTES = 40 * 1024 * 1024;
/** Envelope recipients per message (RFC 5321 §4.5.3.1.8 requires at least 100 to be accepted). */
export const MAX_RECIPIENTS = 100;
/** Connections per listener: each may hold a message of up to 40 MB in memory. */
export const MAX_CLIENTS = 100;
/**
 * Message bytes held in memory at once, over every session of every listener: each connection may
 * send 40 MB, so without a shared cap a few hundred slow senders could exhaust memory. Past it a
 * message is refused with a temporary 452 4.3.1 and the sender retries later.
 */
export const MAX_BUFFERED_BYTES = 512 * 1024 * 1024;
let buffered = 0;
/** Idle time before a session is dropped (RFC 5321 §4.5.3.2.7: a server waits at least 5 minutes). */
export const SOCKET_TIMEOUT_MS = 5 * 60_000;
/** On shutdown, how long open sessions get to finish before they are closed. */
export const CLOSE_TIMEOUT_MS = 10_000;

type SMTPConnection = SMTPServer['connections'] extends Set<infer C> ? C : never;

/** What an authenticated session keeps as `session.user`: the key, looked up again per message. */
type SessionUser = Pick<ApiKeyRec, 'id' | 'team_id'>;

/**
 * smtp-server, with three replies changed on every connection to match docs/api.md §17: AUTH on
 * an unencrypted session is 530 5.7.0 (smtp-server says 538, a non-standard code); EHLO lists AUTH
 * only once TLS is up, so that well-behaved clients never offer a key in the clear (RFC 4954 §4);
 * and a reply text that starts with its own enhanced status code goes out as written — otherwise
 * smtp-server adds the default one for the basic code (550 → 5.1.1, wrong for a relay refusal).
 */
class PosthornSmtpServer extends SMTPServer {
  override connect(socket: Socket | TLSSocket, socketOptions?: Parameters<SMTPServer['connect']>[1]): void {
    super.connect(socket, socketOptions);
    for (const conn of this.connections) if (conn._socket === socket) adapt(conn);
  }
}

function adapt(conn: SMTPConnection): void {
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

export function createSmtpServer(svc: SmtpDeps, cert: Certificate, mode: 'starttls' | 'tls'): SMTPServer {
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
    maxClients: MAX_CLIENTS,
    socketTimeout: SOCKET_TIMEOUT_MS,
    closeTimeout: CLOSE_TIMEOUT_MS,
    // Reverse lookups would go to the system resolver, not `dns.servers`; nothing here needs them.
    disableReverseLookup: true,
    logger: false,

    onAuth(auth, _session, callback) {
      smtpLogin(svc, auth.username, auth.password).then(
        (key) => callback(null, { user: { id: key.id, team_id: key.team_id } satisfies SessionUser }),
        (e) => callback(replyFor(e)),
      );
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
      stream.on('end', () => {
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
  const server = new PosthornSmtpServer(options);
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
  await receiveInbound(
    svc,
    {
      raw,
      mailFrom,
      remoteAddress: session.remoteAddress,
      helo: session.hostNameAppearsAs || '',
      tls: session.secure,
      hostname: svc.config.smtp.hostname,
      sessionId: session.id,
    },
    recipients,
  );
  return replies.received();
}
