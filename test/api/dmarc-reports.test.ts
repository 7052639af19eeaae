// DMARC aggregate reports (docs/deliverability.md §4): reports in Google's (zip), Microsoft's and
// Yahoo's (gzip) shapes are mailed over SMTP, as the providers do, to the `rua` of the DMARC record
// Posthorn recommends, and appear in GET /domains/{id}/dmarc — sources with PTR, volume, alignment,
// Posthorn's own addresses, the series and the policy step. A report mailed twice is kept once; a
// zip bomb and malformed XML are refused, counted in /metrics and stored nowhere.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync, zipSync } from 'fflate';
import { mta, inboundProcessed, type RunningSmtp } from '../helpers/smtp';
import { startMailWorld, type MailWorld } from '../helpers/world';
import { expandAttachment, DmarcReportError, MAX_XML, OVERSHOOT, readDmarcAttachment } from '../../src/mail/dmarc-report';
import { dmarcRecipients } from '../../src/inbound/dmarc-reports';
import { dmarcRua } from '../../src/domains/records';

const FIXTURES = join(import.meta.dir, '..', 'fixtures', 'dmarc');
const DAY = 86_400;
const OWN_IP = '127.0.0.1';
const OTHER_IP = '192.0.2.10';

let world: MailWorld;
let s: RunningSmtp;
let domainId: string;
const RUA = 'dmarc-reports@send.example.test';

beforeAll(async () => {
  world = await startMailWorld({}, { smtp: true });
  s = world.smtp!;
  domainId = world.domain.id;
  // Posthorn's own address: what smtp.hostname resolves to; its PTR and the other source's none.
  world.dns.zone.set('mx.posthorn.test', 'A', [OWN_IP]);
  world.dns.zone.set('1.0.0.127.in-addr.arpa', 'PTR', ['mx.posthorn.test']);
});
afterAll(() => world.stop());

/** A fixture with its placeholders filled; the period `daysAgo` UTC days back, one day long. */
function fixture(name: string, reportId: string, daysAgo = 1): Uint8Array {
  const begin = Math.floor(Date.now() / 1000 / DAY - daysAgo) * DAY;
  const text = readFileSync(join(FIXTURES, name), 'utf8')
    .replaceAll('{{REPORT_ID}}', reportId)
    .replaceAll('{{BEGIN}}', String(begin))
    .replaceAll('{{END}}', String(begin + DAY - 1))
    .replaceAll('{{DOMAIN}}', 'example.test')
    .replaceAll('{{OWN_IP}}', OWN_IP)
    .replaceAll('{{OTHER_IP}}', OTHER_IP);
  return new TextEncoder().encode(text);
}

/** Mail a report as the provider does: null sender, one attachment; wait until it is processed. */
async function mail(attachment: { filename: string; contentType: string; content: Uint8Array }, submitter: string, to = RUA): Promise<string> {
  const t = mta(s.starttls);
  try {
    const reply = await t.sendMail({
      envelope: { from: '', to: [to] },
      from: `noreply-dmarc@${submitter}`,
      to,
      subject: `Report Domain: example.test Submitter: ${submitter} Report-ID: <${attachment.filename}>`,
      text: `This is an aggregate report from ${submitter}.`,
      attachments: [{ filename: attachment.filename, contentType: attachment.contentType, content: Buffer.from(attachment.content) }],
    } as never);
    await inboundProcessed(s.p);
    return (reply as { response: string }).response;
  } finally {
    t.close();
  }
}

const summary = async (q = '') => {
  const r = await s.p.api('GET', `/domains/${domainId}/dmarc${q}`);
  expect(r.status).toBe(200);
  return r.body;
};

async function dmarcCounts(): Promise<Record<string, number>> {
  const text = await s.p.svc.telemetry.text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^posthorn_dmarc_reports_total\{result="([a-z_]+)"\} (\d+)$/gm)) out[m[1]!] = Number(m[2]);
  return out;
}

