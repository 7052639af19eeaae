// GET /emails/metrics by mailbox provider (docs/api.md §7.9, "By mailbox provider"; a Posthorn
// extension) end to end: mail to a domain whose MX host the test DNS server puts at a provider (a
// site of delivery shaping, configured by its MX pattern), to a domain a site lists by name, and to
// a domain no site covers, delivered to the sink or bounced by it; the email's `sent`, counted at
// its claim before its MX was known, moves to the provider its attempt reached; an open after
// delivery counts under the email's provider; bounces count by class. Also the Feedback-ID header
// (`delivery.feedback_id`, README "Deliverability") on a delivered message, covered by its DKIM
// signature. Runs on LMDB and, under POSTHORN_TEST_STORE=pg, on PostgreSQL.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { simpleParser } from 'mailparser';
import { startMailWorld, authenticateReceived, type MailWorld } from '../helpers/world';
import { waitForEmail } from '../helpers/emails';
import { until } from '../helpers/wait';

let w: MailWorld;
let team: string;

const SITES = {
  // Known by its MX hosts only, as Google Workspace domains are known to be `google`.
  hosted: { mx: ['*.mx.hosted.test'] },
  // Known by the recipient domain's name, as gmail.com is.
  listed: { domains: ['listed.test'] },
};

beforeAll(async () => {
  w = await startMailWorld({
    'delivery.shaping.sites': SITES,
    'delivery.feedback_id': 'posthorn-test',
    'tracking.prefetch_window': '0s',
  });
  team = w.p.creds.team_id;
  for (const [domain, mx] of [
    ['corp.test', 'in1.mx.hosted.test'],
    ['listed.test', 'mx.listed.test'],
  ] as const) {
    w.dns.zone.set(domain, 'MX', [{ exchange: mx, priority: 10 }]);
    w.dns.zone.set(mx, 'A', ['127.0.0.1']);
  }
  const upd = await w.p.resend.domains.update({ id: w.domain.id, openTracking: true });
  expect(upd.error).toBeNull();
});
afterAll(() => w.stop());

async function send(to: string, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await w.p.api('POST', '/emails', { body: { from: 'News <news@example.test>', to, subject: 'Hi', html: '<p>Hello</p>', ...extra } });
  expect(r.status).toBe(200);
  return r.body.id;
}

const settled = (id: string) =>
  waitForEmail(w.p.svc, { team_id: team, id }, (e) => e.last_event === 'delivered' || e.last_event === 'bounced' || e.last_event === 'opened');

const METRICS = 'sent,delivered,delivery_delayed,bounced,bounced_recipient,bounced_reputation,complained,opened,unique_opened';

async function bySite(): Promise<{ totals: Record<string, number>; rows: Record<string, Record<string, number | string>> }> {
  const r = await w.p.api('GET', `/emails/metrics?dimensions=site&metrics=${METRICS}`);
  expect(r.status).toBe(200);
  expect(r.body.dimensions).toEqual(['site']);
  const rows: Record<string, Record<string, number | string>> = {};
  for (const row of r.body.data) rows[(row.site as string) ?? '(none)'] = row;
  return { totals: r.body.totals, rows };
}

describe('metrics by mailbox provider', () => {
  let hostedId: string;

  beforeAll(async () => {
    w.sink.respond('gone@corp.test', { code: 550, message: '5.1.1 <gone@corp.test>: Recipient address rejected: User unknown in local recipient table' });
    hostedId = await send('ann@corp.test', { tags: [{ name: 'campaign', value: 'spring' }] });
    const bounced = await send('gone@corp.test');
    const listed = await send('bob@listed.test');
    const other = await send('cy@dest.test');
    for (const id of [hostedId, bounced, listed, other]) await settled(id);
  });

  test('each email counts under the provider its attempt reached; the rows add up to the totals', async () => {
    const { totals, rows } = await bySite();
    expect(rows.hosted).toMatchObject({ sent: 2, delivered: 1, bounced: 1, bounced_recipient: 1, bounced_reputation: 0, complained: 0 });
    expect(rows.listed).toMatchObject({ sent: 1, delivered: 1, bounced: 0 });
    expect(rows.other).toMatchObject({ sent: 1, delivered: 1, bounced: 0 });
    expect(totals).toMatchObject({ sent: 4, delivered: 3, bounced: 1, bounced_recipient: 1 });
    for (const m of ['sent', 'delivered', 'bounced']) expect(Object.values(rows).reduce((n, r) => n + (r[m] as number), 0)).toBe(totals[m]!);
    // The email remembers its provider, for what happens after delivery.
    expect((await w.p.svc.store.emails.get(team, hostedId))?.site).toBe('hosted');
  });

  test('an open after delivery counts under the email’s provider', async () => {
    const [msg] = w.sink.to('ann@corp.test');
    const html = String((await simpleParser(msg!.raw)).html);
    const pixel = /\/t\/o\/[^"'\s>]+/.exec(html)?.[0];
    expect(pixel).toBeDefined();
    const hit = await fetch(`${w.p.url}${pixel}`, { headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Thunderbird/128.0' } });
    expect(hit.status).toBe(200);
    const { rows } = await until(async () => {
      const m = await bySite();
      return m.rows.hosted?.opened === 1 && m;
    }, 'the open counted');
    expect(rows.hosted).toMatchObject({ opened: 1, unique_opened: 1 });
    expect(rows.other).toMatchObject({ opened: 0 });
  });

  test('bounce classes are given when named, not by default', async () => {
    const all = await w.p.api('GET', '/emails/metrics');
    expect(Object.keys(all.body.totals).some((k) => k === 'bounced_recipient')).toBe(false);
    const named = await w.p.api('GET', '/emails/metrics?metrics=bounced,bounced_recipient,bounced_unknown');
    expect(named.body.totals).toEqual({ bounced: 1, bounced_recipient: 1, bounced_unknown: 0 });
  });

  test('`ip` is refused while Posthorn sends from one IP; unknown dimensions and metrics too', async () => {
    for (const q of ['dimensions=ip', 'dimensions=site,ip', 'dimensions=country', 'metrics=bounced_sideways']) {
      const r = await w.p.api('GET', `/emails/metrics?${q}`);
      expect([r.status, r.body.name]).toEqual([422, 'validation_error']);
    }
    const ip = await w.p.api('GET', '/emails/metrics?dimensions=ip');
    expect(ip.body.message).toBe('The `ip` dimension needs several sending IPs, and this Posthorn sends from one: use `site`, or no dimension.');
  });

  test('Feedback-ID: campaign (the `campaign` tag), team, sending domain, sender id — signed by DKIM', async () => {
    const [msg] = w.sink.to('ann@corp.test');
    const parsed = await simpleParser(msg!.raw);
    expect(parsed.headers.get('feedback-id')).toBe(`spring:${team}:example.test:posthorn-test`);
    const auth = await authenticateReceived(w.dns, msg!);
    const dkim = auth.dkim.results[0]!;
    expect(dkim.status.result).toBe('pass');
    expect(String((dkim as { signingHeaders?: { keys?: string } }).signingHeaders?.keys ?? '').toLowerCase()).toContain('feedback-id');
    // Without a broadcast or a `campaign` tag, the campaign field is empty.
    const [plain] = w.sink.to('bob@listed.test');
    expect((await simpleParser(plain!.raw)).headers.get('feedback-id')).toBe(`:${team}:example.test:posthorn-test`);
  });
});
