// Certificates by ACME (docs/mail.md §4, "Certificates by ACME") against Debian's pebble on loopback: Posthorn obtains a
// certificate for the public_url host and smtp.hostname through HTTP-01 answered by its own HTTP
// listener, serves it on STARTTLS, implicit TLS and HTTPS without a restart, renews it and swaps
// the new one in, and keeps a failed renewal's error for the doctor while the old one stays.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startDnsServer, type TestDns } from '../helpers/dns';
import { implicitPeer, startPebble, starttlsPeer, type Pebble } from '../helpers/pebble';
import { freePort, startPosthorn, type Running } from '../helpers/posthorn';
import { startSmtp, type SmtpListeners } from '../../src/smtp';
import { startCertificates, type Certificates } from '../../src/cli/certificates';
import { ACME_TEAM, type AcmeCertificateRec } from '../../src/store';
import { certificateId } from '../../src/acme/names';
import { acmeCertificateCheck } from '../../src/health/certificate';

const APP = 'app.posthorn.test';
const MX = 'mx.posthorn.test';

describe('certificates by ACME, from pebble', () => {
  let dns: TestDns;
  let pebble: Pebble;
  let p: Running;
  let smtp: SmtpListeners;
  let certs: Certificates;
  let root: string;
  const stored = async () => (await p.svc.store.acme.get(ACME_TEAM, certificateId([APP, MX]))) as AcmeCertificateRec | undefined;

  beforeAll(async () => {
    dns = await startDnsServer();
    dns.zone.set(APP, 'A', ['127.0.0.1']).set(MX, 'A', ['127.0.0.1']);
    const httpPort = await freePort();
    pebble = await startPebble({ dns: dns.address, httpPort });
    root = await pebble.root();
    p = await startPosthorn({
      'http.port': httpPort,
      public_url: `http://${APP}:${httpPort}`,
      'smtp.hostname': MX,
      'smtp.starttls_ports': [0],
      'smtp.tls_ports': [0],
      'dns.servers': [dns.address],
      'tls.acme.enabled': true,
      'tls.acme.directory': pebble.directory,
      'tls.acme.ca_file': pebble.caFile,
      'tls.acme.email': 'postmaster@posthorn.test',
      'tls.acme.terms_agreed': true,
      'tls.acme.https_ports': [0],
    });
    smtp = await startSmtp(p.svc);
    certs = (await startCertificates(p.svc, smtp))!;
    await certs.first;
  }, 60_000);

  afterAll(async () => {
    await certs?.stop(true);
    await smtp?.stop();
    await p?.stop();
    await pebble?.stop();
    await dns?.close();
  });

  test('the first start obtains a certificate for the public_url host and smtp.hostname, kept in the store', async () => {
    const rec = await stored();
    if (!rec?.cert) throw new Error(`no certificate: ${rec?.last_error}\n${pebble.output()}`);
    expect(rec.names).toEqual([APP, MX]);
    expect(rec.last_error).toBeNull();
    expect(rec.failures).toBe(0);
    // Renewal at two thirds of the life.
    const [from, to, due] = [Date.parse(rec.not_before!), Date.parse(rec.not_after!), Date.parse(rec.due_at)];
    expect(Math.abs(due - (from + ((to - from) * 2) / 3))).toBeLessThan(1000);
    const account = await p.svc.store.acme.get(ACME_TEAM, 'account');
    expect(account).toMatchObject({ kind: 'account', directory: pebble.directory });
    expect((account as { url: string | null }).url).toStartWith('https://localhost:');
    // The challenges are gone once answered.
    expect((await p.svc.store.acme.all(ACME_TEAM)).filter((r) => r.kind === 'challenge')).toEqual([]);
  });

  test('STARTTLS, implicit TLS and HTTPS serve it, verified against the CA, without a restart', async () => {
    const rec = (await stored())!;
    const serial = new (await import('node:crypto')).X509Certificate(rec.cert!).serialNumber;
    const seen = [
      await starttlsPeer(smtp.port('starttls'), root, MX),
      await implicitPeer(smtp.port('tls'), root, MX),
      await implicitPeer(certs.https!.ports[0]!, root, APP),
    ];
    for (const cert of seen) {
      expect(cert.serialNumber.toUpperCase()).toBe(serial.toUpperCase());
      expect(cert.subjectaltname).toContain(`DNS:${MX}`);
      expect(cert.subjectaltname).toContain(`DNS:${APP}`);
    }
    // The HTTPS listener is the API.
    const res = await fetch(`https://127.0.0.1:${certs.https!.ports[0]}/health`, { tls: { ca: root, serverName: APP } } as RequestInit);
    expect(res.status).toBe(200);
  });

  test('the doctor reports the ACME certificate and when it is renewed', async () => {
    const check = acmeCertificateCheck(p.svc.config, await stored());
    expect(check.status).toBe('pass');
    expect(check.evidence).toContain(`ACME certificate from ${pebble.directory} for ${APP}, ${MX}`);
    expect(check.evidence).toContain('renewal due');
    // The doctor's run reads it from the store.
    const run = await p.svc.doctor.run();
    expect(run.checks.find((c) => c.name === 'smtp_certificate')).toMatchObject({ status: 'pass', evidence: check.evidence });
  });

  test('a renewal swaps the new certificate into every listener, seen by fresh connections', async () => {
    const before = (await stored())!;
    const oldSerial = (await starttlsPeer(smtp.port('starttls'), root, MX)).serialNumber;
    await p.svc.acme!.renew();
    const after = (await stored())!;
    expect(after.cert).not.toBe(before.cert);
    expect(after.issued_at! >= before.issued_at!).toBe(true);
    const serials = [
      (await starttlsPeer(smtp.port('starttls'), root, MX)).serialNumber,
      (await implicitPeer(smtp.port('tls'), root, MX)).serialNumber,
      (await implicitPeer(certs.https!.ports[0]!, root, APP)).serialNumber,
    ];
    const newSerial = new (await import('node:crypto')).X509Certificate(after.cert!).serialNumber.toUpperCase();
    for (const s of serials) expect(s.toUpperCase()).toBe(newSerial);
    expect(newSerial).not.toBe(oldSerial.toUpperCase());
  });

  test('a failed renewal keeps its error and the certificate in service, and is tried again later', async () => {
    const before = (await stored())!;
    // The CA can no longer reach smtp.hostname: its HTTP-01 validation fails.
    dns.zone.clear(MX, 'A');
    try {
      await p.svc.acme!.renew();
    } finally {
      dns.zone.set(MX, 'A', ['127.0.0.1']);
    }
    const after = (await stored())!;
    expect(after.cert).toBe(before.cert);
    expect(after.failures).toBe(1);
    expect(after.last_error).toBeTruthy();
    expect(Date.parse(after.due_at)).toBeGreaterThan(Date.now());
    const serial = (await starttlsPeer(smtp.port('starttls'), root, MX)).serialNumber.toUpperCase();
    expect(serial).toBe(new (await import('node:crypto')).X509Certificate(before.cert!).serialNumber.toUpperCase());
    const check = acmeCertificateCheck(p.svc.config, after);
    expect(check.status).toBe('warn');
    expect(check.evidence).toContain(after.last_error!);
    // Not due yet: the minute's check leaves it alone.
    await p.svc.acme!.tick();
    expect((await stored())!.failures).toBe(1);
  });
});
