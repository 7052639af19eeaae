// MTA-STS (RFC 8461) and TLS-RPT data (RFC 8460) in direct delivery (docs/mail.md §3.2), end to
// end on loopback: policies served over HTTPS by a policy host with a certificate from a test CA,
// `_mta-sts` records and MX hosts in the test DNS, and destination MTAs on three loopback addresses
// sharing one port — one with a certificate from the CA, one without STARTTLS, one self-signed.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { startPosthorn, type Running } from '../helpers/posthorn';
import { startDnsServer, type TestDns } from '../helpers/dns';
import { startSink, type Sink } from '../helpers/sink';
import { testCa } from '../helpers/pki';
import { startPolicyServer, type PolicyServer } from '../helpers/mta-sts';
import { verifiedDomain, queueEmail, waitForEmail, settled } from '../helpers/emails';
import { parsePolicy, mxAllowed, policyId, tlsResultType } from '../../src/mail/mta-sts';
import { MtaSts, STORED_MEMO_MS } from '../../src/delivery/mta-sts';
import type { DomainRec, EmailRec, Store } from '../../src/store';

/** A row of GET /tls-reports, as far as these tests read it. */
interface TlsReportRow {
  id: string;
  policy_domain: string;
  summary: unknown;
  'failure-details': unknown;
}

describe('policy records and files (mailauth, strict)', () => {
  test('a policy file: version, mode, mx patterns, max_age; anything else refused with the reason', () => {
    expect(parsePolicy('version: STSv1\r\nmode: enforce\r\nmx: mx1.example.test\r\nmx: *.example.net\r\nmax_age: 604800\r\n')).toEqual({
      mode: 'enforce',
      mx: ['mx1.example.test', '*.example.net'],
      max_age: 604800,
    });
    expect(parsePolicy('version: STSv1\nmode: none\nmax_age: 0\n')).toEqual({ mode: 'none', mx: [], max_age: 0 });
    expect(() => parsePolicy('version: STSv2\nmode: enforce\nmx: a.test\nmax_age: 1\n')).toThrow(/version/);
    expect(() => parsePolicy('version: STSv1\nmode: enforcing\nmx: a.test\nmax_age: 1\n')).toThrow(/mode/);
    expect(() => parsePolicy('version: STSv1\nmode: enforce\nmax_age: 1\n')).toThrow(/mx/);
    expect(() => parsePolicy('version: STSv1\nmode: enforce\nmx: a.test\nmax_age: 31557601\n')).toThrow(/max_age/);
  });

  test('MX patterns match a name exactly, or one label in place of the `*` (RFC 8461 §4.1)', () => {
    const policy = { mode: 'enforce' as const, mx: ['mx.example.test', '*.example.net'] };
    expect(mxAllowed('MX.example.test.', policy)).toBe(true);
    expect(mxAllowed('a.example.net', policy)).toBe(true);
    expect(mxAllowed('a.b.example.net', policy)).toBe(false);
    expect(mxAllowed('example.net', policy)).toBe(false);
    expect(mxAllowed('mx2.example.test', policy)).toBe(false);
  });

  test('the TXT record: exactly one v=STSv1 record with an id, else no policy', async () => {
    const txt = (records: string[]) => async () => records.map((r) => [r]);
    expect(await policyId('a.test', txt(['v=STSv1; id=20240101T000000;']))).toBe('20240101T000000');
    expect(await policyId('a.test', txt(['v=spf1 -all', 'v=STSv1; id=abc']))).toBe('abc');
    expect(await policyId('a.test', txt(['v=STSv1; id=a', 'v=STSv1; id=b']))).toBeNull();
    expect(await policyId('a.test', txt(['v=STSv1; id=not-alnum!']))).toBeNull();
    expect(await policyId('a.test', txt([]))).toBeNull();
  });

  test('TLS failures are named as RFC 8460 §4.3 names them', () => {
    expect(tlsResultType('STARTTLS_MISSING')).toBe('starttls-not-supported');
    expect(tlsResultType('ERR_TLS_CERT_ALTNAME_INVALID')).toBe('certificate-host-mismatch');
    expect(tlsResultType('CERT_HAS_EXPIRED')).toBe('certificate-expired');
    expect(tlsResultType('DEPTH_ZERO_SELF_SIGNED_CERT')).toBe('certificate-not-trusted');
    expect(tlsResultType('SOMETHING_ELSE')).toBe('validation-failure');
  });
});

