// The doctor's checks one by one (docs/deliverability.md §1, §3), against a DNS server started by
// the test (PTR, SPF, DKIM, DMARC and blocklist zones), an SMTP sink as the port-25 probe, and
// certificates made by a test CA. Nothing leaves 127.0.0.0/8.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import { loadConfig } from '../../src/config';
import { Resolver } from '../../src/dns/resolver';
import { blocklistName, reverseName } from '../../src/dns/reverse';
import { addressesCheck, discoverAddresses } from '../../src/health/addresses';
import { askZone, domainBlocklistCheck, ipBlocklistCheck, isRefusal, queriedZones } from '../../src/health/blocklists';
import { certificateCheck } from '../../src/health/certificate';
import { codeMeaning, zoneInfo } from '../../src/dns/blocklist-zones';
import { dmarcCheck, spfCheck } from '../../src/health/domain-auth';
import { hostnameCheck, publicUrlCheck, unusableHostname } from '../../src/health/host';
import { port25Check } from '../../src/health/port25';
import { reverseDnsCheck } from '../../src/health/reverse-dns';
import { formatStartupWarning, startupProblems } from '../../src/health/startup';
import type { DomainRec } from '../../src/store';
import { type TestDns, startDnsServer } from '../helpers/dns';
import { testCa } from '../helpers/pki';
import { startSink } from '../helpers/sink';

let dns: TestDns;
let resolver: Resolver;
const config = (o: Record<string, unknown> = {}) =>
  loadConfig({ env: {}, overrides: { 'smtp.hostname': 'mx.posthorn.test', public_url: 'https://posthorn.example.test', 'dns.servers': [dns.address], ...o } });

beforeAll(async () => {
  dns = await startDnsServer();
  resolver = new Resolver([dns.address], 1000, 1);
  const z = dns.zone;
  z.set('mx.posthorn.test', 'A', ['127.0.0.2']);
  z.set('2.0.0.127.in-addr.arpa', 'PTR', ['mx.posthorn.test']);
  z.set('3.0.0.127.in-addr.arpa', 'PTR', ['other.posthorn.test']); // not forward-confirmed
  z.set('4.0.0.127.in-addr.arpa', 'PTR', ['relay.posthorn.test']); // confirmed, but not the EHLO name
  z.set('relay.posthorn.test', 'A', ['127.0.0.4']);
  // A blocklist listing 127.0.0.3 (RFC 5782 §2.1: A 127.0.0.x and a TXT reason), another refusing.
  z.set('3.0.0.127.bl.dnsbl.test', 'A', ['127.0.0.2']);
  z.set('3.0.0.127.bl.dnsbl.test', 'TXT', ['Listed: see https://dnsbl.test/lookup?ip=127.0.0.3']);
  z.fail('2.0.0.127.broken.dnsbl.test', 'SERVFAIL');
  z.fail('3.0.0.127.broken.dnsbl.test', 'SERVFAIL');
  z.fail('4.0.0.127.broken.dnsbl.test', 'SERVFAIL');
  z.set('spammy.test.dbl.dnsbl.test', 'A', ['127.0.1.2']);
  z.set('2.0.0.127.hijack.dnsbl.test', 'A', ['203.0.113.80']); // a resolver rewriting NXDOMAIN
});
afterAll(async () => {
  resolver.close();
  await dns.close();
});

describe('names', () => {
  test('reverse names and blocklist names of IPv4 and IPv6 addresses (RFC 1035 §3.5, RFC 3596 §2.5, RFC 5782 §2.4)', () => {
    expect(reverseName('192.0.2.7')).toBe('7.2.0.192.in-addr.arpa');
    expect(reverseName('2001:db8::1')).toBe('1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa');
    expect(blocklistName('192.0.2.7', 'zen.spamhaus.org')).toBe('7.2.0.192.zen.spamhaus.org');
    expect(() => reverseName('not-an-ip')).toThrow();
  });

  test.each([
    ['localhost', true],
    ['LOCALHOST.', true],
    ['mail', true],
    ['192.0.2.7', true],
    ['[::1]', true],
    ['box.local', true],
    ['mail.example.com', false],
  ])('a mail host name %s is unusable: %p', (name, bad) => {
    expect(unusableHostname(name) !== null).toBe(bad);
  });
});

