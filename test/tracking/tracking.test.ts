// Open and click tracking end to end (docs/mail.md §6, docs/api.md §14.3, §7.9, §13.5): a domain
// opts in through the SDK; a real message goes through the delivery engine to a loopback MTA; the
// test reads the delivered html as a mail client would, fetches the pixel and a link, and checks
// the webhooks, `last_event` and GET /emails/metrics through the official SDK. Also: tampered
// links answer 404 and redirect nowhere, DKIM of the tracked message verifies, SMTP-submitted and
// broadcast emails are tracked, and automated hits are kept out of the metrics.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { simpleParser } from 'mailparser';
import { startMailWorld, authenticateReceived, type MailWorld } from '../helpers/world';
import { submitter } from '../helpers/smtp';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { eventsOf, storedEmails } from '../helpers/emails';
import type { Sink, Received } from '../helpers/sink';
import { until } from '../helpers/wait';

const THUNDERBIRD = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Thunderbird/128.5.0';

let w: MailWorld;
let hooks: Receiver;
let team: string;

/** The delivered html, parsed as a mail client would. */
async function htmlOf(m: Received): Promise<{ html: string; text: string }> {
  const mail = await simpleParser(m.raw);
  return { html: String(mail.html || ''), text: mail.text ?? '' };
}

/** hrefs and img srcs of an html document, read with Bun's HTML parser. */
function linksOf(html: string): { hrefs: string[]; imgs: string[] } {
  const hrefs: string[] = [];
  const imgs: string[] = [];
  new HTMLRewriter()
    .on('a[href]', { element: (el) => void hrefs.push(el.getAttribute('href')!) })
    .on('img[src]', { element: (el) => void imgs.push(el.getAttribute('src')!) })
    .transform(html);
  return { hrefs, imgs };
}

/** A link Posthorn generated (under public_url), on the test server. */
const local = (url: string) => w.p.url + new URL(url).pathname;

async function lastMessageTo(sink: Sink, rcpt: string, n = 1): Promise<Received> {
  await until(() => sink.to(rcpt).length >= n, `${n} message(s) to ${rcpt}`, 15_000);
  const list = sink.to(rcpt);
  expect(list.length).toBeGreaterThanOrEqual(n);
  return list[list.length - 1];
}

/** Bounded wait until the email's `last_event` (read through the SDK) is `status`. */
async function lastEventBecomes(id: string, status: string) {
  return until(async () => {
    const r = await w.p.resend.emails.get(id);
    return r.data?.last_event === status && r.data;
  }, `last_event ${status}`);
}

const HTML =
  '<!doctype html><html><body><p>Hello <a href="https://shop.test/a?b=1&amp;c=2">the shop</a>, ' +
  '<a href="mailto:help@example.test">mail us</a>, <a href="#top">top</a>, ' +
  '<a data-posthorn-no-track href="https://private.test/x">private</a>, <a href="tel:+15550100">call</a>.</p>' +
  '<script>var s = "<a href=\'https://script.test\'>";</script><!-- <a href="https://comment.test"> --></body></html>';

beforeAll(async () => {
  // prefetch_window 0s: the test's own hits arrive right after delivery; timing is tested apart.
  // The test is its own reverse proxy on loopback: its X-Forwarded-For names the reader.
  w = await startMailWorld(
    { 'security.allow_private_networks': true, 'tracking.prefetch_window': '0s', 'http.trusted_proxies': ['127.0.0.1', '::1'] },
    { smtp: true },
  );
  team = w.p.creds.team_id;
  hooks = await startReceiver();
  const upd = await w.p.resend.domains.update({ id: w.domain.id, openTracking: true, clickTracking: true });
  expect(upd.error).toBeNull();
  const hook = await w.p.resend.webhooks.create({ endpoint: hooks.url, events: ['email.opened', 'email.clicked'] });
  expect(hook.error).toBeNull();
});
afterAll(async () => {
  await w.stop();
  await hooks.close();
});

