// Deliverability insights and spam scores with a real rspamd (README "Deliverability"; docs/api.md
// §7.12, §8, §13.6): an email's insights computed when first asked for and kept, the message scored
// by a private rspamd on loopback (test/helpers/rspamd.ts) as delivery signs it, received mail
// carrying rspamd's verdict, a broadcast held for review above the threshold — and, with rspamd
// stopped, insights that say so while sends go on.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startMailWorld, type MailWorld } from '../helpers/world';
import { startRspamd, type TestRspamd } from '../helpers/rspamd';
import { freePort, type ApiBody } from '../helpers/posthorn';
import { mta, inboundProcessed } from '../helpers/smtp';
import { waitForEmail } from '../helpers/emails';
import { until } from '../helpers/wait';
import { INSIGHT_NAMES } from '../../src/store';

const TOKEN = 'metrics-token-for-insights';
let w: MailWorld;
let rspamd: TestRspamd;
let segmentId: string;

const insightsOf = async (id: string, query = '') => {
  const r = await w.p.api('GET', `/emails/${id}/insights${query}`);
  expect(r.status).toBe(200);
  return r.body;
};
const named = (body: ApiBody, name: string) => (body.insights as ApiBody[]).find((i) => i.name === name);
const send = async (body: Record<string, unknown>) => {
  const r = await w.p.resend.emails.send({ from: 'Acme <hello@example.test>', to: ['ann@dest.test'], subject: 'Your order', ...body } as never);
  expect(r.error).toBeNull();
  return r.data!.id;
};

/** A spammer's message, as rspamd's rules see one: shouting subject with money in it, HTML only, invisible text. */
const SPAMMY = {
  subject: 'YOU HAVE WON $1,000,000!!! CLAIM YOUR CASH PRIZE NOW!!!',
  html: '<p style="font-size:40px;color:red">CONGRATULATIONS!!! YOU HAVE WON $1,000,000 CASH</p><p>Claim your FREE money now! 100% FREE, no risk, act now.</p><p style="color:#ffffff;font-size:1px">hidden text hidden text</p>',
};

beforeAll(async () => {
  const port = await freePort();
  w = await startMailWorld({ 'metrics.token': TOKEN, 'spam.rspamd_url': `http://127.0.0.1:${port}`, 'security.allow_private_networks': true }, { smtp: true });
  rspamd = await startRspamd({ dns: w.dns.address, port });
  const segment = await w.p.resend.segments.create({ name: 'Customers' });
  segmentId = segment.data!.id;
  await w.p.resend.contacts.create({ email: 'dana@dest.test', firstName: 'Dana', segments: [{ id: segmentId }] } as never);
}, 180_000);

afterAll(async () => {
  await rspamd?.stop();
  await w?.stop();
});