describe('DMARC aggregate reports', () => {
  test('the recommended DMARC record sends reports to the return-path host', async () => {
    const d = await s.p.api('GET', `/domains/${domainId}`);
    expect(d.body.recommended_records[0].value).toBe(`v=DMARC1; p=none; rua=mailto:${RUA};`);
  });

  test('Google (zip), Microsoft and Yahoo (gzip) reports mailed over SMTP appear in GET /domains/{id}/dmarc', async () => {
    world.dns.zone.set('_dmarc.example.test', 'TXT', [`v=DMARC1; p=none; rua=mailto:${RUA}`]);
    const g = zipSync({ 'google.com!example.test!1700000000!1700086399.xml': fixture('google.xml', '12865913725113286581') });
    expect(await mail({ filename: 'google.com!example.test!1700000000!1700086399.zip', contentType: 'application/zip', content: g }, 'google.com')).toBe(
      '250 2.0.0 OK',
    );
    const ms = gzipSync(fixture('microsoft.xml', 'f3a8c1e2b4d64e0f9a7b5c3d2e1f0a9b'));
    expect(
      await mail(
        { filename: 'enterprise.protection.outlook.com!example.test!1700000000!1700086400.xml.gz', contentType: 'application/gzip', content: ms },
        'enterprise.protection.outlook.com',
      ),
    ).toBe('250 2.0.0 OK');
    const y = gzipSync(fixture('yahoo.xml', '1700086400.736912', 2));
    expect(await mail({ filename: 'yahoo.com!example.test!1700000000!1700086399.xml.gz', contentType: 'application/gzip', content: y }, 'yahoo.com')).toBe(
      '250 2.0.0 OK',
    );

    const body = await summary();
    expect(body).toMatchObject({
      object: 'dmarc_summary',
      domain_id: domainId,
      domain: 'example.test',
      days: 30,
      record: `v=DMARC1; p=none; rua=mailto:${RUA}`,
      policy: 'none',
      rua: RUA,
      reports_received: 3,
      totals: { reports: 3, messages: 188, dmarc_pass: 185, dkim_aligned: 185, spf_aligned: 160 },
    });
    expect(body.sources).toEqual([
      { ip: OWN_IP, ptr: 'mx.posthorn.test', own: true, messages: 185, dmarc_pass: 185, dkim_aligned: 185, spf_aligned: 160, quarantined: 0, rejected: 0 },
      { ip: OTHER_IP, ptr: null, own: false, messages: 3, dmarc_pass: 0, dkim_aligned: 0, spf_aligned: 0, quarantined: 0, rejected: 0 },
    ]);
    const day = (n: number) => new Date(Math.floor(Date.now() / 1000 / DAY - n) * DAY * 1000 + DAY * 500).toISOString().slice(0, 10);
    expect(body.series).toEqual([
      { date: day(2), messages: 25, aligned: 25 },
      { date: day(1), messages: 163, aligned: 160 },
    ]);
    // Fewer than 30 days of reports: keep p=none, and the spoofing source is named.
    expect(body.step).toMatchObject({ action: 'wait', record: null });
    expect(body.step.message).toContain('keep p=none until 30 days are in');
    expect(body.step.message).toContain('3 messages from 1 other source failed DMARC');
    expect((await dmarcCounts()).stored).toBe(3);
  });

  test('the same report mailed again is kept once and counted as a duplicate', async () => {
    const g = zipSync({ 'google.com!example.test!1700000000!1700086399.xml': fixture('google.xml', '12865913725113286581') });
    expect(await mail({ filename: 'google.com!example.test!1700000000!1700086399.zip', contentType: 'application/zip', content: g }, 'google.com')).toBe(
      '250 2.0.0 OK',
    );
    expect((await summary()).reports_received).toBe(3);
    expect((await dmarcCounts()).duplicate).toBe(1);
  });

  test('a zip bomb and malformed XML are refused with a counted reason and stored nowhere', async () => {
    // 16 MiB of zeros: about 16 KB as gzip, four times the XML limit once expanded.
    const zeros = new Uint8Array(16 * 1024 * 1024);
    const bomb = gzipSync(zeros, { level: 9 });
    expect(bomb.byteLength).toBeLessThan(32_000);
    expect(await mail({ filename: 'bomb.xml.gz', contentType: 'application/gzip', content: bomb }, 'bomb.test')).toBe('250 2.0.0 OK');
    const zipBomb = zipSync({ 'report.xml': zeros }, { level: 9 });
    expect(await mail({ filename: 'bomb.zip', contentType: 'application/zip', content: zipBomb }, 'bomb.test')).toBe('250 2.0.0 OK');
    const broken = gzipSync(new TextEncoder().encode('<?xml version="1.0"?><feedback><report_metadata><org_name>x</org_name></feedback>'));
    expect(await mail({ filename: 'broken.xml.gz', contentType: 'application/gzip', content: broken }, 'broken.test')).toBe('250 2.0.0 OK');
    // A report on a domain the address is not for.
    const foreign = gzipSync(new TextEncoder().encode(new TextDecoder().decode(fixture('yahoo.xml', 'other-1')).replaceAll('example.test', 'elsewhere.test')));
    expect(await mail({ filename: 'elsewhere.xml.gz', contentType: 'application/gzip', content: foreign }, 'yahoo.com')).toBe('250 2.0.0 OK');

    const counts = await dmarcCounts();
    expect(counts).toMatchObject({ too_large: 2, malformed: 1, unknown_domain: 1, stored: 3, duplicate: 1 });
    expect((await summary()).reports_received).toBe(3);
    const all = await s.p.svc.store.dmarcReports.all(s.p.creds.team_id);
    expect(all.map((r) => r.org_name).sort()).toEqual(['Enterprise Outlook', 'Yahoo', 'google.com']);
    // Nothing was left in the spool.
    expect((await s.p.svc.store.inboundSpool.counts()).waiting).toBe(0);
  });

  test("thirty days at 100 % aligned from Posthorn's addresses: the step is p=quarantine", async () => {
    // A Microsoft report from 35 days ago: the reports now cover more than thirty days.
    const old = gzipSync(fixture('microsoft.xml', 'old-report-35', 35));
    expect(await mail({ filename: 'old.xml.gz', contentType: 'application/gzip', content: old }, 'enterprise.protection.outlook.com')).toBe('250 2.0.0 OK');
    const body = await summary();
    expect(body.step).toEqual({
      action: 'quarantine',
      message: expect.stringMatching(/^30 days at 100 % aligned from known sources: move to p=quarantine\./),
      record: `v=DMARC1; p=quarantine; rua=mailto:${RUA};`,
    });
    // Older than `days`: not in the totals.
    expect(body.totals.reports).toBe(3);
    expect((await summary('?days=40')).totals.reports).toBe(4);
  });

  test("bad input: days out of range → 422; another team's domain → 404", async () => {
    const bad = await s.p.api('GET', `/domains/${domainId}/dmarc?days=0`);
    expect(bad.status).toBe(422);
    expect(bad.body).toMatchObject({ name: 'validation_error', message: 'The `days` parameter must be a number from 1 to 90.' });
    const other = await s.p.newTeam();
    expect((await s.p.api('GET', `/domains/${domainId}/dmarc`, { key: other.api_key })).status).toBe(404);
  });
});