describe('a tracked email sent through the API', () => {
  let emailId: string;
  let msg: Received;
  let html: string;
  let hrefs: string[];
  let pixel: string;

  beforeAll(async () => {
    const sent = await w.p.resend.emails.send({ from: 'News <news@example.test>', to: 'reader@dest.test', subject: 'Tracked', html: HTML });
    expect(sent.error).toBeNull();
    emailId = sent.data!.id;
    msg = await lastMessageTo(w.sink, 'reader@dest.test');
    ({ html } = await htmlOf(msg));
    const l = linksOf(html);
    hrefs = l.hrefs;
    expect(l.imgs.length).toBe(1);
    pixel = l.imgs[0];
  });

  test('http(s) links are rewritten; mailto, tel, anchors and opted-out links stay; the attribute is removed', () => {
    expect(hrefs.length).toBe(5);
    expect(hrefs[0]).toStartWith('http://localhost:3000/t/c/');
    expect(hrefs.slice(1)).toEqual(['mailto:help@example.test', '#top', 'https://private.test/x', 'tel:+15550100']);
    expect(html).not.toContain('data-posthorn-no-track');
    // Markup inside a script or a comment is not a link.
    expect(html).toContain(`var s = "<a href='https://script.test'>";`);
    expect(html).toContain('<!-- <a href="https://comment.test"> -->');
  });

  test('the pixel sits right before </body>', () => {
    expect(pixel).toStartWith('http://localhost:3000/t/o/');
    expect(html).toMatch(/<img src="http:\/\/localhost:3000\/t\/o\/[^"]+"[^>]*\/><\/body>/);
  });

  test('the text part keeps the original links', async () => {
    const { text } = await htmlOf(msg);
    expect(text).toContain('https://shop.test/a?b=1&c=2');
    expect(text).not.toContain('/t/c/');
  });

  test('DKIM of the tracked message verifies', async () => {
    const r = await authenticateReceived(w.dns, msg);
    expect(r.dkim.results[0].status.result).toBe('pass');
  });

  test('the stored html is the html as given', async () => {
    const r = await w.p.resend.emails.get(emailId);
    expect(r.data!.html).toBe(HTML);
  });

  test('a tampered or unknown link answers 404 and redirects nowhere', async () => {
    const path = new URL(hrefs[0]).pathname;
    const token = path.slice('/t/c/'.length);
    const flipped = Buffer.from(token, 'base64url');
    flipped[flipped.length - 20]! ^= 1;
    // A token of the former, signed-JSON format pointing elsewhere, signed with another secret.
    const forged = `${Buffer.from(JSON.stringify({ k: 'c', t: team, e: emailId, r: null, u: 'https://evil.test/' })).toString('base64url')}.${'A'.repeat(43)}`;
    const tampered = [
      `/t/c/${flipped.toString('base64url')}`,
      `/t/c/${token.slice(0, -2)}`,
      `/t/c/${forged}`,
      '/t/c/nothing',
      `/t/o/${token}`, // a click token is no pixel token
    ];
    for (const p of tampered) {
      const res = await fetch(w.p.url + p, { redirect: 'manual' });
      expect(res.status).toBe(404);
      expect(res.headers.get('location')).toBeNull();
      expect((await res.json()).name).toBe('not_found');
    }
  });

  test('the pixel answers a GIF that is not cached; the open is an event, a webhook and last_event', async () => {
    const res = await fetch(local(pixel), { headers: { 'user-agent': THUNDERBIRD } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/gif');
    expect(res.headers.get('cache-control')).toContain('no-store');
    const gif = Buffer.from(await res.arrayBuffer());
    expect(gif.subarray(0, 6).toString()).toBe('GIF89a');
    await hooks.waitFor((r) => r.some((h) => h.payload.type === 'email.opened'), 'email.opened');
    const hook = hooks.requests.find((h) => h.payload.type === 'email.opened')!;
    expect(hook.payload.data).toMatchObject({ email_id: emailId, to: ['reader@dest.test'], subject: 'Tracked' });
    const got = await lastEventBecomes(emailId, 'opened');
    expect(got.last_event).toBe('opened');
  });

  test("a click answers 302 to exactly the original URL and is an email.clicked with Resend's click payload", async () => {
    const res = await fetch(local(hrefs[0]), { redirect: 'manual', headers: { 'user-agent': THUNDERBIRD, 'x-forwarded-for': '203.0.113.7' } });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('https://shop.test/a?b=1&c=2');
    await hooks.waitFor((r) => r.some((h) => h.payload.type === 'email.clicked'), 'email.clicked');
    const hook = hooks.requests.find((h) => h.payload.type === 'email.clicked')!;
    expect(hook.payload.data.email_id).toBe(emailId);
    expect(hook.payload.data.to).toEqual(['reader@dest.test']);
    expect(hook.payload.data.click).toEqual({
      ipAddress: '203.0.113.7',
      link: 'https://shop.test/a?b=1&c=2',
      timestamp: expect.any(String),
      userAgent: THUNDERBIRD,
    });
    expect(Date.parse((hook.payload.data.click as { timestamp: string }).timestamp)).not.toBeNaN();
    const r = await lastEventBecomes(emailId, 'clicked');
    expect(r.last_event).toBe('clicked');
  });

  test('GET /emails/metrics (SDK) counts the email, the open and the click', async () => {
    const m = await until(async () => {
      const r = await w.p.resend.emails.metrics({ emailId: [emailId] } as never);
      expect(r.error).toBeNull();
      return r.data!.totals.clicked === 1 && r.data;
    }, 'metrics');
    expect(m.object).toBe('metrics');
    expect(m.totals).toMatchObject({
      sent: 1,
      delivered: 1,
      opened: 1,
      unique_opened: 1,
      clicked: 1,
      unique_clicked: 1,
      bounced: 0,
      delivery_rate: 1,
      open_rate: 1,
      click_rate: 1,
    });
    expect(m.data).toBeUndefined();
  });

  test('automated hits send their events but stay out of the metrics', async () => {
    const before = (await w.p.resend.emails.metrics({ emailId: [emailId] } as never)).data!.totals;
    const opened = hooks.requests.filter((h) => h.payload.type === 'email.opened').length;
    // Apple Mail Privacy Protection, a link scanner, no user agent at all.
    await fetch(local(pixel), { headers: { 'user-agent': 'Mozilla/5.0' } });
    await fetch(local(hrefs[0]), { redirect: 'manual', headers: { 'user-agent': 'Mozilla/5.0 (compatible; Barracuda Sentinel)' } });
    await fetch(local(pixel), { headers: { 'user-agent': '' } });
    await hooks.waitFor((r) => r.filter((h) => h.payload.type === 'email.opened').length >= opened + 2, 'automated opens');
    const events = await until(async () => {
      const all = await eventsOf(w.p.svc, { team_id: team, id: emailId });
      return all.filter((e) => e.automated).length === 3 && all;
    }, 'automated events');
    expect(
      events
        .filter((e) => e.automated)
        .map((e) => e.automated)
        .sort(),
    ).toEqual(['apple_privacy_proxy', 'no_user_agent', 'scanner']);
    const after = (await w.p.resend.emails.metrics({ emailId: [emailId] } as never)).data!.totals;
    expect(after).toEqual(before);
  });
});

describe('other ways in are tracked too', () => {
  test('an SMTP-submitted email', async () => {
    const t = submitter(w.smtp!.starttls, w.p.apiKey);
    const info = await t.sendMail({
      from: 'news@example.test',
      to: 'smtp-reader@dest.test',
      subject: 'By SMTP',
      html: '<p><a href="https://smtp.test/page">page</a></p>',
    });
    expect(info.response).toMatch(/^250 /);
    const { html } = await htmlOf(await lastMessageTo(w.sink, 'smtp-reader@dest.test'));
    const { hrefs, imgs } = linksOf(html);
    expect(hrefs[0]).toContain('/t/c/');
    expect(imgs[0]).toContain('/t/o/');
    const res = await fetch(local(hrefs[0]), { redirect: 'manual', headers: { 'user-agent': THUNDERBIRD } });
    expect(res.headers.get('location')).toBe('https://smtp.test/page');
  });

  test('a broadcast email; its unsubscribe link stays as written', async () => {
    const seg = await w.p.api('POST', '/segments', { body: { name: 'Readers' } });
    await w.p.api('POST', '/contacts', { body: { email: 'fan@dest.test', segments: [seg.body.id] } });
    const b = await w.p.resend.broadcasts.create({
      segmentId: seg.body.id,
      from: 'news@example.test',
      subject: 'Weekly',
      name: 'Weekly 1',
      html: '<p><a href="https://blog.test/post">Read</a> · <a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a></p>',
      send: true,
    } as never);
    expect(b.error).toBeNull();
    const msg = await lastMessageTo(w.sink, 'fan@dest.test');
    const { hrefs } = linksOf((await htmlOf(msg)).html);
    expect(hrefs[0]).toContain('/t/c/');
    expect(hrefs[1]).toStartWith('http://localhost:3000/u/');
    const res = await fetch(local(hrefs[0]), { redirect: 'manual', headers: { 'user-agent': THUNDERBIRD } });
    expect(res.headers.get('location')).toBe('https://blog.test/post');
    const email = await until(async () => {
      const all = await storedEmails(w.p.svc, team);
      const e = all.find((x) => x.broadcast_id === b.data!.id);
      return e?.last_event === 'clicked' && e;
    }, 'broadcast click');
    expect(email.contact_id).toBeString();
    const m = await w.p.resend.emails.metrics({ broadcastId: [b.data!.id], dimensions: ['broadcast'] } as never);
    expect(m.data!.data![0]).toMatchObject({ broadcast_id: b.data!.id, broadcast_name: 'Weekly 1', clicked: 1, unique_clicked: 1 });

    // Broadcast analytics (SDK): who clicked what, and the links.
    const clicked = await w.p.resend.broadcasts.recipients(b.data!.id, { type: 'clicked' } as never);
    expect(clicked.error).toBeNull();
    expect(clicked.data!.data).toEqual([
      { id: email.id, contact_id: email.contact_id ?? null, email: 'fan@dest.test', count: 1, clicked_links: [{ url: 'https://blog.test/post', clicks: 1 }] },
    ]);
    const none = await w.p.resend.broadcasts.recipients(b.data!.id, { type: 'bounced' } as never);
    expect(none.data!.data).toEqual([]);
    const links = await w.p.resend.broadcasts.clickedLinks(b.data!.id);
    expect(links.error).toBeNull();
    expect(links.data!.data).toEqual([{ id: expect.stringMatching(/^[0-9a-f]{64}$/), url: 'https://blog.test/post', clicks: 1, unique_clicks: 1 }]);
    const missing = await w.p.api('GET', `/broadcasts/${b.data!.id}/recipients`);
    expect(missing.status).toBe(422);
    expect(missing.body.name).toBe('missing_required_parameter');

    // The unsubscribe link (RFC 8058 one-click) counts for this email.
    const unsub = await fetch(local(hrefs[1]), {
      method: 'POST',
      body: 'List-Unsubscribe=One-Click',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(unsub.status).toBe(200);
    const u = await w.p.resend.emails.metrics({ broadcastId: [b.data!.id] } as never);
    expect(u.data!.totals).toMatchObject({ unsubscribed: 1, sent: 1, delivered: 1, unsubscribe_rate: 1 });
    const gone = await w.p.resend.broadcasts.recipients(b.data!.id, { type: 'unsubscribed' } as never);
    expect(gone.data!.data.map((r: { email: string }) => r.email)).toEqual(['fan@dest.test']);
  });
});
