// The SMTP listeners (docs/mail.md §4): a port that cannot be bound is reported with the reason and the
// fix while the others start; the TLS certificate is the configured one, or a self-signed one
// generated into data_dir on first start and reused afterwards.
import { describe, test, expect, afterEach } from 'bun:test';
import { createServer, type Server } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { startPosthorn, type Running } from '../helpers/posthorn';
import { sinkCertificate } from '../helpers/sink';
import { SmtpDialog } from '../helpers/smtp';
import { startSmtp, bindAdvice, type SmtpListeners } from '../../src/smtp';
import { SELF_SIGNED_CERT, SELF_SIGNED_KEY } from '../../src/smtp/certificate';
import { captureLog } from '../helpers/log';

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function running(overrides: Record<string, unknown>): Promise<{ p: Running; smtp: SmtpListeners }> {
  const p = await startPosthorn(overrides);
  const smtp = await startSmtp(p.svc);
  cleanup.push(
    () => p.stop(),
    () => smtp.stop(),
  );
  return { p, smtp };
}

/** The certificate a listener presents (implicit TLS). */
async function presented(port: number): Promise<X509Certificate> {
  const { connect } = await import('node:tls');
  return await new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const raw = s.getPeerX509Certificate();
      s.destroy();
      raw ? resolve(raw) : reject(new Error('no certificate'));
    });
    s.on('error', reject);
  });
}

describe('binding', () => {
  test('a port in use is reported with reason and fix (structured log); the other listeners start', async () => {
    const busy: Server = createServer();
    const busyPort = await new Promise<number>((resolve) => busy.listen(0, '127.0.0.1', () => resolve((busy.address() as { port: number }).port)));
    cleanup.push(() => new Promise<void>((r) => busy.close(() => r())));

    // The structured log for the duration of the start.
    let result!: { p: Running; smtp: SmtpListeners };
    const lines = await captureLog(async () => {
      result = await running({ 'smtp.starttls_ports': [busyPort, 0], 'smtp.tls_ports': [0] });
    });
    const { smtp } = result;
    expect(smtp.failures).toEqual([{ mode: 'starttls', port: busyPort, reason: 'EADDRINUSE', fix: expect.stringContaining('another MTA') }]);
    expect(smtp.listeners.map((l) => l.mode).sort()).toEqual(['starttls', 'tls']);
    const logged = lines.find((l) => l.event === 'smtp.bind_failed')!;
    expect(logged).toMatchObject({ level: 'error', port: busyPort, reason: 'EADDRINUSE', mode: 'starttls', host: '127.0.0.1' });
    expect(logged.fix).toContain('postfix');

    // The listeners that did bind answer.
    for (const l of smtp.listeners) {
      const c = await SmtpDialog.open(l.port, { implicitTls: l.mode === 'tls' });
      expect((await c.command('EHLO client.test')).lines[0]).toStartWith('mx.posthorn.test');
      c.close();
    }
  });

  test('the fix for a privileged port names root, setcap and the systemd capability', () => {
    const fix = bindAdvice('EACCES', 25, '0.0.0.0');
    expect(fix).toContain('root');
    expect(fix).toContain('setcap cap_net_bind_service=+ep');
    expect(fix).toContain('AmbientCapabilities=CAP_NET_BIND_SERVICE');
    expect(bindAdvice('EADDRNOTAVAIL', 25, '192.0.2.1')).toContain('smtp.host');
  });

  test('no ports configured: nothing starts, nothing generated', async () => {
    const { p, smtp } = await running({});
    expect(smtp.listeners).toEqual([]);
    expect(() => statSync(join(p.dataDir, SELF_SIGNED_CERT))).toThrow();
  });
});

describe('certificate', () => {
  test('self-signed for smtp.hostname, generated into data_dir once and reused on the next start', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'posthorn-smtp-cert-'));
    cleanup.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const first = await running({ data_dir: dataDir, 'smtp.tls_ports': [0] });
    const pem = readFileSync(join(dataDir, SELF_SIGNED_CERT), 'utf8');
    expect(statSync(join(dataDir, SELF_SIGNED_KEY)).mode & 0o777).toBe(0o600);
    const cert = await presented(first.smtp.port('tls'));
    expect(cert.subjectAltName).toBe('DNS:mx.posthorn.test');
    expect(cert.toString()).toBe(new X509Certificate(pem).toString());
    await first.smtp.stop();
    await first.p.stop();
    cleanup.splice(0, cleanup.length, () => rmSync(dataDir, { recursive: true, force: true }));

    const second = await running({ data_dir: dataDir, 'smtp.tls_ports': [0] });
    expect(readFileSync(join(dataDir, SELF_SIGNED_CERT), 'utf8')).toBe(pem);
    expect((await presented(second.smtp.port('tls'))).fingerprint256).toBe(cert.fingerprint256);
  });

  test('smtp.tls_cert / smtp.tls_key are used when set', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'posthorn-smtp-own-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const own = await sinkCertificate();
    writeFileSync(join(dir, 'cert.pem'), own.cert);
    writeFileSync(join(dir, 'key.pem'), own.key);
    const { p, smtp } = await running({ 'smtp.tls_ports': [0], 'smtp.tls_cert': join(dir, 'cert.pem'), 'smtp.tls_key': join(dir, 'key.pem') });
    expect((await presented(smtp.port('tls'))).toString()).toBe(new X509Certificate(own.cert).toString());
    expect(() => statSync(join(p.dataDir, SELF_SIGNED_CERT))).toThrow();
  });
});

describe('greeting (smtp.greeting_delay)', () => {
  /** Connect, send EHLO before reading anything, then read what comes back in order. */
  async function earlyTalker(port: number, implicitTls = false) {
    const c = await SmtpDialog.connect(port, { implicitTls });
    c.write('EHLO early.test\r\n');
    return c;
  }

  test('0 (the default): the greeting goes out at once, so an EHLO sent right after connect gets the greeting, then its reply', async () => {
    const { smtp } = await running({ 'smtp.starttls_ports': [0], 'smtp.tls_ports': [0] });
    for (const mode of ['starttls', 'tls'] as const) {
      const c = await earlyTalker(smtp.port(mode), mode === 'tls');
      expect((await c.read()).text).toBe('220 mx.posthorn.test ESMTP Posthorn');
      const ehlo = await c.read();
      expect(ehlo.code).toBe(250);
      expect(ehlo.lines[0]).toStartWith('mx.posthorn.test');
      c.close();
    }
  });

  test('configured: a client talking before the greeting is refused as an early talker and closed; one that waits is served', async () => {
    const { smtp } = await running({ 'smtp.starttls_ports': [0], 'smtp.greeting_delay': '30s' });
    const c = await earlyTalker(smtp.port('starttls'));
    expect((await c.read()).text).toBe('421 mx.posthorn.test You talk too soon');
    expect(await c.closedByServer()).toBe(true);

    const { smtp: brief } = await running({ 'smtp.starttls_ports': [0], 'smtp.greeting_delay': '200ms' });
    const polite = await SmtpDialog.open(brief.port('starttls'));
    expect((await polite.command('EHLO polite.test')).code).toBe(250);
    polite.close();
  });
});
