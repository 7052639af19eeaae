// One SMTP client session to a destination host, on nodemailer's SMTPConnection: connect (trying
// the host's addresses in turn), EHLO as `smtp.hostname`, STARTTLS, optional AUTH, then any number
// of mail transactions in sequence (RFC 5321 §3.3 — a finished transaction needs no RSET), each
// answered per recipient.
//
// TLS (RFC 3207): 'starttls' upgrades when the server offers STARTTLS and carries on in plain text
// when it does not, or when the handshake fails (reconnecting without TLS), as MTAs do — MX
// certificates are often self-signed or name the wrong host, so they are not verified (the
// alternative is plain text). 'require-starttls' (a domain with `tls: enforced`) fails the
// connection instead. 'implicit' speaks TLS from the first byte (smtps:// relays). A target with
// `verify` (an MX host under an MTA-STS policy, RFC 8461 §4.2) has its certificate checked — valid
// for the MX host name, chaining to a trusted authority: in enforce mode a session without that
// (or without TLS 1.2+) is not set up at all; in testing mode it goes ahead and says how it fared.
import { isIP } from 'node:net';
import { Readable, type Writable } from 'node:stream';
import { rootCertificates, checkServerIdentity, type TLSSocket } from 'node:tls';
import SMTPConnection, { type SMTPConnectionOptions, type SMTPConnectionEnvelope } from 'nodemailer/lib/smtp-connection';
import type { NodemailerError } from 'nodemailer/lib/errors';
import { parseReply, localReply, type Reply } from '../mail/smtp-reply';

export type Security = 'starttls' | 'require-starttls' | 'implicit';

/** Where a session connects to. */
export interface Target {
  /** Host name (MX host, relay host): SNI and logs. */
  host: string;
  /** Addresses to try in order; empty = let the connection resolve `host` (relay mode). */
  addresses: string[];
  port: number;
  security: Security;
  auth?: { user: string; pass: string };
  /** EHLO name (`smtp.hostname`, or the sending IP's own `ehlo`). */
  ehloName: string;
  /** The local address to bind to (a sending IP of `delivery.ips`); unset: the kernel's choice. */
  localAddress?: string;
  /**
   * Check the certificate (PKIX, the host name) with the system's authorities and `ca` (PEM)
   * besides: `enforce` refuses a session that fails the check, otherwise it is only reported.
   */
  verify?: { ca: string[]; enforce: boolean };
}

/** The TLS of a session: protocol version and cipher suite (null in plain text). */
export interface TlsInfo {
  version: string | null;
  cipher: string | null;
  /**
   * For a target with `verify`: did the certificate check pass, and if not, why (the TLS library's
   * code, or STARTTLS_MISSING for a session in plain text). Null without `verify`.
   */
  verified: { ok: boolean; reason: string | null } | null;
}

/** A failure to set a session up (connect, greeting, TLS, AUTH): retry later or try the next host. */
export class ConnectError extends Error {
  constructor(
    readonly reply: Reply,
    /** What failed: ETLS, EAUTH, or the connection's error code (ECONNREFUSED, ETIMEDOUT, …). */
    readonly code = 'ECONNECTION',
    /** What the server said when it refused (a 421 greeting), for shaping (shaping.ts). */
    readonly remote: Reply | null = null,
    /** The TLS library's reason when a handshake or certificate check failed (TLS-RPT, RFC 8460 §4.3). */
    readonly tlsReason: string | null = null,
  ) {
    super(reply.text);
  }
}

/** Per-recipient answers to one transaction. */
export interface SendOutcome {
  replies: Map<string, Reply>;
  /** The session can carry another transaction (after `reset()` when `needsReset`). */
  reusable: boolean;
  needsReset: boolean;
  /** The connection broke without a reply: nothing is known to have been accepted. */
  lost?: boolean;
}

/** A message too large to hold whole (the delivery engine's): its size, and its bytes read afresh each time it is sent. */
export interface StreamedMessage {
  size: number;
  open(): Readable;
}

/** What a transaction sends: the message in parts (the DKIM-Signature header, then the message), or streamed. */
export type OutgoingMessage = Uint8Array[] | StreamedMessage;

// RFC 5321 §4.5.3.2 suggests 5 minutes per command and 10 for the end of data; connecting and
// the greeting get less, so an unreachable host does not hold a delivery slot for long.
const TIMEOUTS = { connectionTimeout: 30_000, greetingTimeout: 30_000, socketTimeout: 5 * 60_000 };

export class SmtpSession {
  messages = 0;
  private dead = false;
  /** Why TLS was given up for plain text on this session (opportunistic TLS whose handshake failed). */
  tlsFallback: string | null = null;

