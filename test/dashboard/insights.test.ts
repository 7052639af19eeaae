// The dashboard's deliverability pages in a real browser, against a private rspamd on loopback
// (test/helpers/rspamd.ts): an email's insights (each check with its verdict and why, rspamd's
// score, action and rules), a broadcast's review before it is sent (a clean one confirmed, a
// spammy one held until its findings are accepted through POST /broadcasts/{id}/review), and,
// with rspamd stopped, a spam score said to be unavailable rather than shown — an axe-core check
// and screenshots at desktop and phone width of each.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startMailWorld, type MailWorld } from '../helpers/world';
import { startRspamd, type TestRspamd } from '../helpers/rspamd';
import { waitForEmail } from '../helpers/emails';
import { until } from '../helpers/wait';
import { axeViolations, launchBrowser, screenshot, signIn } from '../helpers/browser';
import { freePort } from '../helpers/posthorn';

const DESKTOP = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };

/** A spammer's message, as rspamd's rules see one (the same as test/api/insights.test.ts). */
const SPAMMY = {
  subject: 'YOU HAVE WON $1,000,000!!! CLAIM YOUR CASH PRIZE NOW!!!',
  html: '<p style="font-size:40px;color:red">CONGRATULATIONS!!! YOU HAVE WON $1,000,000 CASH</p><p>Claim your FREE money now! 100% FREE, no risk, act now.</p><p style="color:#ffffff;font-size:1px">hidden text hidden text</p>',
};

let world: MailWorld;
let rspamd: TestRspamd;
let browser: Browser;
let desktop: BrowserContext;
let phone: BrowserContext;
let page: Page;
let small: Page;
let base: string;
let emailId: string;
let segmentId: string;

const newBroadcast = async (name: string, content: { subject: string; html: string }) =>
  (
    await world.p.api('POST', '/broadcasts', {
      body: { name, segment_id: segmentId, from: 'Acme <news@example.test>', ...content },
    })
  ).body.id as string;
const broadcast = async (id: string) => (await world.p.api('GET', `/broadcasts/${id}`)).body;
const noSideScroll = (p: Page) => p.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1);

beforeAll(async () => {
  const port = await freePort();
  const rspamdPort = await freePort();
  base = `http://127.0.0.1:${port}`;
  world = await startMailWorld({ 'http.port': port, public_url: base, 'spam.rspamd_url': `http://127.0.0.1:${rspamdPort}` });
  rspamd = await startRspamd({ dns: world.dns.address, port: rspamdPort });
  const { resend } = world.p;
  const sent = await resend.emails.send({
    from: 'Acme <no-reply@example.test>',
    to: ['ann@dest.test'],
    subject: 'Your order has shipped',
    html: '<p>Track it <a href="https://bit.ly/abc">here</a> or see <a href="https://elsewhere.test/x">our partner</a>.</p><img src="https://example.test/logo.png">',
  });
  emailId = sent.data!.id;
  await waitForEmail(world.p.svc, { team_id: world.p.creds.team_id, id: emailId }, (e) => e.last_event === 'delivered');
  const segment = await resend.segments.create({ name: 'Customers' });
  segmentId = segment.data!.id;
  await resend.contacts.create({ email: 'dana@dest.test', firstName: 'Dana', segments: [{ id: segmentId }] } as never);

  browser = await launchBrowser();
  desktop = await browser.newContext({ viewport: DESKTOP });
  page = await signIn(desktop, base, { email: world.p.creds.admin_email, password: world.p.creds.admin_password });
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  phone = await browser.newContext({ viewport: PHONE, isMobile: true });
  small = await signIn(phone, base, { email: world.p.creds.admin_email, password: world.p.creds.admin_password });
  await small.getByRole('heading', { name: 'Overview' }).waitFor();
}, 180_000);

afterAll(async () => {
  await phone?.close();
  await desktop?.close();
  await browser?.close();
  await rspamd?.stop();
  await world?.stop();
});

