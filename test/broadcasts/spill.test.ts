// A broadcast larger than its sending IP's warm-up allowance (README.md, "Sending IPs and
// warm-up"; docs/api.md §19.17): the most engaged recipients go first (engagement from the emails
// of the team's earlier broadcasts), the rest wait in the queue — never bounced — and GET
// /broadcasts/{id} forecasts when the last will have gone. The forecast itself as a table of
// situations with a moved clock (src/delivery/forecast.ts), and the engagement order.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { startPosthorn, type Running } from '../helpers/posthorn';
import { startDnsServer, type TestDns } from '../helpers/dns';
import { startSink, type Sink } from '../helpers/sink';
import { verifiedDomain, storedEmails } from '../helpers/emails';
import { until } from '../helpers/wait';
import { newId, nowIso } from '../../src/ids';
import type { EmailRec, SendingIpRec } from '../../src/store';
import { completesAt } from '../../src/delivery/forecast';
import { mostEngagedFirst } from '../../src/broadcasts/engagement';
import { axeViolations, launchBrowser, screenshot, signIn } from '../helpers/browser';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const RAMPS = { new_daily: 150, new_growth: 1.4, established_daily: 1000, established_growth: 1.5 };

const warming = (address: string, startedAt: number, more: Partial<SendingIpRec> = {}): SendingIpRec => ({
  id: address,
  team_id: '-',
  created_at: new Date(startedAt).toISOString(),
  pool: 'default',
  ehlo: 'mta.posthorn.test',
  warmup: { state: 'warming', ramp: 'new', started_at: new Date(startedAt).toISOString(), held: {} },
  out_of_rotation: null,
  sites: {},
  ...more,
});

describe('the forecast (completesAt), the clock moved', () => {
  const start = Date.UTC(2026, 0, 10, 0);
  test("today's room: now; more than today's: on the ramp's later days, to the hour", () => {
    const ip = warming('127.0.0.3', start);
    // 150 a day, 19 an hour: 10 pending fit this hour.
    expect(completesAt(RAMPS, [ip], new Map([['google', 10]]), start + 9 * HOUR)).toBe(start + 9 * HOUR);
    // 40 at 09:00: three hours' worth (19, 19, 2) → the 11:00 hour.
    expect(completesAt(RAMPS, [ip], new Map([['google', 40]]), start + 9 * HOUR)).toBe(start + 11 * HOUR);
    // 400: 150 today, 210 tomorrow (27 an hour), 40 the day after (38 an hour) → its 01:00 hour.
    expect(completesAt(RAMPS, [ip], new Map([['google', 400]]), start)).toBe(start + 2 * DAY + HOUR);
    // What it sent today already counts against today's room: 150 sent, so 10 go tomorrow.
    const busy = warming('127.0.0.3', start, { sites: { google: { day: Math.floor(start / DAY), sent: 150, hour: 0, hourSent: 0, deferred: 0, bounced: 0 } } });
    expect(completesAt(RAMPS, [busy], new Map([['google', 10]]), start + 9 * HOUR)).toBe(start + DAY);
    // Two addresses share the work; each site its own allowance (the latest wins).
    expect(
      completesAt(
        RAMPS,
        [ip, warming('127.0.0.4', start)],
        new Map([
          ['google', 300],
          ['yahoo', 10],
        ]),
        start,
      ),
    ).toBe(start + 7 * HOUR);
    // An address of the pool with no allowance (off, complete): nothing limits it, no forecast.
    expect(
      completesAt(
        RAMPS,
        [ip, warming('127.0.0.4', start, { warmup: { state: 'complete', ramp: 'new', started_at: null, held: {} } })],
        new Map([['google', 400]]),
        start,
      ),
    ).toBeNull();
    expect(completesAt(RAMPS, [ip], new Map(), start)).toBeNull();
  });
});

test('most engaged first; equals keep the segment order', () => {
  expect(
    mostEngagedFirst(
      ['a', 'b', 'c', 'd'],
      new Map([
        ['c', 4],
        ['b', 1],
        ['d', 4],
      ]),
    ),
  ).toEqual(['c', 'd', 'b', 'a']);
});

