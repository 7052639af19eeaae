// Debian's pebble (Let's Encrypt's test ACME server, /usr/bin/pebble) on loopback, for the ACME
// tests (docs/mail.md §4, "Certificates by ACME"). Its directory is served over HTTPS with a certificate from a test CA
// (helpers/pki.ts; the Debian package ships none): hand `caFile` to Posthorn as `tls.acme.ca_file`.
// It resolves the names it validates through the test DNS server and asks HTTP-01 challenges on
// `httpPort` (Posthorn's HTTP listener) instead of 80.
//
//   const pebble = await startPebble({ dns: dns.address, httpPort });
//   // tls.acme.directory = pebble.directory, tls.acme.ca_file = pebble.caFile
//   await pebble.stop();
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { connect as tlsConnect, type PeerCertificate, type TLSSocket } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testCa } from './pki';
import { freePort } from './posthorn';
import { until } from './wait';

export const PEBBLE = '/usr/bin/pebble';

export interface Pebble {
  /** The ACME directory URL. */
  directory: string;
  /** A PEM file trusting the directory's HTTPS certificate. */
  caFile: string;
  /** The root certificate pebble issues under (PEM): a TLS client trusting it verifies what Posthorn serves. */
  root(): Promise<string>;
  /** What pebble wrote (for a failing test's message). */
  output(): string;
  stop(): Promise<void>;
}

export async function startPebble(opts: { dns: string; httpPort: number }): Promise<Pebble> {
  const dir = mkdtempSync(join(tmpdir(), 'posthorn-pebble-'));
  const ca = await testCa();
  const leaf = await ca.issue(['localhost']);
  writeFileSync(join(dir, 'cert.pem'), leaf.cert);
  writeFileSync(join(dir, 'key.pem'), leaf.key);
  const [port, management, tlsPort] = [await freePort(), await freePort(), await freePort()];
  const config = {
    pebble: {
      listenAddress: `127.0.0.1:${port}`,
      managementListenAddress: `127.0.0.1:${management}`,
      certificate: join(dir, 'cert.pem'),
      privateKey: join(dir, 'key.pem'),
      httpPort: opts.httpPort,
      tlsPort,
      ocspResponderURL: '',
      externalAccountBindingRequired: false,
    },
  };
  writeFileSync(join(dir, 'pebble-config.json'), JSON.stringify(config));
  let output = '';
  const proc = Bun.spawn([PEBBLE, '-config', join(dir, 'pebble-config.json'), '-dnsserver', opts.dns], {
    env: {
      ...process.env,
      // Validate at once, really (no random sleeps, no "always valid"), and never reject a nonce
      // on purpose: the test sees the CA's real checks, deterministically.
      PEBBLE_VA_NOSLEEP: '1',
      PEBBLE_VA_ALWAYS_VALID: '0',
      PEBBLE_WFE_NONCEREJECT: '0',
      PEBBLE_AUTHZREUSE: '0',
    },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const read = async (stream: ReadableStream<Uint8Array>) => {
    const reader = stream.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      output += Buffer.from(value).toString();
    }
  };
  void read(proc.stdout);
  void read(proc.stderr);
  const directory = `https://localhost:${port}/dir`;
  await until(() => output.includes('Listening on') || proc.exitCode !== null, 'pebble to listen', 15_000);
  if (proc.exitCode !== null) throw new Error(`pebble exited: ${output}`);
  return {
    directory,
    caFile: ca.file,
    output: () => output,
    async root() {
      const res = await fetch(`https://localhost:${management}/roots/0`, { tls: { ca: ca.cert } } as RequestInit);
      return res.text();
    },
    async stop() {
      proc.kill();
      await proc.exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The certificate a TLS client verifying against pebble's root is shown for `servername`. */
function verifiedPeer(socket: TLSSocket): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    socket.once('secureConnect', () => {
      const cert = socket.getPeerCertificate();
      socket.destroy();
      resolve(cert);
    });
    socket.once('error', reject);
  });
}

/** Over STARTTLS (RFC 3207): greeting, EHLO, STARTTLS, then the handshake. */
export async function starttlsPeer(port: number, ca: string, servername: string): Promise<PeerCertificate> {
  const plain = netConnect({ host: '127.0.0.1', port });
  let buffer = '';
  const reply = (code: string) =>
    new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        buffer += chunk.toString();
        if (new RegExp(`^${code} .*\\r\\n`, 'm').test(buffer)) {
          plain.off('data', onData);
          buffer = '';
          resolve();
        }
      };
      plain.on('data', onData);
      plain.once('error', reject);
    });
  await reply('220');
  plain.write('EHLO client.test\r\n');
  await reply('250');
  plain.write('STARTTLS\r\n');
  await reply('220');
  return verifiedPeer(tlsConnect({ socket: plain, servername, ca }));
}

/** Over implicit TLS (SMTP's RFC 8314 ports, HTTPS). */
export const implicitPeer = (port: number, ca: string, servername: string) => verifiedPeer(tlsConnect({ host: '127.0.0.1', port, servername, ca }));