  private constructor(
    private readonly conn: SMTPConnection,
    readonly target: Target,
    readonly address: string,
  ) {
    // Failures surface through send()/open(); the listener keeps an 'error' from being unhandled.
    conn.on('error', () => (this.dead = true));
    conn.on('end', () => (this.dead = true));
  }

  /** Open a session, trying the target's addresses in order; throws ConnectError. */
  static async open(target: Target): Promise<SmtpSession> {
    let addresses = target.addresses.length ? target.addresses : [target.host];
    // Bound to a sending IP: only the remote addresses of its family can be reached from it.
    if (target.localAddress && target.addresses.length) {
      const family = isIP(target.localAddress);
      addresses = addresses.filter((a) => isIP(a) === family);
      if (!addresses.length)
        throw new ConnectError(localReply(451, '4.4.4', `${target.host}: no IPv${family} address to connect to from ${target.localAddress}`), 'ENOFAMILY');
    }
    let last: ConnectError | null = null;
    for (const address of addresses) {
      try {
        return await SmtpSession.openAt(target, address, false);
      } catch (e) {
        last = e as ConnectError;
        // Opportunistic TLS whose handshake failed: the same host again, in plain text.
        if (target.security === 'starttls' && (e as ConnectError).code === 'ETLS') {
          try {
            const plain = await SmtpSession.openAt(target, address, true);
            plain.tlsFallback = (e as ConnectError).tlsReason;
            return plain;
          } catch (e2) {
            last = e2 as ConnectError;
          }
        }
      }
    }
    throw last ?? new ConnectError(localReply(451, '4.4.4', `${target.host}: no address to connect to`));
  }

  private static openAt(target: Target, address: string, noTls: boolean): Promise<SmtpSession> {
    const opts: SMTPConnectionOptions = {
      host: address,
      port: target.port,
      name: target.ehloName,
      ...(target.localAddress ? { localAddress: target.localAddress } : {}),
      secure: target.security === 'implicit',
      requireTLS: target.security === 'require-starttls',
      opportunisticTLS: target.security === 'starttls',
      ignoreTLS: noTls,
      // SNI with the host name; certificates are verified only for `verify` (see the header comment).
      servername: /^[\d.:]+$/.test(target.host) ? undefined : target.host,
      tls: target.verify
        ? {
            rejectUnauthorized: target.verify.enforce,
            servername: target.host,
            ...(target.verify.enforce ? { minVersion: 'TLSv1.2' as const } : {}),
            ...(target.verify.ca.length ? { ca: [...rootCertificates, ...target.verify.ca] } : {}),
          }
        : { rejectUnauthorized: false },
      // A relay named `localhost` (a local MTA) is an expected set-up.
      allowInternalNetworkInterfaces: true,
      ...TIMEOUTS,
    };
    const where = `${target.host}[${address}]:${target.port}`;
    return new Promise<SmtpSession>((resolve, reject) => {
      const conn = new SMTPConnection(opts);
      let settled = false;
      const fail = (err: NodemailerError | Error) => {
        if (settled) return;
        settled = true;
        // A failed handshake can surface as a socket error: it is a TLS failure all the same
        // (`upgrading`: nodemailer's flag for a STARTTLS handshake under way).
        const e = err as NodemailerError;
        if (conn.upgrading || /^ERR_SSL|^ERR_TLS/.test(e.originalCode ?? '') || /SSL routines/.test(e.message)) e.code = 'ETLS';
        conn.close();
        reject(connectError(where, e, target));
      };
      const onEnd = () => fail(new Error('connection closed'));
      conn.on('error', fail);
      conn.once('end', onEnd);
      conn.connect((err) => {
        if (err) return fail(err);
        if (target.security === 'require-starttls' && !conn.secure) return fail(Object.assign(new Error('TLS required but not in use'), { code: 'ETLS' }));
        const done = () => {
          if (settled) return;
          settled = true;
          conn.removeListener('error', fail);
          conn.removeListener('end', onEnd);
          resolve(new SmtpSession(conn, target, address));
        };
        if (!target.auth) return done();
        conn.login({ user: target.auth.user, pass: target.auth.pass }, (authErr) => (authErr ? fail(authErr) : done()));
      });
    });
  }

  get secure(): boolean {
    return this.conn.secure;
  }

  /** The local address the session was opened from: the sending IP a deliverability incident names (docs/api.md §19.9). */
  get localAddress(): string | null {
    return (this.socket as Partial<TLSSocket> | undefined)?.localAddress ?? null;
  }

