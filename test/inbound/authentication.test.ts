// What the inbound processor hands mailauth (src/inbound/authentication.ts authenticationInput):
// the header section alone when nothing in it is a signature over the body, the whole message
// otherwise — and the SPF, DKIM and DMARC verdicts are the same either way.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { generateKeyPairSync } from 'node:crypto';
import { dkimSign } from 'mailauth';
import { authenticationInput, checkAuthentication, headerEnd } from '../../src/inbound/authentication';
import { Resolver } from '../../src/dns/resolver';
import { startDnsServer, type TestDns } from '../helpers/dns';

const unsigned = (from: string, body = 'Hello.\r\n') =>
  Buffer.from(`From: <${from}>\r\nTo: <support@inbound.test>\r\nSubject: Hi\r\nMessage-ID: <1@x.test>\r\n\r\n${body}`);

describe('headerEnd', () => {
  test('finds the empty line as mailauth does: CRLF CRLF, LF LF, LF CRLF, an empty first line', () => {
    expect(headerEnd(Buffer.from('A: b\r\n\r\nbody'))).toBe(8);
    expect(headerEnd(Buffer.from('A: b\n\nbody'))).toBe(6);
    expect(headerEnd(Buffer.from('A: b\n\r\nbody'))).toBe(7);
    expect(headerEnd(Buffer.from('\nbody'))).toBe(1);
    expect(headerEnd(Buffer.from('\r\nbody'))).toBe(2);
    expect(headerEnd(Buffer.from('A: b\r\nC: d\r\n'))).toBeNull();
  });
});

describe('authenticationInput', () => {
  test('an unsigned message: its header section, the empty line included', () => {
    const raw = unsigned('a@x.test');
    expect(authenticationInput(raw).toString()).toBe(raw.toString().slice(0, raw.indexOf('\r\n\r\n') + 4));
  });

  test('whole when a header names a signature or ARC, or when there is no body', () => {
    for (const h of ['DKIM-Signature: v=1', 'dkim-signature : v=1', 'ARC-Seal: i=1', 'X-Note: arc-whatever', 'X-Signature: y'])
      expect(authenticationInput(Buffer.from(`${h}\r\nFrom: <a@x.test>\r\n\r\nbody\r\n`)).byteLength).toBe(`${h}\r\nFrom: <a@x.test>\r\n\r\nbody\r\n`.length);
    const noBody = Buffer.from('From: <a@x.test>\r\n\r\n');
    expect(authenticationInput(noBody)).toBe(noBody);
    const noEnd = Buffer.from('From: <a@x.test>\r\n');
    expect(authenticationInput(noEnd)).toBe(noEnd);
  });
});

describe('the verdicts are those of the whole message', () => {
  let dns: TestDns;
  let resolver: Resolver;
  beforeAll(async () => {
    dns = await startDnsServer();
    resolver = new Resolver([dns.address]);
    dns.zone.set('pass.test', 'TXT', ['v=spf1 ip4:127.0.0.1 -all']);
    dns.zone.set('_dmarc.pass.test', 'TXT', ['v=DMARC1; p=reject']);
    dns.zone.set('_dmarc.strict.test', 'TXT', ['v=DMARC1; p=reject']);
  });
  afterAll(() => dns.close());

  test('unsigned: SPF pass aligned, DMARC pass; forged From: DMARC fail; no records: unknown', async () => {
    const conn = { ip: '127.0.0.1', helo: 'client.test', mta: 'mx.posthorn.test' };
    expect(await checkAuthentication(unsigned('a@pass.test'), { ...conn, sender: 'a@pass.test' }, resolver)).toEqual({
      spf: 'pass',
      dkim: 'unknown',
      dmarc: 'pass',
    });
    expect(await checkAuthentication(unsigned('a@strict.test'), { ...conn, sender: 'a@pass.test' }, resolver)).toEqual({
      spf: 'pass',
      dkim: 'unknown',
      dmarc: 'fail',
    });
    expect(await checkAuthentication(unsigned('a@none.test', 'x\n'.repeat(500)), { ...conn, sender: 'a@none.test' }, resolver)).toEqual({
      spf: 'unknown',
      dkim: 'unknown',
      dmarc: 'unknown',
    });
  });

  test('signed: the body is read, so a changed body does not pass DKIM (mailauth: neutral, body hash)', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    dns.zone.set('sel._domainkey.pass.test', 'TXT', [`v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`]);
    const message = unsigned('a@pass.test', 'Signed body.\r\n');
    const key = {
      canonicalization: 'relaxed/relaxed',
      signingDomain: 'pass.test',
      selector: 'sel',
      privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    };
    const { signatures } = await dkimSign(message, { ...key, signatureData: [key] });
    const conn = { ip: '127.0.0.1', helo: 'client.test', mta: 'mx.posthorn.test', sender: 'a@pass.test' };
    expect(await checkAuthentication(Buffer.concat([Buffer.from(signatures), message]), conn, resolver)).toEqual({ spf: 'pass', dkim: 'pass', dmarc: 'pass' });
    const changed = Buffer.concat([Buffer.from(signatures), unsigned('a@pass.test', 'Changed body.\r\n')]);
    expect((await checkAuthentication(changed, conn, resolver)).dkim).toBe('gray');
  });
});