describe('the machine', () => {
  test('smtp.hostname: localhost fails with the fix; a name with an address passes; one without fails', async () => {
    const local = await hostnameCheck(config({ 'smtp.hostname': 'localhost' }), resolver);
    expect(local).toMatchObject({ name: 'smtp_hostname', status: 'fail' });
    expect(local.fix).toContain('smtp.hostname');
    expect(await hostnameCheck(config(), resolver)).toMatchObject({ status: 'pass', evidence: 'mx.posthorn.test resolves to 127.0.0.2' });
    expect((await hostnameCheck(config({ 'smtp.hostname': 'nowhere.posthorn.test' }), resolver)).status).toBe('fail');
  });

  test('public_url: loopback warns before any domain, fails after; plain http warns; https passes', () => {
    expect(publicUrlCheck(config({ public_url: 'http://localhost:3000' }), 0).status).toBe('warn');
    expect(publicUrlCheck(config({ public_url: 'http://localhost:3000' }), 1).status).toBe('fail');
    expect(publicUrlCheck(config({ public_url: 'http://posthorn.example.test' }), 1).status).toBe('warn');
    expect(publicUrlCheck(config(), 1).status).toBe('pass');
  });

  test('the start-up warning names localhost and its fix; a good configuration prints nothing', () => {
    const problems = startupProblems(config({ 'smtp.hostname': 'localhost', public_url: 'http://localhost:3000' }), 2);
    expect(problems.map((p) => p.name)).toEqual(['smtp_hostname', 'public_url']);
    expect(formatStartupWarning(problems)).toContain('Fix: Set smtp.hostname (POSTHORN_SMTP_HOSTNAME)');
    expect(startupProblems(config(), 2)).toEqual([]);
    expect(formatStartupWarning([])).toBe('');
  });

  test('sending addresses: public unicast ones of non-internal interfaces; behind NAT a warning', () => {
    const found = discoverAddresses({
      lo: [{ address: '127.0.0.1', family: 'IPv4', internal: true, netmask: '255.0.0.0', mac: '', cidr: null }],
      eth0: [
        { address: '10.0.0.5', family: 'IPv4', internal: false, netmask: '255.0.0.0', mac: '', cidr: null },
        { address: '8.8.4.4', family: 'IPv4', internal: false, netmask: '255.255.255.0', mac: '', cidr: null },
        { address: 'fe80::1%eth0', family: 'IPv6', internal: false, netmask: 'ffff::', mac: '', cidr: null, scopeid: 2 },
      ],
    });
    expect(found).toEqual({ public: ['8.8.4.4'], private: ['10.0.0.5', 'fe80::1%eth0'] });
    expect(addressesCheck(found).status).toBe('pass');
    expect(addressesCheck({ public: [], private: ['10.0.0.5'] })).toMatchObject({ status: 'warn', evidence: expect.stringContaining('only 10.0.0.5') });
  });

  test('reverse DNS: forward-confirmed to the EHLO name passes; missing, unconfirmed or another name do not', async () => {
    const c = config();
    expect(await reverseDnsCheck('127.0.0.2', c, resolver)).toMatchObject({
      name: 'ptr:127.0.0.2',
      status: 'pass',
      evidence: '127.0.0.2 → mx.posthorn.test → 127.0.0.2',
    });
    expect(await reverseDnsCheck('127.0.0.3', c, resolver)).toMatchObject({ status: 'fail', evidence: expect.stringContaining('not forward-confirmed') });
    expect(await reverseDnsCheck('127.0.0.4', c, resolver)).toMatchObject({ status: 'warn', evidence: expect.stringContaining('EHLO says mx.posthorn.test') });
    expect(await reverseDnsCheck('127.0.0.9', c, resolver)).toMatchObject({ status: 'fail', evidence: '127.0.0.9 has no PTR record' });
  });

  test('certificate: for the host from a CA passes; self-signed warns; another name or near expiry fails', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'posthorn-cert-'));
    const write = (name: string, pem: string) => {
      writeFileSync(join(dir, name), pem);
      return join(dir, name);
    };
    const ca = await testCa();
    const good = await ca.issue(['mx.posthorn.test']);
    const files = (p: { key: string; cert: string }, n: string) => ({ 'smtp.tls_cert': write(`${n}.crt`, p.cert), 'smtp.tls_key': write(`${n}.key`, p.key) });
    expect(certificateCheck(config(files(good, 'good'))).status).toBe('pass');
    const other = await ca.issue(['else.posthorn.test']);
    expect(certificateCheck(config(files(other, 'other')))).toMatchObject({
      status: 'fail',
      evidence: expect.stringContaining('does not name mx.posthorn.test'),
    });
    const self = await generate([{ name: 'commonName', value: 'mx.posthorn.test' }], {
      extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: 'mx.posthorn.test' }] }],
    });
    expect(certificateCheck(config(files({ key: self.private, cert: self.cert }, 'self'))).status).toBe('warn');
    // 5 days before expiry (the check's clock moved on): fail; 15 days: warn.
    const notAfter = Date.parse(new (await import('node:crypto')).X509Certificate(good.cert).validTo);
    expect(certificateCheck(config(files(good, 'good')), notAfter - 5 * 86_400_000).status).toBe('fail');
    expect(certificateCheck(config(files(good, 'good')), notAfter - 15 * 86_400_000).status).toBe('warn');
    expect(certificateCheck(config({ data_dir: dir })).status).toBe('warn'); // none generated yet
  });

  test('outbound port 25: an MX that greets passes; a closed port fails; unset warns; relay mode needs none', async () => {
    const sink = await startSink();
    try {
      expect(await port25Check(config({ 'deliverability.port25_probe': `127.0.0.1:${sink.port}` }))).toMatchObject({
        status: 'pass',
        evidence: expect.stringContaining('answered "220'),
      });
    } finally {
      await sink.close();
    }
    const closed = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const port = (s.address() as { port: number }).port;
        s.close(() => resolve(port));
      });
    });
    expect(await port25Check(config({ 'deliverability.port25_probe': `127.0.0.1:${closed}` }))).toMatchObject({
      status: 'fail',
      evidence: expect.stringContaining('ECONNREFUSED'),
    });
    expect((await port25Check(config())).status).toBe('warn');
    expect((await port25Check(config({ 'delivery.mode': 'relay', 'delivery.relay_url': 'smtp://127.0.0.1:2525' }))).status).toBe('pass');
  });
});