describe('GET /emails/{id}/insights', () => {
  test('every insight with its evidence, and the signed message scored by rspamd (its DKIM verified through the test DNS)', async () => {
    const id = await send({
      from: 'Acme <no-reply@example.test>',
      html: '<p>Thanks! Track it <a href="https://bit.ly/abc">here</a> or at <a href="https://shop.example.test/orders/1">your orders</a> and <a href="https://elsewhere.test/x">our partner</a>.</p><img src="https://shop.example.test/logo.png">',
    });
    // Accepting wrote nothing for insights: they are made when first asked for.
    expect(await w.p.svc.store.emailInsights.get(w.p.creds.team_id, id)).toBeUndefined();
    const body = await insightsOf(id);
    expect(body).toMatchObject({ object: 'email_insights', email_id: id });
    expect(body.insights.map((i: ApiBody) => i.name)).toEqual([...INSIGHT_NAMES]);
    const statuses = Object.fromEntries(body.insights.map((i: ApiBody) => [i.name, i.status]));
    expect(statuses).toEqual({
      link_domains: 'warn',
      dmarc: 'warn',
      text_part: 'pass',
      no_reply: 'warn',
      html_size: 'pass',
      url_shorteners: 'fail',
      sending_subdomain: 'warn',
      tracking_subdomain: 'pass',
      list_unsubscribe: 'pass',
      image_alt: 'warn',
      spam_score: expect.stringMatching(/^(pass|warn)$/),
    });
    expect(named(body, 'url_shorteners').evidence).toContain('bit.ly');
    expect(named(body, 'link_domains').evidence).toContain('elsewhere.test');
    expect(named(body, 'link_domains').evidence).not.toContain('shop.example.test');
    expect(named(body, 'dmarc').evidence).toContain('No DMARC record at _dmarc.example.test');
    expect(named(body, 'text_part').evidence).toContain('made from the HTML');
    for (const i of body.insights) {
      expect(i.evidence.length).toBeGreaterThan(10);
      expect(i.fix === null).toBe(i.status === 'pass' || i.status === 'unavailable');
    }
    // rspamd's answer: a score, its action, the rules that matched — among them the DKIM signature
    // Posthorn made, checked against the key in the test DNS.
    expect(body.spam).toMatchObject({ scanner: 'rspamd', status: 'scored', reason: null, required_score: 15 });
    expect(typeof body.spam.score).toBe('number');
    const symbols = body.spam.symbols.map((s: ApiBody) => s.name);
    expect(symbols).toContain('R_DKIM_ALLOW');
    expect(symbols).toContain('DMARC_NA');
    expect(named(body, 'spam_score').evidence).toContain(`rspamd scores it ${body.spam.score}`);
  });

  test('kept: asked again, the same answer; refresh=true computes again (a DMARC record published meanwhile now passes)', async () => {
    const id = await send({ html: '<p>Hello</p>', text: 'Hello' });
    const first = await insightsOf(id);
    expect((await w.p.svc.store.emailInsights.get(w.p.creds.team_id, id))?.computed_at).toBe(first.computed_at);
    w.dns.zone.set('_dmarc.example.test', 'TXT', ['v=DMARC1; p=reject; rua=mailto:dmarc@example.test']);
    try {
      expect((await insightsOf(id)).computed_at).toBe(first.computed_at);
      const again = await insightsOf(id, '?refresh=true');
      expect(again.computed_at > first.computed_at).toBe(true);
      expect(named(again, 'dmarc')).toMatchObject({ status: 'pass', fix: null });
      expect(named(again, 'dmarc').evidence).toContain('p=reject');
      expect(named(again, 'text_part').evidence).toContain('as given');
      expect(again.spam.symbols.map((s: ApiBody) => s.name)).toContain('DMARC_POLICY_ALLOW');
    } finally {
      w.dns.zone.clear('_dmarc.example.test', 'TXT');
    }
  });

  test('HTML over 102 KB fails (Gmail clips it); tracking on the shared host warns; no HTML part', async () => {
    const big = await send({ html: `<p>${'Lorem ipsum dolor sit amet. '.repeat(4000)}</p>` });
    expect(named(await insightsOf(big), 'html_size')).toMatchObject({ status: 'fail' });
    const plain = await send({ text: 'Only text' });
    const b = await insightsOf(plain);
    expect(named(b, 'html_size')).toMatchObject({ status: 'pass', evidence: 'The message has no HTML part.' });
    expect(named(b, 'text_part').status).toBe('pass');
    expect(named(b, 'image_alt').status).toBe('pass');
    await w.p.api('PATCH', `/domains/${w.domain.id}`, { body: { click_tracking: true } });
    try {
      const tracked = await send({ html: '<p><a href="https://example.test/a">a</a></p>' });
      const t = named(await insightsOf(tracked), 'tracking_subdomain');
      expect(t.status).toBe('warn');
      expect(t.evidence).toContain(`Tracking links point at ${new URL(w.p.svc.config.public_url).hostname}`);
    } finally {
      await w.p.api('PATCH', `/domains/${w.domain.id}`, { body: { click_tracking: false } });
    }
  });

  test('unknown email → 404; a bad id → 422; refresh must be true or false; another team sees nothing', async () => {
    expect((await w.p.api('GET', '/emails/0190a5b2-0000-7000-8000-000000000000/insights')).status).toBe(404);
    expect((await w.p.api('GET', '/emails/nope/insights')).body.name).toBe('invalid_parameter');
    const id = await send({ html: '<p>x</p>' });
    expect((await w.p.api('GET', `/emails/${id}/insights?refresh=maybe`)).status).toBe(422);
    const other = await w.p.newTeam();
    expect((await w.p.api('GET', `/emails/${id}/insights`, { key: other.api_key })).status).toBe(404);
  });
});