describe("an email's insights", () => {
  test("each check with its verdict and why; rspamd's score, action and rules", async () => {
    await page.goto(`${base}/dashboard/emails/${emailId}`);
    const list = page.getByRole('list', { name: 'Insights' });
    await list.waitFor({ timeout: 15_000 });
    const api = (await world.p.api('GET', `/emails/${emailId}/insights`)).body;
    // Every insight the API gives, each with its verdict and evidence; the ones to fix first.
    const items = list.locator(':scope > li');
    expect(await items.count()).toBe(api.insights.length);
    const first = items.first();
    expect(await first.locator('.badge').textContent()).toBe('fail');
    expect(await first.textContent()).toContain('No URL shorteners');
    expect(await first.textContent()).toContain('bit.ly');
    for (const i of api.insights as { name: string; status: string; evidence: string; fix: string | null }[]) {
      const item = items.filter({ hasText: i.evidence });
      expect(await item.count()).toBe(1);
      if (i.fix) expect(await item.textContent()).toContain(i.fix);
    }
    expect(await list.getByText('no-reply@example.test', { exact: false }).count()).toBe(1);
    // rspamd's verdict as it gave it: the score, the action, the score it rejects at, the rules.
    expect(api.spam.status).toBe('scored');
    const score = page.getByRole('region', { name: 'Spam score' });
    expect(await score.locator('.spam-number').textContent()).toBe(String(api.spam.score));
    expect(await score.textContent()).toContain(`${api.spam.action}`);
    expect(await score.textContent()).toContain(`rejects at ${api.spam.required_score}`);
    const verdict = items.filter({ hasText: 'Spam score' });
    await verdict.getByText(/rules? counted/).click();
    await verdict.getByText('R_DKIM_ALLOW').waitFor();
    await page.waitForLoadState('networkidle');
    await screenshot(page, 'email-insights');
    expect(await axeViolations(page)).toEqual([]);

    await small.goto(`${base}/dashboard/emails/${emailId}`);
    await small.getByRole('list', { name: 'Insights' }).waitFor({ timeout: 15_000 });
    await small.locator('.spam-number').waitFor();
    await small.waitForLoadState('networkidle');
    await screenshot(small, 'phone-email-insights');
    expect(await axeViolations(small)).toEqual([]);
    // The insights keep to the width of their card (the page's own width is the attempts table's).
    expect(await small.getByRole('list', { name: 'Insights' }).evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
  }, 40_000);

  test('"Check again" computes them anew: a DMARC record published meanwhile now passes', async () => {
    await page.goto(`${base}/dashboard/emails/${emailId}`);
    const dmarc = page.getByRole('list', { name: 'Insights' }).locator(':scope > li').filter({ hasText: 'DMARC policy' });
    await dmarc.waitFor({ timeout: 15_000 });
    expect(await dmarc.locator('.badge').textContent()).toBe('warning');
    world.dns.zone.set('_dmarc.example.test', 'TXT', ['v=DMARC1; p=reject']);
    try {
      await page.getByRole('button', { name: 'Check again' }).click();
      await until(async () => (await dmarc.locator('.badge').textContent()) === 'pass', 'the DMARC insight to pass');
      expect(await dmarc.textContent()).toContain('p=reject');
    } finally {
      world.dns.zone.clear('_dmarc.example.test', 'TXT');
    }
  }, 30_000);
});

describe("a broadcast's review before sending", () => {
  test('a clean broadcast: "Send now" shows the review, which confirms the send', async () => {
    const id = await newBroadcast('April news', { subject: 'April news', html: '<p>News for {{{contact.first_name|you}}}</p>' });
    await page.goto(`${base}/dashboard/broadcasts/${id}`);
    await page.getByRole('button', { name: 'Send now' }).click();
    const dialog = page.getByRole('dialog', { name: 'Review before sending' });
    await dialog.getByText('Nothing holds this broadcast.').waitFor({ timeout: 15_000 });
    await dialog.getByText('dana@dest.test').waitFor();
    await dialog.locator('.spam-number').waitFor();
    expect(await dialog.getByRole('checkbox').count()).toBe(0);
    await screenshot(page, 'broadcast-review-pass');
    expect(await axeViolations(page)).toEqual([]);
    // Cancelled, nothing is sent.
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect((await broadcast(id)).status).toBe('draft');
    await page.getByRole('button', { name: 'Send now' }).click();
    await dialog.getByRole('button', { name: 'Send now' }).click();
    await page.getByText('Broadcast is being sent.').waitFor();
    await until(async () => (await broadcast(id)).status === 'sent', 'the broadcast to be sent');
    const stored = await world.p.svc.store.broadcasts.get(world.p.creds.team_id, id);
    expect(stored?.review).toMatchObject({ status: 'pass', accepted_at: null });
  }, 40_000);

  test('above the threshold: held with its findings and score; sent only once the findings are accepted', async () => {
    const id = await newBroadcast('Prize draw', SPAMMY);
    await page.goto(`${base}/dashboard/broadcasts/${id}`);
    await page.getByRole('button', { name: 'Send now' }).click();
    const dialog = page.getByRole('dialog', { name: 'Review before sending' });
    await dialog.getByText('Held for review.').waitFor({ timeout: 15_000 });
    const review = (await world.p.api('POST', `/broadcasts/${id}/review`, { body: {} })).body;
    expect(review.status).toBe('held');
    for (const f of review.findings as string[]) await dialog.getByText(f, { exact: true }).first().waitFor();
    expect(Number(await dialog.locator('.spam-number').textContent())).toBeGreaterThanOrEqual(review.threshold);
    // Accepting takes an explicit tick.
    const accept = dialog.getByRole('button', { name: 'Accept and send' });
    expect(await accept.isDisabled()).toBe(true);
    await screenshot(page, 'broadcast-review-held');
    expect(await axeViolations(page)).toEqual([]);

    await small.goto(`${base}/dashboard/broadcasts/${id}`);
    await small.getByRole('button', { name: 'Send now' }).click();
    await small.getByRole('dialog', { name: 'Review before sending' }).getByText('Held for review.').waitFor({ timeout: 15_000 });
    await screenshot(small, 'phone-broadcast-review-held');
    expect(await axeViolations(small)).toEqual([]);
    expect(await noSideScroll(small)).toBe(true);
    await small.getByRole('dialog', { name: 'Review before sending' }).getByRole('button', { name: 'Cancel' }).click();

    expect((await broadcast(id)).status).toBe('draft');
    await dialog.getByRole('checkbox', { name: /I have read the findings/ }).check();
    await accept.click();
    await page.getByText('Broadcast is being sent.').waitFor();
    await until(async () => (await broadcast(id)).status === 'sent', 'the broadcast to be sent');
    // Accepted through the review route: the review it went out with says so.
    const stored = await world.p.svc.store.broadcasts.get(world.p.creds.team_id, id);
    expect(stored?.review).toMatchObject({ status: 'held' });
    expect(stored?.review?.accepted_at).not.toBeNull();
  }, 60_000);
});

describe('rspamd stopped', () => {
  test('the spam score is said to be unavailable, and why; nothing pretends to a score', async () => {
    await rspamd.stop();
    const id = (await world.p.resend.emails.send({ from: 'Acme <hello@example.test>', to: ['ann@dest.test'], subject: 'Still sending', html: '<p>Hi</p>' }))
      .data!.id;
    await waitForEmail(world.p.svc, { team_id: world.p.creds.team_id, id }, (e) => e.last_event === 'delivered');
    await page.goto(`${base}/dashboard/emails/${id}`);
    const list = page.getByRole('list', { name: 'Insights' });
    await list.waitFor({ timeout: 15_000 });
    const spam = list.locator(':scope > li').filter({ hasText: 'Spam score' });
    expect(await spam.locator('.badge').textContent()).toBe('unavailable');
    expect(await spam.textContent()).toContain('cannot be reached');
    // The headline says so too, and shows no number.
    const score = page.getByRole('region', { name: 'Spam score' });
    expect(await score.locator('.badge').textContent()).toBe('unavailable');
    expect(await score.textContent()).toContain('rspamd could not score it');
    expect(await page.locator('.spam-number').count()).toBe(0);
    await page.waitForLoadState('networkidle');
    await screenshot(page, 'email-insights-unavailable');
    expect(await axeViolations(page)).toEqual([]);
  }, 30_000);
});
