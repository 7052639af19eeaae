// Posthorn's SMTP listeners for tests, and two clients for them.
//
//   const s = await startPosthornSmtp({ 'dns.servers': [dns.address] });  // a STARTTLS and an implicit-TLS listener on free ports
//   const t = submitter(s.starttls, s.p.apiKey);          // nodemailer: STARTTLS + AUTH PLAIN, self-signed cert accepted
//   const info = await t.sendMail({ from, to, subject, text });   // info.response = '250 2.0.0 OK <email id>'
//   await mta(s.starttls).sendMail({ from, to, subject, text }); await inboundProcessed(s.p);   // inbound: 250 once spooled
//   const c = await SmtpDialog.open(s.starttls);          // a raw session: exact replies, one command at a time
//   await c.command('EHLO client.test');                   // → { code: 250, lines: [...], text }
//   await c.startTls();
//   await s.stop();
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import nodemailer from 'nodemailer';
import { startPosthorn, type Running } from './posthorn';
import { until } from './wait';
import { startSmtp, type SmtpListeners } from '../../src/smtp';

export interface RunningSmtp {
  p: Running;
  smtp: SmtpListeners;
  /** Port of the STARTTLS listener. */
  starttls: number;
  /** Port of the implicit-TLS listener. */
  tls: number;
  stop(): Promise<void>;
}

/** A Posthorn (startPosthorn) with one STARTTLS and one implicit-TLS listener on free ports. */
export async function startPosthornSmtp(overrides: Record<string, unknown> = {}, opts: { now?: () => number } = {}): Promise<RunningSmtp> {
  const p = await startPosthorn({ 'smtp.starttls_ports': [0], 'smtp.tls_ports': [0], ...overrides }, opts);
  const smtp = await startSmtp(p.svc);
  return {
    p,
    smtp,
    starttls: smtp.port('starttls'),
    tls: smtp.port('tls'),
    async stop() {
      await smtp.stop();
      await p.stop();
    },
  };
}

/**
 * Inbound mail is answered 250 once spooled and processed after (docs/mail.md §4): wait until the
 * spool has nothing left to process (polled, bounded).
 */
export async function inboundProcessed(p: Running): Promise<void> {
  await until(async () => (await p.svc.store.inboundSpool.counts()).waiting === 0, 'the inbound spool to be processed');
  // The processor runs on the back office's thread: its log lines reach this thread by message, so
  // a round trip after its commit brings in every line it wrote about the work.
  await p.svc.backOffice.idle('inbound');
}

/** A nodemailer transport that authenticates with an API key (STARTTLS, or implicit TLS with `secure`). */
export function submitter(port: number, apiKey: string, opts: { secure?: boolean; user?: string; pool?: boolean; ignoreTLS?: boolean } = {}) {
  return nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    secure: opts.secure ?? false,
    ignoreTLS: opts.ignoreTLS,
    auth: { user: opts.user ?? 'resend', pass: apiKey },
    tls: { rejectUnauthorized: false },
    pool: opts.pool,
  } as never);
}

/** An unauthenticated sending MTA (STARTTLS when offered), as the internet's mail servers connect. */
export function mta(port: number) {
  return nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, tls: { rejectUnauthorized: false }, name: 'mta.sender.test' } as never);
}

/** The email id in a `250 2.0.0 OK <id>` reply. */
export function acceptedId(response: string): string {
  const m = /^250 2\.0\.0 OK ([0-9a-f-]{36})$/.exec(response.trim());
  if (!m) throw new Error(`not an accepted reply: ${response}`);
  return m[1];
}

export interface SmtpResponse {
  code: number;
  /** Every line without its code, e.g. ['mx.posthorn.test Nice to meet you', 'SIZE 41943040']. */
  lines: string[];
  /** The last line as received, code included. */
  text: string;
}

/** A raw SMTP session, for replies that a client library would hide or refuse to provoke. */
export class SmtpDialog {
  private buffer = '';
  private waiters: (() => void)[] = [];
  private closed = false;

  private constructor(private socket: Socket | TLSSocket) {
    this.attach(socket);
  }

  /** `from`: the local address to connect from (another loopback address is another client). */
  static async open(port: number, opts: { implicitTls?: boolean; from?: string } = {}): Promise<SmtpDialog> {
    const d = await SmtpDialog.connect(port, opts);
    const greeting = await d.read();
    if (greeting.code !== 220) throw new Error(`greeting: ${greeting.text}`);
    return d;
  }

  /** Connected, the greeting (or a refusal) not read yet. */
  static async connect(port: number, opts: { implicitTls?: boolean; from?: string } = {}): Promise<SmtpDialog> {
    const target = { host: '127.0.0.1', port, ...(opts.from ? { localAddress: opts.from } : {}) };
    const socket = opts.implicitTls ? tlsConnect({ ...target, rejectUnauthorized: false }) : netConnect(target);
    await new Promise<void>((resolve, reject) => {
      socket.once(opts.implicitTls ? 'secureConnect' : 'connect', () => resolve());
      socket.once('error', reject);
    });
    return new SmtpDialog(socket);
  }

  /** True once the server has closed the connection (waits up to `timeoutMs` for it). */
  async closedByServer(timeoutMs = 5_000): Promise<boolean> {
    return until(() => this.closed, 'the server to close the connection', timeoutMs, 20).catch(() => false);
  }

  /** Send bytes as they are, without waiting for a reply. */
  write(bytes: string | Buffer): void {
    this.socket.write(bytes);
  }

  private attach(socket: Socket | TLSSocket) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.buffer += chunk;
      this.wake();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
    socket.on('error', () => {});
  }

  private wake() {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** The next complete reply (multi-line replies end with `NNN ` + text). */
  async read(timeoutMs = 10_000): Promise<SmtpResponse> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = /^(?:\d{3}-[^\r\n]*\r\n)*(\d{3}) [^\r\n]*\r\n/.exec(this.buffer);
      if (m) {
        const block = m[0];
        this.buffer = this.buffer.slice(block.length);
        const raw = block.trimEnd().split('\r\n');
        return { code: Number(m[1]), lines: raw.map((l) => l.slice(4)), text: raw[raw.length - 1] };
      }
      if (this.closed) throw new Error(`connection closed; pending: ${JSON.stringify(this.buffer)}`);
      if (Date.now() > deadline) throw new Error(`no reply within ${timeoutMs} ms; pending: ${JSON.stringify(this.buffer)}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 50);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /** Send one command line and read its reply. */
  async command(line: string): Promise<SmtpResponse> {
    this.socket.write(`${line}\r\n`);
    return this.read();
  }

  /** Send raw bytes (a message body, ending with CRLF.CRLF) and read the reply. */
  async data(bytes: string | Buffer): Promise<SmtpResponse> {
    this.socket.write(bytes);
    return this.read();
  }

  /** STARTTLS, then the TLS handshake on the same socket (RFC 3207). */
  async startTls(): Promise<void> {
    const r = await this.command('STARTTLS');
    if (r.code !== 220) throw new Error(`STARTTLS: ${r.text}`);
    const plain = this.socket;
    plain.removeAllListeners('data');
    const secure = tlsConnect({ socket: plain, rejectUnauthorized: false });
    await new Promise<void>((resolve, reject) => {
      secure.once('secureConnect', () => resolve());
      secure.once('error', reject);
    });
    this.socket = secure;
    this.attach(secure);
  }

  close(): void {
    this.socket.destroy();
  }
}

/** AUTH PLAIN's initial response (RFC 4616): base64 of "\0user\0pass". */
export const plainAuth = (user: string, pass: string) => Buffer.from(`\0${user}\0${pass}`).toString('base64');