describe('blocklists', () => {
  const zones = (ip: string[], domain: string[] = []) => config({ 'deliverability.dnsbl.ip_zones': ip, 'deliverability.dnsbl.domain_zones': domain });

  test("a listed address fails with the code and the list's reason; a clean one passes", async () => {
    expect(await ipBlocklistCheck('127.0.0.3', zones(['bl.dnsbl.test']), resolver)).toMatchObject({
      name: 'dnsbl:127.0.0.3',
      status: 'fail',
      evidence: '127.0.0.3 is listed on bl.dnsbl.test (127.0.0.2: Listed: see https://dnsbl.test/lookup?ip=127.0.0.3)',
    });
    expect(await ipBlocklistCheck('127.0.0.2', zones(['bl.dnsbl.test']), resolver)).toMatchObject({ status: 'pass' });
  });

  test('a list that fails or answers outside 127/8 is unknown: never listed, never clean', async () => {
    expect(await askZone(resolver, '2.0.0.127.broken.dnsbl.test', 'broken.dnsbl.test')).toMatchObject({ status: 'unknown' });
    expect(await askZone(resolver, '2.0.0.127.hijack.dnsbl.test', 'hijack.dnsbl.test')).toMatchObject({ status: 'unknown' });
    const r = await ipBlocklistCheck('127.0.0.2', zones(['bl.dnsbl.test', 'broken.dnsbl.test']), resolver);
    expect(r).toMatchObject({ status: 'warn', evidence: expect.stringContaining('not listed on bl.dnsbl.test; unknown on broken.dnsbl.test') });
  });

  test('a zone that answers REFUSED, never answers (timeout) or answers a refusal code is unknown', async () => {
    dns.zone.fail('5.0.0.127.bl.dnsbl.test', 'REFUSED');
    dns.zone.fail('6.0.0.127.bl.dnsbl.test', 'DROP');
    dns.zone.set('7.0.0.127.zen.spamhaus.org', 'A', ['127.255.255.254']); // "query through a public resolver"
    expect(await askZone(resolver, '5.0.0.127.bl.dnsbl.test', 'bl.dnsbl.test')).toMatchObject({ status: 'unknown' });
    expect(await askZone(resolver, '6.0.0.127.bl.dnsbl.test', 'bl.dnsbl.test')).toMatchObject({ status: 'unknown' });
    expect(await askZone(resolver, '7.0.0.127.zen.spamhaus.org', 'zen.spamhaus.org')).toMatchObject({ status: 'unknown' });
  });

  test("refusal codes are not listings (Spamhaus 127.255.255.x, DBL's 127.0.1.255, URIBL/SURBL 127.0.0.1)", () => {
    expect(isRefusal('zen.spamhaus.org', '127.255.255.254')).toBe(true);
    expect(isRefusal('dbl.spamhaus.org', '127.0.1.255')).toBe(true);
    expect(isRefusal('multi.uribl.com', '127.0.0.1')).toBe(true);
    expect(isRefusal('multi.surbl.org', '127.0.0.1')).toBe(true);
    expect(isRefusal('zen.spamhaus.org', '127.0.0.2')).toBe(false);
    expect(isRefusal('dbl.spamhaus.org', '127.0.1.2')).toBe(false);
  });

  test("a Spamhaus DQS key moves the Spamhaus zones to the key's own", () => {
    expect(queriedZones(['zen.spamhaus.org', 'dbl.spamhaus.org', 'bl.spamcop.net'], 'abc123')).toEqual([
      { zone: 'zen.spamhaus.org', query: 'abc123.zen.dq.spamhaus.net' },
      { zone: 'dbl.spamhaus.org', query: 'abc123.dbl.dq.spamhaus.net' },
      { zone: 'bl.spamcop.net', query: 'bl.spamcop.net' },
    ]);
  });

  test("a listing's codes are decoded from the zone table, bitmask zones included; unknown zones say the code", () => {
    expect(codeMeaning('zen.spamhaus.org', ['127.0.0.2', '127.0.0.4'])).toBe('SBL: a known spam source; XBL: exploited or infected host');
    expect(codeMeaning('multi.surbl.org', ['127.0.0.24'])).toBe('SURBL phishing, SURBL malware');
    expect(codeMeaning('bl.dnsbl.test', ['127.0.0.2'])).toBe('listed (127.0.0.2)');
    expect(zoneInfo('ZEN.spamhaus.org')?.delisting).toBe('https://check.spamhaus.org/');
  });

  test('a listed domain fails; a clean one passes', async () => {
    expect((await domainBlocklistCheck('spammy.test', zones([], ['dbl.dnsbl.test']), resolver)).status).toBe('fail');
    expect((await domainBlocklistCheck('clean.test', zones([], ['dbl.dnsbl.test']), resolver)).status).toBe('pass');
  });
});

