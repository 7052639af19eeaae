// Canaries for what src/delivery/smtp-client.ts reads of nodemailer's SMTPConnection beyond its
// documented calls (docs/ARCHITECTURE.md §5, "Where Posthorn reaches into a library"): `_socket`
// (declared public in nodemailer's types: the TLS details of a session, and the socket corked
// around a small message), `upgrading` (declared private: a STARTTLS handshake under way), and how
// a message stream reaches the socket. nodemailer runs unpatched against smtp-server sinks and a
// scripted server on loopback; a failure names what smtp-client.ts relies on.
import { describe, test, expect, afterAll } from 'bun:test';
import { createServer, type Server, type AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import SMTPConnection, { type SMTPConnectionOptions } from 'nodemailer/lib/smtp-connection';
import { startSink, type Sink } from '../helpers/sink';
import MimeNode from 'nodemailer/lib/mime-node';
import { memoHeaderKey, nodemailerHeaderKey } from '../../src/sending/mime';

const check = (what: string) =>
  `nodemailer changed under src/delivery/smtp-client.ts: ${what} — read smtp-connection/index.js of the new version and adapt SmtpSession (docs/ARCHITECTURE.md §5)`;

const sinks: Sink[] = [];
const servers: Server[] = [];
afterAll(async () => {
  await Promise.all(sinks.map((s) => s.close()));
  for (const s of servers) s.close();
});

async function sink(tls: 'starttls' | 'none' | 'implicit') {
  const s = await startSink({ tls });
  sinks.push(s);
  return s;
}

/** A connected SMTPConnection, set up as smtp-client.ts sets up an opportunistic or implicit TLS session. */
async function connected(port: number, implicit = false): Promise<SMTPConnection> {
  const opts: SMTPConnectionOptions = {
    host: '127.0.0.1',
    port,
    name: 'client.test',
    secure: implicit,
    opportunisticTLS: !implicit,
    tls: { rejectUnauthorized: false },
    allowInternalNetworkInterfaces: true,
  };
  const conn = new SMTPConnection(opts);
  await new Promise<void>((resolve, reject) => {
    conn.once('error', reject);
    conn.connect((err) => (err ? reject(err) : resolve()));
  });
  return conn;
}

describe('nodemailer: `_socket`, the socket a session speaks on (SmtpSession.tls, SmtpSession.send)', () => {
  test('plain text: a socket without TLS, `secure` false', async () => {
    const conn = await connected((await sink('none')).port);
    expect(conn.secure, check('`secure` on a plain session')).toBe(false);
    expect(conn._socket, check('`_socket` is missing')).toBeTruthy();
    expect(typeof (conn._socket as Partial<TLSSocket>).getProtocol, check('`_socket` of a plain session')).toBe('undefined');
    conn.close();
  });

  for (const mode of ['starttls', 'implicit'] as const) {
    test(`${mode}: the TLS socket, with its protocol, cipher and certificate verdict; \`secure\` true`, async () => {
      const s = await sink(mode);
      const conn = await connected(s.port, mode === 'implicit');
      expect(conn.secure, check('`secure` after TLS')).toBe(true);
      const socket = conn._socket as TLSSocket;
      expect(socket.getProtocol?.(), check('`_socket` is no longer the TLS socket after TLS is up')).toMatch(/^TLSv1\.[23]$/);
      expect(socket.getCipher().name, check('`_socket`.getCipher()')).toBeTruthy();
      // The sink's certificate is self-signed: not authorized, and why.
      expect([socket.authorized, Boolean(socket.authorizationError)], check('`_socket`.authorized / authorizationError')).toEqual([false, true]);
      conn.close();
    });
  }

  test('a message stream is handed over with `message.pipe(dest)`, and what it writes reaches the server through `_socket`', async () => {
    const s = await sink('starttls');
    const conn = await connected(s.port);
    const bytes = Buffer.from('From: a@client.test\r\nTo: b@sink.test\r\nSubject: corked\r\n\r\nhello\r\n');
    const piped: string[] = [];
    // As smtp-client.ts OneWrite does: the socket corked while the message and the end of data are written.
    class Corked extends Readable {
      override _read() {
        this.push(bytes);
        this.push(null);
      }
      override pipe<T extends NodeJS.WritableStream>(dest: T): T {
        piped.push('pipe');
        const socket = conn._socket || undefined;
        socket?.cork();
        dest.write(bytes);
        dest.end();
        if (socket) setImmediate(() => socket.uncork());
        return dest;
      }
    }
    const info = await new Promise<{ response: string }>((resolve, reject) =>
      conn.send({ from: 'a@client.test', to: ['b@sink.test'] }, new Corked(), (err, i) => (err ? reject(err) : resolve(i))),
    );
    expect(piped, check('a Readable message is no longer given to message.pipe()')).toEqual(['pipe']);
    expect(info.response).toStartWith('250');
    const [received] = await s.waitFor(1);
    expect(received?.raw.toString(), check('what was written while `_socket` was corked')).toContain('Subject: corked\r\n\r\nhello');
    conn.close();
  });
});

describe('nodemailer: `upgrading` (smtp-client.ts openAt, a failed STARTTLS handshake is a TLS failure)', () => {
  test('true when a STARTTLS handshake fails on bytes that are not TLS', async () => {
    // A server that offers STARTTLS, accepts it, then answers the handshake with plain text.
    const server = createServer((socket) => {
      socket.on('error', () => {});
      socket.write('220 broken.test ESMTP\r\n');
      socket.on('data', (chunk) => {
        const line = chunk.toString();
        if (/^EHLO/i.test(line)) socket.write('250-broken.test\r\n250 STARTTLS\r\n');
        else if (/^STARTTLS/i.test(line)) socket.write('220 go ahead\r\n');
        else socket.write('this is not a TLS record, it is plain text that goes on and on\r\n');
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const conn = new SMTPConnection({
      host: '127.0.0.1',
      port: (server.address() as AddressInfo).port,
      opportunisticTLS: true,
      tls: { rejectUnauthorized: false },
      allowInternalNetworkInterfaces: true,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
    });
    const seen = await new Promise<{ upgrading: unknown; code: unknown }>((resolve) => {
      let done = false;
      const report = (e: { code?: string } | undefined) => {
        if (done) return;
        done = true;
        resolve({ upgrading: conn.upgrading, code: e?.code });
      };
      conn.on('error', report);
      conn.connect((err) => report(err ?? { code: 'connected' }));
    });
    expect(seen.upgrading, check(`\`upgrading\` is not set while a STARTTLS handshake runs (error ${String(seen.code)})`)).toBe(true);
    conn.close();
  });
});

// src/sending/mime.ts keeps nodemailer's normalized header names (MimeNode's `_normalizeHeaderKey`,
// undocumented): it must still exist, be what MimeNode calls, and depend on the name alone.
describe('MimeNode._normalizeHeaderKey, as sending/mime.ts keeps its answers', () => {
  const mimeCheck = (what: string) =>
    `nodemailer changed under src/sending/mime.ts: ${what} — read mime-node/index.js of the new version and adapt memoHeaderKey (docs/ARCHITECTURE.md §5)`;
  const names = [
    'from',
    'To',
    'x-smtpapi',
    'mime-version',
    'dkim-signature',
    'list-id',
    'x-spf',
    'content-features',
    'otp-token',
    'From: ceo@example.com (',
    'x-\u0001odd\tname',
  ];

  test('it exists, and the composer calls the kept answers', () => {
    expect(typeof nodemailerHeaderKey, mimeCheck('MimeNode.prototype._normalizeHeaderKey is gone')).toBe('function');
    expect((MimeNode.prototype as unknown as { _normalizeHeaderKey: unknown })._normalizeHeaderKey).toBe(memoHeaderKey);
  });

  test('its answer depends on the name alone, and the kept answer is the same', () => {
    for (const name of names) {
      const fresh = nodemailerHeaderKey!.call({}, name);
      expect(nodemailerHeaderKey!.call(new MimeNode('text/plain'), name), mimeCheck(`the normalized name of ${name} depends on the node`)).toBe(fresh);
      expect(memoHeaderKey.call({}, name)).toBe(fresh);
      expect(memoHeaderKey.call({}, name)).toBe(fresh);
    }
    const node = new MimeNode('text/plain');
    node.setHeader('x-smtpapi', 'a');
    expect(node.getHeader('X-SMTPAPI'), mimeCheck('setHeader and getHeader no longer meet through the normalized name')).toBe('a');
  });
});