  /** The session's TLS version and cipher suite (docs/api.md §7.3 `attempts`). */
  get tls(): TlsInfo {
    const verify = this.target.verify;
    if (!this.conn.secure) return { version: null, cipher: null, verified: verify ? { ok: false, reason: this.tlsFallback ?? 'STARTTLS_MISSING' } : null };
    const socket = this.socket as Partial<TLSSocket> | undefined;
    const version = socket?.getProtocol?.() ?? null;
    let verified: TlsInfo['verified'] = null;
    if (verify) {
      // The chain and the host name (given as servername) are checked during the handshake;
      // `authorized` says how that went even when the session was not refused for it.
      const error = socket?.authorizationError ? String((socket.authorizationError as { code?: string }).code ?? socket.authorizationError) : null;
      const ok = socket?.authorized === true && checkServerIdentity(this.target.host, socket.getPeerCertificate!()) === undefined;
      verified =
        ok && version !== 'TLSv1' && version !== 'TLSv1.1'
          ? { ok: true, reason: null }
          : { ok: false, reason: ok ? 'TLS_VERSION_TOO_OLD' : (error ?? 'ERR_TLS_CERT_ALTNAME_INVALID') };
    }
    return { version, cipher: socket?.getCipher?.()?.name ?? null, verified };
  }

  /**
   * The socket nodemailer speaks on (the TLS one after STARTTLS): its `_socket`, declared public in
   * nodemailer's own types; test/dependencies/nodemailer.test.ts checks it is that socket
   * (docs/ARCHITECTURE.md §5, "Where Posthorn reaches into a library").
   */
  private get socket(): Writable | undefined {
    return this.conn._socket || undefined;
  }

  get alive(): boolean {
    return !this.dead && !this.conn.destroyed;
  }

  /**
   * One mail transaction: MAIL FROM, RCPT TO each recipient, DATA. Never throws: every recipient
   * gets a reply — the server's, or one made up for a lost connection (RFC 3463 4.4.2).
   */
  send(from: string, recipients: string[], outgoing: OutgoingMessage): Promise<SendOutcome> {
    this.messages++;
    const parts = Array.isArray(outgoing) ? outgoing : null;
    const size = parts ? parts.reduce((n, p) => n + p.byteLength, 0) : (outgoing as StreamedMessage).size;
    // Streamed in slices of the parts (no copy), so a large message is never duplicated in memory;
    // one of a slice or less goes out in one write with the end of data (see OneWrite).
    const message = !parts
      ? (outgoing as StreamedMessage).open()
      : size <= SLICE
        ? new OneWrite(Buffer.concat(parts, size), () => this.socket)
        : Readable.from(slices(parts), { objectMode: false });
    // nodemailer keeps its per-recipient bookkeeping (accepted, rejectedErrors) on the envelope
    // object it is given, which tells RCPT rejections apart from a failed DATA.
    const envelope = { from, to: recipients, size } as SMTPConnectionEnvelope;
    const byLower = new Map(recipients.map((r) => [r.toLowerCase(), r]));
    const own = (addr: string | undefined) => (addr ? byLower.get(addr.toLowerCase()) : undefined);
    return new Promise<SendOutcome>((resolve) => {
      let settled = false;
      const finish = (o: SendOutcome) => {
        if (settled) return;
        settled = true;
        this.conn.removeListener('end', onEnd);
        resolve(o);
      };
      const all = (reply: Reply) => new Map(recipients.map((r) => [r, reply]));
      const lost = (detail: string) =>
        finish({ replies: all(localReply(451, '4.4.2', `${this.target.host}: connection lost: ${detail}`)), reusable: false, needsReset: false, lost: true });
      // close() from outside (shutdown) drops the pending callback: the 'end' event settles it.
      const onEnd = () => lost('connection closed');
      this.conn.once('end', onEnd);
      this.conn.send(envelope, message, (err, info) => {
        const replies = new Map<string, Reply>();
        const rejections = (errs: NodemailerError[] | undefined) => {
          for (const e of errs ?? []) {
            const r = own(e.recipient);
            const reply = e.response ? parseReply(e.response) : null;
            if (r && reply) replies.set(r, reply);
          }
        };
        if (!err) {
          const ok = parseReply(info.response ?? '') ?? { code: 250, text: '250 OK' };
          for (const a of info.accepted) {
            const r = own(a);
            if (r) replies.set(r, ok);
          }
          rejections(info.rejectedErrors);
          for (const r of recipients) if (!replies.has(r)) replies.set(r, ok);
          return finish({ replies, reusable: this.alive, needsReset: false });
        }
        const e = err as NodemailerError;
        const reply = e.response ? parseReply(e.response) : null;
        if (e.code === 'EENVELOPE' && reply) {
          // MAIL FROM refused (all recipients), every RCPT refused, or DATA refused: RCPT
          // rejections keep their own replies, the others share the failing reply.
          rejections(e.rejectedErrors ?? envelope.rejectedErrors);
          for (const r of recipients) if (!replies.has(r)) replies.set(r, reply);
          return finish({ replies, reusable: this.alive, needsReset: true });
        }
        if (e.code === 'EMESSAGE' && reply) {
          // The server refused the message after DATA: the recipients it had accepted share that reply.
          rejections(envelope.rejectedErrors);
          for (const r of recipients) if (!replies.has(r)) replies.set(r, reply);
          return finish({ replies, reusable: this.alive, needsReset: false });
        }
        if (e.code === 'EMESSAGE' && /larger than allowed/.test(e.message)) {
          // RFC 1870 §6: the server's advertised SIZE is smaller than the message.
          return finish({ replies: all(localReply(552, '5.3.4', `${this.target.host}: ${e.message}`)), reusable: this.alive, needsReset: false });
        }
        if (reply) return finish({ replies: all(reply), reusable: false, needsReset: false }); // e.g. 421 closing
        lost(e.message);
      });
    });
  }