const POLICY = (mode: string, ...mx: string[]) => `version: STSv1\nmode: ${mode}\n${mx.map((m) => `mx: ${m}\n`).join('')}max_age: 86400\n`;

describe('delivery under MTA-STS policies', () => {
  let dns: TestDns;
  let sts: PolicyServer;
  let good: Sink; // 127.0.0.1: STARTTLS with a certificate from the test CA
  let plain: Sink; // 127.0.0.2: no STARTTLS
  let selfSigned: Sink; // 127.0.0.3: STARTTLS with a self-signed certificate
  let p: Running;
  let from: DomainRec;
  const domains = ['enforce.test', 'mismatch.test', 'selfsigned.test', 'wrongname.test', 'testing.test', 'broken.test', 'untrusted.test'];

  beforeAll(async () => {
    const ca = await testCa();
    dns = await startDnsServer();
    // The policy host's certificate names every policy host but untrusted.test's.
    sts = await startPolicyServer(await ca.issue(domains.filter((d) => d !== 'untrusted.test').map((d) => `mta-sts.${d}`)));
    good = await startSink({ certificate: await ca.issue(['mx.enforce.test', 'mx.mismatch.test', 'mx.testing.test', 'elsewhere.test']) });
    plain = await startSink({ tls: 'none', host: '127.0.0.2', port: good.port });
    selfSigned = await startSink({ host: '127.0.0.3', port: good.port });
    p = await startPosthorn({
      'dns.servers': [dns.address],
      'delivery.mx_port': good.port,
      'delivery.mta_sts.port': sts.port,
      'delivery.mta_sts.ca_file': ca.file,
      // The policy host is on loopback.
      'security.allow_private_networks': true,
      // A failed attempt waits an hour: the tests move it with POST /emails/{id}/retry.
      'delivery.retry_schedule': ['1h'],
    });
    from = await verifiedDomain(p, 'example.test', { dns });
    for (const d of domains) {
      dns.zone.set(`_mta-sts.${d}`, 'TXT', ['v=STSv1; id=1']);
      dns.zone.set(`mta-sts.${d}`, 'A', ['127.0.0.1']);
    }
    dns.zone.set('mx.enforce.test', 'A', ['127.0.0.1']);
    dns.zone.set('plain.enforce.test', 'A', ['127.0.0.2']);
    dns.zone.set('mx.mismatch.test', 'A', ['127.0.0.1']);
    dns.zone.set('elsewhere.test', 'A', ['127.0.0.1']);
    dns.zone.set('mx.selfsigned.test', 'A', ['127.0.0.3']);
    dns.zone.set('mx.wrongname.test', 'A', ['127.0.0.1']);
    dns.zone.set('mx.testing.test', 'A', ['127.0.0.2']);
    dns.zone.set('mx.broken.test', 'A', ['127.0.0.2']);
    dns.zone.set('mx.untrusted.test', 'A', ['127.0.0.2']);
  });
  afterAll(async () => {
    await p.stop();
    await Promise.all([good.close(), plain.close(), selfSigned.close(), sts.close(), dns.close()]);
  });

  const send = (to: string) => queueEmail(p.svc, from, { to: [to] });
  const delayed = (to: string) => (e: EmailRec) => e.recipients[to] === 'delayed';
  const lastAttempt = (e: EmailRec) => e.attempts!.at(-1)!;
  const report = async (domain: string) => ((await p.api('GET', '/tls-reports?limit=100')).body.data as TlsReportRow[]).find((r) => r.policy_domain === domain);
  const retry = async (e: EmailRec) => expect((await p.api('POST', `/emails/${e.id}/retry`)).status).toBe(200);

  test('enforce refuses an MX without STARTTLS (4.7.10, retried), then delivers over verified TLS to a matching MX', async () => {
    sts.serve('enforce.test', POLICY('enforce', '*.enforce.test'));
    dns.zone.set('enforce.test', 'MX', [{ exchange: 'plain.enforce.test', priority: 10 }]);
    const email = await send('ann@enforce.test');
    const waiting = await waitForEmail(p.svc, email, delayed('ann@enforce.test'));
    expect(lastAttempt(waiting)).toMatchObject({
      host: null,
      mta_sts: 'enforce',
      results: [{ recipient: 'ann@enforce.test', code: 451, enhanced_code: '4.7.10' }],
    });
    expect(lastAttempt(waiting).results[0]!.reply).toContain('MTA-STS policy requires TLS');
    expect(plain.to('ann@enforce.test')).toEqual([]);
    expect(await report('enforce.test')).toMatchObject({
      policy: {
        'policy-type': 'sts',
        'policy-domain': 'enforce.test',
        'mx-host': ['*.enforce.test'],
        'policy-string': ['version: STSv1', 'mode: enforce', 'mx: *.enforce.test', 'max_age: 86400'],
      },
      summary: { 'total-successful-session-count': 0, 'total-failure-session-count': 1 },
      'failure-details': [
        {
          'result-type': 'starttls-not-supported',
          'receiving-mx-hostname': 'plain.enforce.test',
          'failed-session-count': 1,
          'failure-reason-code': 'STARTTLS_MISSING',
        },
      ],
    });
    // The domain moves its MX to a host with a valid certificate: the retry goes there, over TLS.
    dns.zone.set('enforce.test', 'MX', [{ exchange: 'mx.enforce.test', priority: 10 }]);
    await retry(email);
    const done = await waitForEmail(p.svc, email, settled);
    expect(done.recipients).toEqual({ 'ann@enforce.test': 'delivered' });
    expect(lastAttempt(done)).toMatchObject({ host: 'mx.enforce.test', tls: true, mta_sts: 'enforce' });
    expect(good.to('ann@enforce.test')[0]!.secure).toBe(true);
    expect((await report('enforce.test'))!.summary).toEqual({ 'total-successful-session-count': 1, 'total-failure-session-count': 1 });
    // Fetched once, kept in the store under its id for its max_age.
    expect(sts.fetches('enforce.test')).toBe(1);
    expect(await p.svc.store.mtaSts.get('enforce.test')).toMatchObject({ id: '1', mode: 'enforce', mx: ['*.enforce.test'], max_age: 86400 });
  });

  test('enforce refuses an MX the policy does not name, and ones whose certificate does not verify (untrusted, another name)', async () => {
    sts.serve('mismatch.test', POLICY('enforce', 'mx.mismatch.test'));
    dns.zone.set('mismatch.test', 'MX', [{ exchange: 'elsewhere.test', priority: 10 }]);
    sts.serve('selfsigned.test', POLICY('enforce', 'mx.selfsigned.test'));
    dns.zone.set('selfsigned.test', 'MX', [{ exchange: 'mx.selfsigned.test', priority: 10 }]);
    // The CA's certificate of the good MTA does not name mx.wrongname.test.
    sts.serve('wrongname.test', POLICY('enforce', 'mx.wrongname.test'));
    dns.zone.set('wrongname.test', 'MX', [{ exchange: 'mx.wrongname.test', priority: 10 }]);
    const a = await send('bob@mismatch.test');
    const b = await send('cy@selfsigned.test');
    const c = await send('dan@wrongname.test');
    expect(lastAttempt(await waitForEmail(p.svc, c, delayed('dan@wrongname.test'))).results[0]!).toMatchObject({ code: 451, enhanced_code: '4.7.10' });
    expect(good.to('dan@wrongname.test')).toEqual([]);
    const ra = lastAttempt(await waitForEmail(p.svc, a, delayed('bob@mismatch.test'))).results[0]!;
    expect(ra).toMatchObject({ code: 451, enhanced_code: '4.7.10' });
    expect(ra.reply).toContain('elsewhere.test: not an MX host the MTA-STS policy of mismatch.test allows');
    const rb = lastAttempt(await waitForEmail(p.svc, b, delayed('cy@selfsigned.test'))).results[0]!;
    expect(rb).toMatchObject({ code: 451, enhanced_code: '4.7.10' });
    expect(good.to('bob@mismatch.test')).toEqual([]);
    expect(selfSigned.to('cy@selfsigned.test')).toEqual([]);
    expect((await report('mismatch.test'))!['failure-details']).toEqual([
      { 'result-type': 'validation-failure', 'receiving-mx-hostname': 'elsewhere.test', 'failed-session-count': 1, 'failure-reason-code': 'MX_NOT_IN_POLICY' },
    ]);
    expect((await report('selfsigned.test'))!['failure-details']).toEqual([
      {
        'result-type': 'certificate-not-trusted',
        'receiving-mx-hostname': 'mx.selfsigned.test',
        'failed-session-count': 1,
        'failure-reason-code': 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
      },
    ]);
    expect((await report('wrongname.test'))!['failure-details']).toEqual([
      {
        'result-type': 'certificate-host-mismatch',
        'receiving-mx-hostname': 'mx.wrongname.test',
        'failed-session-count': 1,
        'failure-reason-code': 'ERR_TLS_CERT_ALTNAME_INVALID',
      },
    ]);
  });

  test('testing delivers as usual and records what enforce would have refused', async () => {
    sts.serve('testing.test', POLICY('testing', 'mx.testing.test'));
    dns.zone.set('testing.test', 'MX', [{ exchange: 'mx.testing.test', priority: 10 }]);
    const email = await send('dee@testing.test');
    const done = await waitForEmail(p.svc, email, settled);
    expect(done.recipients).toEqual({ 'dee@testing.test': 'delivered' });
    expect(lastAttempt(done)).toMatchObject({ host: 'mx.testing.test', tls: false, mta_sts: 'testing' });
    expect(plain.to('dee@testing.test')).toHaveLength(1);
    expect(await report('testing.test')).toMatchObject({
      policy: { 'policy-type': 'sts' },
      summary: { 'total-successful-session-count': 0, 'total-failure-session-count': 1 },
      'failure-details': [{ 'result-type': 'starttls-not-supported', 'receiving-mx-hostname': 'mx.testing.test', 'receiving-ip': '127.0.0.2' }],
    });
  });

  test('a policy that cannot be fetched is delivered without one, and recorded (no policy found)', async () => {
    sts.serve('broken.test', null, { status: 404 });
    dns.zone.set('broken.test', 'MX', [{ exchange: 'mx.broken.test', priority: 10 }]);
    dns.zone.set('untrusted.test', 'MX', [{ exchange: 'mx.untrusted.test', priority: 10 }]);
    sts.serve('untrusted.test', POLICY('enforce', 'mx.untrusted.test'));
    const a = await send('eve@broken.test');
    const b = await send('fay@untrusted.test');
    expect((await waitForEmail(p.svc, a, settled)).recipients).toEqual({ 'eve@broken.test': 'delivered' });
    expect((await waitForEmail(p.svc, b, settled)).recipients).toEqual({ 'fay@untrusted.test': 'delivered' });
    expect(lastAttempt(await waitForEmail(p.svc, a, settled)).mta_sts).toBeNull();
    expect(await report('broken.test')).toMatchObject({
      policy: { 'policy-type': 'no-policy-found', 'policy-string': [], 'mx-host': [] },
      summary: { 'total-successful-session-count': 0, 'total-failure-session-count': 1 },
      'failure-details': [{ 'result-type': 'sts-policy-fetch-error', 'failure-reason-code': 'HTTP status 404' }],
    });
    // The policy host's certificate does not name mta-sts.untrusted.test (RFC 8460 §4.3.2.2).
    expect((await report('untrusted.test'))!['failure-details']).toEqual([
      { 'result-type': 'sts-webpki-invalid', 'failed-session-count': 1, 'failure-reason-code': 'ERR_TLS_CERT_ALTNAME_INVALID' },
    ]);
    expect(await p.svc.store.mtaSts.get('broken.test')).toBeUndefined();
  });

  test('a stored policy outlives its TXT record; a new id fetches the policy again', async () => {
    // enforce.test's policy (test 1) is stored; the record goes and the MX is plain text again.
    dns.zone.clear('_mta-sts.enforce.test', 'TXT');
    dns.zone.set('enforce.test', 'MX', [{ exchange: 'plain.enforce.test', priority: 10 }]);
    const email = await send('gus@enforce.test');
    expect(lastAttempt(await waitForEmail(p.svc, email, delayed('gus@enforce.test'))).results[0]!.enhanced_code).toBe('4.7.10');
    // A new id: the domain now publishes a testing policy, which is fetched and applied.
    sts.serve('enforce.test', POLICY('testing', '*.enforce.test'));
    dns.zone.set('_mta-sts.enforce.test', 'TXT', ['v=STSv1; id=2']);
    await retry(email);
    const done = await waitForEmail(p.svc, email, settled);
    expect(done.recipients).toEqual({ 'gus@enforce.test': 'delivered' });
    expect(lastAttempt(done)).toMatchObject({ host: 'plain.enforce.test', tls: false, mta_sts: 'testing' });
    expect(sts.fetches('enforce.test')).toBe(2);
    expect(await p.svc.store.mtaSts.get('enforce.test')).toMatchObject({ id: '2', mode: 'testing' });
  });

  test("a domain's stored policy is read once a minute, not at every attempt; a newer one stored elsewhere is seen after that", async () => {
    // The store as the delivery engine has it, its policy reads counted.
    const store = p.svc.store;
    let reads = 0;
    const counted = Object.create(store, {
      mtaSts: {
        value: {
          get: (d: string) => {
            reads++;
            return store.mtaSts.get(d);
          },
        },
      },
    }) as Store;
    let clock = Date.now();
    const policies = new MtaSts({ store: counted, dns: p.svc.dns, ca: [], port: sts.port, allowPrivate: true, now: () => clock });
    // No record and nothing stored: no policy, and the answer that none is stored is kept.
    expect((await policies.lookup('memo.test')).policy).toBeNull();
    expect((await policies.lookup('memo.test')).policy).toBeNull();
    expect(reads).toBe(1);
    // Another node stores one (as a fetch of its own would): seen once the memory is a minute old.
    const at = Date.now();
    const stored = { domain: 'memo.test', id: '9', ...parsePolicy(POLICY('enforce', 'mx.memo.test')), fetched_at: at, expires_at: at + 86_400_000 };
    await store.write(async (tx) => tx.mtaSts.put({ ...stored, text: POLICY('enforce', 'mx.memo.test') }));
    clock += STORED_MEMO_MS - 1;
    expect((await policies.lookup('memo.test')).policy).toBeNull();
    clock += 1;
    expect((await policies.lookup('memo.test')).policy).toMatchObject({ id: '9', mode: 'enforce' });
    expect(reads).toBe(2);
  });

  test('GET /tls-reports: newest day first, policy domains in order; pages, filters and bad input', async () => {
    const all = (await p.api('GET', '/tls-reports?limit=100')).body;
    expect(all.object).toBe('list');
    const ids = (all.data as TlsReportRow[]).map((r) => r.id);
    const today = new Date().toISOString().slice(0, 10);
    expect(ids).toEqual([...domains].sort().map((d) => `${today}/${d}`));
    const first = (await p.api('GET', '/tls-reports?limit=2')).body;
    expect(first).toMatchObject({ has_more: true, data: [{ id: ids[0] }, { id: ids[1] }] });
    const next = (await p.api('GET', `/tls-reports?limit=2&after=${ids[1]}`)).body;
    expect(next.data.map((r: TlsReportRow) => r.id)).toEqual(ids.slice(2, 4));
    expect((await p.api('GET', `/tls-reports?since=${today}&until=${today}`)).body.data).toHaveLength(domains.length);
    expect((await p.api('GET', '/tls-reports?until=2000-01-01')).body).toEqual({ object: 'list', has_more: false, data: [] });
    for (const bad of ['since=2024-02-30', 'until=yesterday', 'limit=0', 'after=nope', 'before=2024-01-01/a.test'])
      expect((await p.api('GET', `/tls-reports?${bad}`)).status).toBe(422);
    // Another team sees none of it.
    const other = await p.newTeam();
    expect((await p.api('GET', '/tls-reports', { key: other.api_key })).body.data).toEqual([]);
  });
});