describe('end to end: a broadcast over the allowance spills, most engaged first', () => {
  let dns: TestDns;
  let sink: Sink;
  let p: Running;
  beforeAll(async () => {
    dns = await startDnsServer();
    sink = await startSink({ tls: 'none' });
    dns.zone.set('dest.test', 'MX', [{ exchange: 'mx.dest.test', priority: 10 }]);
    dns.zone.set('mx.dest.test', 'A', ['127.0.0.1']);
    p = await startPosthorn({
      'dns.servers': [dns.address],
      'delivery.mx_port': sink.port,
      'security.allow_private_networks': true,
      'delivery.ips': [{ address: '127.0.0.9', ehlo: 'mta-9.posthorn.test', pool: 'default', weight: 1, warmup: 'new' }],
      // 3 a day: one an hour.
      'delivery.warmup.new_daily': 3,
    });
  });
  afterAll(async () => {
    await p?.stop();
    await sink?.close();
    await dns?.close();
  });

  test('the most engaged contact gets it first, the rest wait queued (never bounced), and GET /broadcasts/{id} forecasts when they will have gone', async () => {
    const team = p.creds.team_id;
    const domain = await verifiedDomain(p, 'spill.test');
    const seg = (await p.api('POST', '/segments', { body: { name: 'News' } })).body.id as string;
    const ids: string[] = [];
    for (const name of ['ann', 'bob', 'cat', 'dan', 'eve']) {
      const r = await p.api('POST', '/contacts', { body: { email: `${name}@dest.test`, segments: [seg] } });
      expect(r.status).toBe(201);
      ids.push(r.body.id);
    }
    // An earlier broadcast: dan clicked, bob opened (and an automated open of eve's does not count).
    const past = newId();
    const now = nowIso();
    await p.svc.store.write(async (tx) => {
      tx.broadcasts.put({
        id: past,
        team_id: team,
        created_at: now,
        name: 'Earlier',
        segment_id: seg,
        from: 'news@spill.test',
        subject: 'Earlier',
        reply_to: null,
        preview_text: null,
        html: '<p>Earlier</p>',
        text: null,
        topic_id: null,
        status: 'sent',
        scheduled_at: null,
        sent_at: now,
      });
      const engaged = { bob: [1, 0, 0], dan: [1, 1, 0], eve: [0, 0, 5] } as Record<string, [number, number, number]>;
      for (const [i, name] of ['ann', 'bob', 'cat', 'dan', 'eve'].entries()) {
        const [opens, clicks, automated] = engaged[name] ?? [0, 0, 0];
        const e: EmailRec = {
          id: newId(),
          team_id: team,
          created_at: now,
          from: 'news@spill.test',
          from_address: 'news@spill.test',
          domain_id: domain.id,
          domain: 'spill.test',
          to: [`${name}@dest.test`],
          cc: [],
          bcc: [],
          reply_to: [],
          subject: 'Earlier',
          headers: {},
          tags: [],
          scheduled_at: null,
          last_event: 'delivered',
          message_id: `<${newId()}@spill.test>`,
          broadcast_id: past,
          contact_id: ids[i],
          attachments: [],
          recipients: { [`${name}@dest.test`]: 'delivered' },
          sent_at: now,
          api_key_id: null,
          engagement: { opens, clicks, automated_opens: automated, automated_clicks: 0, links: {}, first_opened_at: null, first_clicked_at: null },
        };
        tx.emails.put(e);
      }
    });
    const created = await p.api('POST', '/broadcasts', {
      body: { segment_id: seg, from: 'News <news@spill.test>', subject: 'Spill', html: '<p>Hi</p>', send: true },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    // One an hour: dan (a click and an open) goes now; the others wait.
    await until(() => sink.messages.length === 1 || null, 'the first message delivered');
    expect(sink.messages[0]!.rcptTo).toEqual(['dan@dest.test']);
    const emails = (await storedEmails(p.svc, team)).filter((e) => e.broadcast_id === id);
    expect(emails.length).toBe(5);
    // Made in engagement order: dan, bob, then the segment's order.
    expect([...emails].sort((a, b) => (a.id < b.id ? -1 : 1)).map((e) => e.to[0])).toEqual([
      'dan@dest.test',
      'bob@dest.test',
      'ann@dest.test',
      'cat@dest.test',
      'eve@dest.test',
    ]);
    const got = await until(async () => {
      const b = (await p.api('GET', `/broadcasts/${id}`)).body;
      return b.delivery_forecast?.pending === 4 ? b : null;
    }, 'the forecast counts four waiting');
    // Three a day, one an hour: the next two go in the next hours, then the day is spent — the last goes tomorrow.
    const at = Date.parse(got.delivery_forecast.completes_at);
    expect(at).toBeGreaterThan(Date.now());
    expect(Math.floor(at / DAY)).toBeGreaterThan(Math.floor(Date.now() / DAY));
    const states = (await storedEmails(p.svc, team)).filter((e) => e.broadcast_id === id).flatMap((e) => Object.values(e.recipients));
    expect(states.filter((s) => s === 'bounced')).toEqual([]);
    // A broadcast whose pool sends without allowances has no forecast field at all.
    expect((await p.api('GET', `/broadcasts/${past}`)).body.delivery_forecast).toBeUndefined();

    // The broadcast's page says it beside its status (axe clean, desktop and phone).
    const browser = await launchBrowser();
    try {
      for (const [viewport, name] of [
        [{ width: 1440, height: 900 }, 'broadcast-forecast-desktop'],
        [{ width: 390, height: 844 }, 'broadcast-forecast-phone'],
      ] as const) {
        const context = await browser.newContext({ viewport, isMobile: viewport.width < 500 });
        const page = await signIn(context, p.url, { email: p.creds.admin_email, password: p.creds.admin_password });
        await page.getByRole('heading', { name: 'Overview' }).waitFor();
        await page.goto(`${p.url}/dashboard/broadcasts/${id}`);
        await page.getByText('4 waiting on sending IP warm-up').waitFor();
        expect(await axeViolations(page)).toEqual([]);
        await screenshot(page, name);
        await context.close();
      }
    } finally {
      await browser.close();
    }
  });
});