describe('domain authentication', () => {
  const domain = (name: string) => ({ id: 'd1', team_id: 't1', name, custom_return_path: 'send' }) as unknown as DomainRec;

  test('SPF is evaluated (mailauth) for each sending address: an authorised one passes, another fails', async () => {
    dns.zone.set('send.spf.test', 'TXT', ['v=spf1 a:mx.posthorn.test ~all']);
    expect(await spfCheck(domain('spf.test'), ['127.0.0.2'], config(), resolver)).toMatchObject({ name: 'spf:spf.test', status: 'pass' });
    const r = await spfCheck(domain('spf.test'), ['127.0.0.2', '127.0.0.5'], config(), resolver);
    expect(r).toMatchObject({ status: 'fail', evidence: expect.stringContaining('127.0.0.5: softfail') });
    expect(r.fix).toContain('v=spf1 a:mx.posthorn.test ~all');
    expect((await spfCheck(domain('spf.test'), [], config(), resolver)).status).toBe('warn');
  });

  test('DMARC: none fails, p=none warns, p=reject without rua warns, p=quarantine with rua passes', async () => {
    expect((await dmarcCheck(domain('nodmarc.test'), resolver)).status).toBe('fail');
    dns.zone.set('_dmarc.watch.test', 'TXT', ['v=DMARC1; p=none; rua=mailto:d@watch.test']);
    expect((await dmarcCheck(domain('watch.test'), resolver)).status).toBe('warn');
    dns.zone.set('_dmarc.norua.test', 'TXT', ['v=DMARC1; p=reject']);
    expect(await dmarcCheck(domain('norua.test'), resolver)).toMatchObject({
      status: 'warn',
      evidence: expect.stringContaining('nobody receives aggregate reports'),
    });
    dns.zone.set('_dmarc.strict.test', 'TXT', ['v=DMARC1; p=quarantine; adkim=s; rua=mailto:d@strict.test']);
    expect(await dmarcCheck(domain('strict.test'), resolver)).toMatchObject({
      status: 'pass',
      evidence: '_dmarc of strict.test: p=quarantine, adkim=s, aspf=r, rua=mailto:d@strict.test',
    });
  });
});
