// TLS-RPT reports sent (RFC 8460 §4–5; docs/deliverability.md §5): a day's TLS sessions to an
// MTA-STS domain, recorded for two teams, go once to the `rua` of the domain's TLSRPT record — by
// mail to an smtp-server sink (parsed back: subject, headers, multipart/report, the gzipped JSON's
// fields) and by HTTPS POST to a loopback server — and a second run sends nothing.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { gunzipSync } from 'node:zlib';
import { simpleParser } from 'mailparser';
import { startMailWorld, type MailWorld } from '../helpers/world';
import { testCa } from '../helpers/pki';
import { until } from '../helpers/wait';

let world: MailWorld;
const posts: { type: string | null; body: Uint8Array }[] = [];
let https: ReturnType<typeof Bun.serve>;
const DAY = '2026-11-20';
const NOW = Date.parse('2026-11-21T03:00:00Z');

beforeAll(async () => {
  const ca = await testCa();
  const cert = await ca.issue(['reports.dest.test']);
  https = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    tls: cert,
    async fetch(req) {
      posts.push({ type: req.headers.get('content-type'), body: new Uint8Array(await req.arrayBuffer()) });
      return new Response(null, { status: 201 });
    },
  });
  world = await startMailWorld({ 'deliverability.tlsrpt_from': 'tls-reports@example.test', 'delivery.mta_sts.ca_file': ca.file });
  const { dns } = world;
  dns.zone.set('reports.dest.test', 'A', ['127.0.0.1']);
  dns.zone.set('_smtp._tls.dest.test', 'TXT', [`v=TLSRPTv1; rua=mailto:tlsrpt@dest.test,https://reports.dest.test:${https.port}/v1/tlsrpt`]);
  // A domain without a TLSRPT record gets no report.
  dns.zone.set('quiet.test', 'MX', [{ exchange: 'mx.dest.test', priority: 10 }]);
  const policy = { type: 'sts' as const, string: ['version: STSv1', 'mode: enforce', 'mx: mx.dest.test', 'max_age: 86400'], mx_host: ['mx.dest.test'] };
  const failure = {
    result_type: 'certificate-expired' as const,
    receiving_mx_hostname: 'mx.dest.test',
    receiving_ip: '127.0.0.1',
    failure_reason_code: null,
    count: 2,
  };
  const other = await world.p.newTeam();
  await world.p.svc.store.write(async (tx) => {
    tx.tlsReports.add(world.p.creds.team_id, DAY, 'dest.test', policy, 5, [failure]);
    tx.tlsReports.add(other.team_id, DAY, 'dest.test', policy, 7, [{ ...failure, count: 1 }]);
    tx.tlsReports.add(world.p.creds.team_id, DAY, 'quiet.test', policy, 3, []);
  });
});
afterAll(async () => {
  await world.stop();
  await https.stop(true);
});

describe('TLS-RPT reports (RFC 8460)', () => {
  test("yesterday's report is mailed and posted once, with RFC 8460's fields", async () => {
    const sent = await world.p.svc.tlsRpt.sendDue(NOW);
    expect(sent).toEqual(['dest.test']);
    await world.sink.waitFor(1);
    await until(async () => posts.length === 1, 'the HTTPS POST');

    const msg = world.sink.messages.find((m) => m.rcptTo.includes('tlsrpt@dest.test'))!;
    expect(msg).toBeDefined();
    const mail = await simpleParser(msg.raw);
    const reportId = /Report-ID: <([0-9a-f-]{36})>$/.exec(mail.subject ?? '')?.[1];
    expect(mail.subject).toBe(`Report Domain: dest.test Submitter: mx.posthorn.test Report-ID: <${reportId}>`);
    expect(mail.headers.get('tls-report-domain')).toBe('dest.test');
    expect(mail.headers.get('tls-report-submitter')).toBe('mx.posthorn.test');
    expect(mail.headers.get('content-type')).toMatchObject({ value: 'multipart/report', params: { 'report-type': 'tlsrpt' } });
    expect(mail.headers.get('dkim-signature')).toBeDefined();
    expect(mail.from?.value[0]?.address).toBe('tls-reports@example.test');
    const [att] = mail.attachments;
    expect(att!.contentType).toBe('application/tlsrpt+gzip');
    const begin = Date.parse(`${DAY}T00:00:00Z`) / 1000;
    expect(att!.filename).toBe(`mx.posthorn.test!dest.test!${begin}!${begin + 86399}!${reportId}.json.gz`);

    const report = JSON.parse(gunzipSync(att!.content).toString('utf8'));
    expect(report).toEqual({
      'organization-name': 'example.test',
      'date-range': { 'start-datetime': `${DAY}T00:00:00Z`, 'end-datetime': `${DAY}T23:59:59Z` },
      'contact-info': 'tls-reports@example.test',
      'report-id': reportId,
      policies: [
        {
          policy: {
            'policy-type': 'sts',
            'policy-string': ['version: STSv1', 'mode: enforce', 'mx: mx.dest.test', 'max_age: 86400'],
            'policy-domain': 'dest.test',
            'mx-host': ['mx.dest.test'],
          },
          // Both teams' sessions, added up: the install is one sending MTA.
          summary: { 'total-successful-session-count': 12, 'total-failure-session-count': 3 },
          'failure-details': [
            { 'result-type': 'certificate-expired', 'receiving-mx-hostname': 'mx.dest.test', 'receiving-ip': '127.0.0.1', 'failed-session-count': 3 },
          ],
        },
      ],
    });

    // §5.4: the same report, gzipped, as application/tlsrpt+gzip.
    expect(posts[0]!.type).toBe('application/tlsrpt+gzip');
    expect(JSON.parse(gunzipSync(posts[0]!.body).toString('utf8'))).toEqual(report);

    // The marker: once per day and policy domain, with each address's outcome.
    const marker = await world.p.svc.store.tlsReportsSent.find('report', `${DAY} dest.test`);
    expect(marker).toMatchObject({ day: DAY, policy_domain: 'dest.test', report_id: reportId });
    expect(marker!.deliveries.map((d) => d.rua)).toEqual(['mailto:tlsrpt@dest.test', `https://reports.dest.test:${https.port}/v1/tlsrpt`]);
    expect(marker!.deliveries[1]!.outcome).toBe('HTTP 201');
  });

  test('a second run, on this node or another, sends nothing', async () => {
    expect(await world.p.svc.tlsRpt.sendDue(NOW + 3_600_000)).toEqual([]);
    expect(world.sink.messages.filter((m) => m.rcptTo.includes('tlsrpt@dest.test'))).toHaveLength(1);
    expect(posts).toHaveLength(1);
  });
});
