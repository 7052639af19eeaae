// Certificates by ACME in cluster mode (docs/mail.md §4, "Certificates by ACME"): two nodes on one
// PostgreSQL database. Node A asks pebble for the certificate while pebble's HTTP-01 requests reach
// node B's HTTP listener, which answers from the store; node B then serves on its own SMTP listener
// the certificate node A obtained, picked up from the store at its minute's check.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startDnsServer, type TestDns } from '../helpers/dns';
import { startPebble, starttlsPeer, type Pebble } from '../helpers/pebble';
import { freePort, startPosthorn, type Running } from '../helpers/posthorn';
import { postgres } from '../helpers/postgres';
import { startSmtp, type SmtpListeners } from '../../src/smtp';
import { startCertificates, type Certificates } from '../../src/cli/certificates';
import { ACME_TEAM, type AcmeCertificateRec } from '../../src/store';
import { certificateId } from '../../src/acme/names';

const APP = 'app.posthorn.test';
const MX = 'mx.posthorn.test';

describe('two nodes on one PostgreSQL database', () => {
  let dns: TestDns;
  let pebble: Pebble;
  let a: Running;
  let b: Running;
  let smtpB: SmtpListeners;
  let certsB: Certificates;
  let root: string;

  beforeAll(async () => {
    dns = await startDnsServer();
    dns.zone.set(APP, 'A', ['127.0.0.1']).set(MX, 'A', ['127.0.0.1']);
    const portB = await freePort();
    pebble = await startPebble({ dns: dns.address, httpPort: portB });
    root = await pebble.root();
    const database = await (await postgres()).database('acme');
    const node = (httpPort: number) => ({
      'database.url': database,
      'http.port': httpPort,
      public_url: `https://${APP}`,
      'smtp.hostname': MX,
      'dns.servers': [dns.address],
      'tls.acme.enabled': true,
      'tls.acme.directory': pebble.directory,
      'tls.acme.ca_file': pebble.caFile,
      'tls.acme.terms_agreed': true,
      'tls.acme.https_ports': [],
    });
    a = await startPosthorn(node(0));
    b = await startPosthorn({ ...node(portB), 'smtp.starttls_ports': [0] });
    smtpB = await startSmtp(b.svc);
    // Node B's first check obtains the first certificate (the CA asking B itself).
    certsB = (await startCertificates(b.svc, smtpB))!;
    await certsB.first;
  }, 60_000);

  afterAll(async () => {
    await certsB?.stop(true);
    await smtpB?.stop();
    await b?.stop();
    await a?.stop();
    await pebble?.stop();
    await dns?.close();
  });

  test('node A renews it (the CA asking node B, which answers from the store); B serves it from the store', async () => {
    await a.svc.acme!.renew();
    const rec = (await a.svc.store.acme.get(ACME_TEAM, certificateId([APP, MX]))) as AcmeCertificateRec;
    if (!rec.cert) throw new Error(`no certificate: ${rec.last_error}\n${pebble.output()}`);
    // Node B's minute: the certificate node A stored is put in service on B's listener.
    await b.svc.acme!.tick();
    expect(b.svc.acme!.current()?.cert).toBe(rec.cert);
    const peer = await starttlsPeer(smtpB.port('starttls'), root, MX);
    expect(peer.serialNumber.toUpperCase()).toBe(new (await import('node:crypto')).X509Certificate(rec.cert).serialNumber.toUpperCase());
  });

  test('renewals on both nodes at once: one renews under the lock, both end up serving the same certificate', async () => {
    await Promise.all([a.svc.acme!.renew(), b.svc.acme!.renew()]);
    await a.svc.acme!.tick();
    await b.svc.acme!.tick();
    const rec = (await a.svc.store.acme.get(ACME_TEAM, certificateId([APP, MX]))) as AcmeCertificateRec;
    expect(rec.last_error).toBeNull();
    expect(a.svc.acme!.current()?.cert).toBe(rec.cert!);
    expect(b.svc.acme!.current()?.cert).toBe(rec.cert!);
  });
});