describe('memory bound (mail/dmarc-report.ts)', () => {
  test(`a bomb stops within MAX_XML + OVERSHOOT bytes of output (${MAX_XML} + ${OVERSHOOT})`, () => {
    const zeros = new Uint8Array(32 * 1024 * 1024);
    for (const bomb of [gzipSync(zeros, { level: 9 }), zipSync({ 'r.xml': zeros }, { level: 9 })]) {
      let err: unknown;
      try {
        expandAttachment(bomb);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(DmarcReportError);
      expect((err as DmarcReportError).reason).toBe('too_large');
      expect((err as DmarcReportError).produced).toBeGreaterThan(MAX_XML);
      expect((err as DmarcReportError).produced).toBeLessThanOrEqual(MAX_XML + OVERSHOOT);
    }
  });

  test('a compressed attachment over MAX_COMPRESSED is not read; a DOCTYPE is refused', () => {
    const big = new Uint8Array(2 * 1024 * 1024);
    big.set([0x1f, 0x8b]);
    expect(() => expandAttachment(big)).toThrow(/compressed report/);
    expect(() => readDmarcAttachment(new TextEncoder().encode('<!DOCTYPE x [<!ENTITY a "aaaa">]><feedback>&a;</feedback>'))).toThrow(/DOCTYPE/);
  });
});

describe('report addresses (deliverability.dmarc_rua)', () => {
  test('the configured address is the rua of every record and is read as reports; the return-path address still is', () => {
    const m = {
      reports: ['dmarc-reports@send.example.test', 'bounces+x@send.example.test'],
      inbound: [{ recipients: ['Dmarc@Reports.example.test', 'ann@reports.example.test'] }],
    };
    expect(dmarcRecipients(m, 'dmarc@reports.example.test')).toEqual(['dmarc-reports@send.example.test', 'Dmarc@Reports.example.test']);
    expect(dmarcRecipients(m, null)).toEqual(['dmarc-reports@send.example.test']);
    expect(dmarcRua({ name: 'a.test', custom_return_path: 'send' }, 'dmarc@reports.example.test')).toBe('dmarc@reports.example.test');
    expect(dmarcRua({ name: 'a.test', custom_return_path: 'bounce' }, null)).toBe('dmarc-reports@bounce.a.test');
  });
});