describe('received mail', () => {
  test("a received email carries rspamd's verdict", async () => {
    await w.p.api('POST', '/domains', { body: { name: 'inbound.test', capabilities: { receiving: 'enabled' } } });
    await mta(w.smtp!.starttls).sendMail({
      from: 'Zoe <zoe@sender.test>',
      to: 'support@inbound.test',
      subject: 'A question',
      text: 'Hi there, a question about pricing.',
    } as never);
    await inboundProcessed(w.p);
    const list = await w.p.api('GET', '/emails/receiving');
    const id = list.body.data.find((e: ApiBody) => e.subject === 'A question').id;
    const r = await w.p.api('GET', `/emails/receiving/${id}`);
    expect(r.body.spam).toMatchObject({ scanner: 'rspamd', status: 'scored', reason: null });
    expect(typeof r.body.spam.score).toBe('number');
    expect(r.body.spam.symbols.length).toBeGreaterThan(0);
  });
});

describe('broadcast review', () => {
  const create = async (content: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    w.p.api('POST', '/broadcasts', {
      body: {
        segment_id: segmentId,
        from: 'Acme <news@example.test>',
        subject: 'March news',
        html: '<p>News for {{{contact.first_name|you}}}</p>',
        ...content,
        ...extra,
      },
    });
  const status = async (id: string) => (await w.p.api('GET', `/broadcasts/${id}`)).body.status;

  test("a clean broadcast passes its review: the SDK's broadcasts.send() sends it as on Resend", async () => {
    const id = (await create({})).body.id;
    const r = await w.p.resend.broadcasts.send(id);
    expect(r.error).toBeNull();
    await until(async () => (await status(id)) === 'sent', 'the broadcast to be sent');
    const stored = await w.p.svc.store.broadcasts.get(w.p.creds.team_id, id);
    expect(stored?.review).toMatchObject({ status: 'pass', accepted_at: null, sample: { to: 'dana@dest.test' } });
  });

  test('a broadcast above the threshold is held: 422 review_required with the findings, nothing sent until the review is accepted', async () => {
    const id = (await create(SPAMMY)).body.id;
    const refused = await w.p.resend.broadcasts.send(id);
    expect(refused.error).toMatchObject({ name: 'review_required' });
    expect(refused.error!.message).toContain('at or above the review threshold of 5');
    const raw = await w.p.api('POST', `/broadcasts/${id}/send`, { body: {} });
    expect(raw.status).toBe(422);
    expect(raw.body.review).toMatchObject({ object: 'broadcast_review', broadcast_id: id, status: 'held', threshold: 5, accepted_at: null, stale: false });
    expect(raw.body.review.spam.score).toBeGreaterThanOrEqual(5);
    expect(raw.body.review.findings.length).toBeGreaterThan(0);
    expect(await status(id)).toBe('draft');
    // The review, read and accepted: the SDK's send goes through.
    const review = await w.p.api('POST', `/broadcasts/${id}/review`, { body: {} });
    expect(review.body).toMatchObject({ status: 'held', accepted_at: null, sample: { to: 'dana@dest.test' } });
    expect((await w.p.resend.broadcasts.send(id)).error).toMatchObject({ name: 'review_required' });
    const accepted = await w.p.api('POST', `/broadcasts/${id}/review`, { body: { accept: true } });
    expect(accepted.body.accepted_at).not.toBeNull();
    expect((await w.p.resend.broadcasts.send(id)).error).toBeNull();
    await until(async () => (await status(id)) === 'sent', 'the broadcast to be sent');
  });

  test('an accepted review is of the content it saw: an edit holds the broadcast again; `review: "accepted"` on the send accepts at once', async () => {
    const id = (await create(SPAMMY)).body.id;
    await w.p.api('POST', `/broadcasts/${id}/review`, { body: { accept: true } });
    await w.p.api('PATCH', `/broadcasts/${id}`, { body: { subject: `${SPAMMY.subject} AGAIN` } });
    const stale = await w.p.api('POST', `/broadcasts/${id}/send`, { body: {} });
    expect(stale.status).toBe(422);
    const sent = await w.p.api('POST', `/broadcasts/${id}/send`, { body: { review: 'accepted' } });
    expect(sent.status).toBe(200);
    const stored = await w.p.svc.store.broadcasts.get(w.p.creds.team_id, id);
    expect(stored?.review?.accepted_at).not.toBeNull();
    expect((await w.p.api('POST', `/broadcasts/${id}/send`, { body: { review: 'yes' } })).body.name).toBe('validation_error');
  });

  test('create with send: true is held the same way, and nothing is created; `review: "accepted"` creates and sends', async () => {
    const before = (await w.p.svc.store.broadcasts.all(w.p.creds.team_id)).length;
    const held = await create(SPAMMY, { send: true });
    expect(held.status).toBe(422);
    expect(held.body.name).toBe('review_required');
    expect((await w.p.svc.store.broadcasts.all(w.p.creds.team_id)).length).toBe(before);
    const ok = await create(SPAMMY, { send: true, review: 'accepted' });
    expect(ok.status).toBe(201);
    await until(async () => (await status(ok.body.id)) === 'sent', 'the broadcast to be sent');
  });

  test('a failing insight holds without rspamd too: a URL shortener; only drafts are reviewed', async () => {
    const id = (await create({ html: '<p>See <a href="https://tinyurl.com/x">this</a></p>' })).body.id;
    const r = await w.p.api('POST', `/broadcasts/${id}/review`, { body: {} });
    expect(r.body.status).toBe('held');
    expect(r.body.findings.join(' ')).toContain('tinyurl.com');
    await w.p.api('POST', `/broadcasts/${id}/send`, { body: { review: 'accepted' } });
    expect((await w.p.api('POST', `/broadcasts/${id}/review`, { body: {} })).body.message).toBe('Only draft broadcasts can be reviewed.');
  });
});

describe('rspamd stopped', () => {
  test('insights say unavailable and why, the failure is counted, and sends go on', async () => {
    await rspamd.stop();
    const id = await send({ html: '<p>Still sending</p>' });
    const body = await insightsOf(id);
    expect(named(body, 'spam_score')).toMatchObject({ status: 'unavailable', fix: null });
    expect(named(body, 'spam_score').evidence).toContain('cannot be reached');
    expect(body.spam).toMatchObject({ status: 'unavailable', score: null, symbols: [] });
    // Delivery never asked rspamd: the email goes out as always.
    await waitForEmail(w.p.svc, { team_id: w.p.creds.team_id, id }, (e) => e.last_event === 'delivered');
    // A spammy broadcast is not held for a score nobody could give (its other insights pass).
    const b = await w.p.api('POST', '/broadcasts', {
      body: { segment_id: segmentId, from: 'Acme <news@example.test>', subject: SPAMMY.subject, html: SPAMMY.html },
    });
    expect((await w.p.api('POST', `/broadcasts/${b.body.id}/send`, { body: {} })).status).toBe(200);
    // Inbound mail is stored all the same, its verdict unavailable.
    await mta(w.smtp!.starttls).sendMail({ from: 'zoe@sender.test', to: 'support@inbound.test', subject: 'Another question', text: 'Hi' } as never);
    await inboundProcessed(w.p);
    const list = await w.p.api('GET', '/emails/receiving');
    const rid = list.body.data.find((e: ApiBody) => e.subject === 'Another question').id;
    expect((await w.p.api('GET', `/emails/receiving/${rid}`)).body.spam).toMatchObject({ status: 'unavailable' });
    const metrics = await (await fetch(`${w.p.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
    const failures = /posthorn_spam_check_failures_total\{reason="unreachable"\} (\d+)/.exec(metrics);
    expect(Number(failures?.[1])).toBeGreaterThanOrEqual(3);
  });
});