  /** RSET after a refused transaction (RFC 5321 §4.1.1.5); false when the session is unusable. */
  reset(): Promise<boolean> {
    return new Promise((resolve) => {
      if (!this.alive) return resolve(false);
      this.conn.reset((err) => resolve(!err && this.alive));
    });
  }

  /** QUIT politely (idle sessions). */
  quit(): void {
    this.dead = true;
    try {
      this.conn.quit();
    } catch {
      this.conn.close();
    }
  }

  /** Drop the connection now. */
  close(): void {
    this.dead = true;
    this.conn.close();
  }
}

function connectError(where: string, err: NodemailerError, target: Target): ConnectError {
  const serverSaid = err.response ? ` (${err.response.replace(/\s+/g, ' ').trim()})` : '';
  const code = err.code === 'ETLS' ? 'ETLS' : err.code === 'EAUTH' ? 'EAUTH' : (err.originalCode ?? err.code ?? 'ECONNECTION');
  const remote = err.response ? parseReply(err.response) : null;
  const tlsReason = code === 'ETLS' ? tlsReasonOf(err) : null;
  let reply: Reply;
  if (code === 'ETLS' && target.verify)
    // RFC 8461 §4.2, RFC 3463 X.7.10 (encryption needed): an MTA-STS policy in enforce mode.
    reply = localReply(451, '4.7.10', `${where}: MTA-STS policy requires TLS with a valid certificate: ${tlsReason ?? err.message}${serverSaid}`);
  else if (code === 'ETLS' && target.security === 'require-starttls')
    // RFC 3463 X.7.0: the sending domain requires TLS (`tls: enforced`) and none could be set up.
    reply = localReply(451, '4.7.0', `${where}: TLS required by the sending domain but not available${serverSaid}`);
  else if (code === 'EAUTH') reply = localReply(451, '4.7.0', `${where}: authentication failed${serverSaid}`);
  else reply = localReply(451, '4.4.1', `${where}: ${err.message.replace(/: \d{3}[\s\S]*$/, '')}${serverSaid}`);
  return new ConnectError(reply, code, remote, tlsReason);
}

/** The TLS library's code for a failed handshake (ERR_TLS_CERT_ALTNAME_INVALID, CERT_HAS_EXPIRED, …), or STARTTLS_MISSING. */
function tlsReasonOf(err: NodemailerError): string {
  const cause = (err as { cause?: { code?: string } }).cause;
  const code = cause?.code ?? (err.originalCode && err.originalCode !== 'ETLS' ? err.originalCode : null);
  if (code) return code;
  if (/TLS required but not in use|STARTTLS/i.test(err.message)) return 'STARTTLS_MISSING';
  const m = /\b([A-Z][A-Z0-9_]{5,})\b/.exec(err.message);
  return m ? m[1] : 'TLS_FAILURE';
}

const SLICE = 64 * 1024;

function* slices(parts: Uint8Array[]): Generator<Buffer> {
  for (const p of parts)
    for (let off = 0; off < p.byteLength; off += SLICE) yield Buffer.from(p.buffer, p.byteOffset + off, Math.min(SLICE, p.byteLength - off));
}

/**
 * A message small enough to send at once. nodemailer pipes the message through its dot-stuffing
 * stream (RFC 5321 §4.5.2) into the socket, which writes the message and the end-of-data line
 * `.<CRLF>` as two segments — on loopback and LANs each a syscall and a wake-up of the peer. Held
 * corked while the message and that line are written, the socket sends both in one segment, as
 * Postfix's client does. The socket is uncorked on the next turn of the event loop whatever
 * happened, so a write that waits for room can never wait for the cork.
 */
class OneWrite extends Readable {
  constructor(
    private readonly bytes: Buffer,
    private readonly socket: () => Writable | undefined,
  ) {
    super();
  }

  override _read(): void {
    this.push(this.bytes);
    this.push(null);
  }

  override pipe<T extends NodeJS.WritableStream>(dest: T): T {
    const socket = this.socket();
    socket?.cork();
    dest.write(this.bytes);
    dest.end();
    if (socket) setImmediate(() => socket.uncork());
    return dest;
  }
}
