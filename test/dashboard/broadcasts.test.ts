// The dashboard's broadcast page in a real browser (docs/api.md §13.3, §13.7): a draft's "Send
// test" (the dialog, the emails the sink receives, a refusal of the API shown in the dialog, the
// draft untouched) and "Cancel sending" of a broadcast held half sent by a sending limit (the
// counts in the notice, the page of the canceled broadcast) — an axe-core check and a screenshot of
// each view, at desktop (1440x900) and phone (390x844) width. Waiting for the network to go idle on
// the page of a broadcast sent also guards against its metrics being fetched again at each render.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { simpleParser } from 'mailparser';
import { startMailWorld, type MailWorld } from '../helpers/world';
import { until } from '../helpers/wait';
import { axeViolations, launchBrowser, screenshot, signIn } from '../helpers/browser';
import { freePort } from '../helpers/posthorn';
import { storedEmails } from '../helpers/emails';

let world: MailWorld;
let browser: Browser;
let desktop: BrowserContext;
let phone: BrowserContext;
let page: Page;
let mobile: Page | undefined;
let base: string;
let draftId: string;

async function signedIn(ctx: BrowserContext): Promise<Page> {
  const p = await signIn(ctx, base, { email: world.p.creds.admin_email, password: world.p.creds.admin_password });
  await p.getByRole('heading', { name: 'Overview' }).waitFor();
  return p;
}

/** The phone context's page, signed in on first use (its cookie then serves every later page). */
const phonePage = async () => (mobile ??= await signedIn(phone));

/**
 * The page does not scroll sideways: no wider than the viewport asked for (with `isMobile`,
 * `window.innerWidth` grows with a page too wide, so it cannot be the measure).
 */
const fitsWidth = async (p: Page) => (await p.evaluate(() => document.documentElement.scrollWidth)) <= p.viewportSize()!.width + 1;

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  // 120 emails an hour: a broadcast's first batch (100) goes, its second waits for the next hour.
  world = await startMailWorld({ 'http.port': port, public_url: base, 'limits.emails_per_hour': 120 });
  const { resend } = world.p;
  const seg = (await resend.segments.create({ name: 'Newsletter' })).data!.id;
  await resend.contacts.create({ email: 'ann@dest.test', firstName: 'Ann', segments: [{ id: seg }] } as never);
  await resend.contacts.create({ email: 'bob@dest.test', firstName: 'Bob', segments: [{ id: seg }] } as never);
  draftId = (
    await resend.broadcasts.create({
      segmentId: seg,
      name: 'Spring sale',
      from: 'Acme <news@example.test>',
      subject: 'Spring sale, {{{contact.first_name|friend}}}',
      html: '<p>Hello {{{contact.first_name|friend}}}, 20% off this week.</p><p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a></p>',
    } as never)
  ).data!.id;
  browser = await launchBrowser();
  desktop = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true });
  page = await signedIn(desktop);
}, 60_000);

afterAll(async () => {
  await desktop?.close();
  await phone?.close();
  await browser?.close();
  await world?.stop();
});

describe('send a test of a draft (§13.7)', () => {
  test('the dialog sends to the addresses typed; they get the broadcast marked [Test]; the segment gets nothing', async () => {
    await page.goto(`${base}/dashboard/broadcasts/${draftId}`);
    await page.getByRole('heading', { name: 'Spring sale' }).waitFor();
    // An unsaved edit goes into the test: the dialog saves it first.
    await page.getByLabel('Subject').fill('Spring sale for {{{contact.first_name|friend}}}');
    await page.getByRole('button', { name: 'Send test' }).click();
    const dialog = page.getByRole('dialog', { name: 'Send a test email' });
    // Prefilled with the signed-in user's address.
    expect(await dialog.getByLabel('To').inputValue()).toBe(world.p.creds.admin_email);
    await dialog.getByLabel('To').fill('ann@dest.test, tess@dest.test');
    await screenshot(page, 'broadcast-test-dialog');
    expect(await axeViolations(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Send test' }).click();
    await page.getByText('Test sent to ann@dest.test, tess@dest.test.').waitFor();
    expect(await dialog.isVisible()).toBe(false);
    await until(() => world.sink.to('ann@dest.test').length === 1 && world.sink.to('tess@dest.test').length === 1, 'both tests received');
    const ann = await simpleParser(world.sink.to('ann@dest.test')[0]!.raw);
    expect(ann.subject).toBe('[Test] Spring sale for Ann');
    expect(ann.html).toContain('Hello Ann, 20% off this week.');
    expect((await simpleParser(world.sink.to('tess@dest.test')[0]!.raw)).subject).toBe('[Test] Spring sale for friend');
    // Still a draft, with the edit saved; the segment's other contact got nothing.
    expect((await world.p.api('GET', `/broadcasts/${draftId}`)).body).toMatchObject({
      status: 'draft',
      subject: 'Spring sale for {{{contact.first_name|friend}}}',
    });
    expect(world.sink.to('bob@dest.test')).toEqual([]);
  }, 30_000);

  test("the API's refusal is shown in the dialog, and nothing is sent", async () => {
    const before = (await storedEmails(world.p.svc, world.p.creds.team_id)).length;
    await page.getByRole('button', { name: 'Send test' }).click();
    const dialog = page.getByRole('dialog', { name: 'Send a test email' });
    await dialog.getByLabel('To').fill('a@dest.test, b@dest.test, c@dest.test, d@dest.test, e@dest.test, f@dest.test');
    await dialog.getByRole('button', { name: 'Send test' }).click();
    await dialog.getByRole('alert').waitFor();
    expect(await dialog.getByRole('alert').textContent()).toContain('1 to 5 addresses');
    await screenshot(page, 'broadcast-test-refused');
    expect(await axeViolations(page)).toEqual([]);
    await dialog.getByLabel('To').fill('not an address');
    await dialog.getByRole('button', { name: 'Send test' }).click();
    await until(async () => ((await dialog.getByRole('alert').textContent()) ?? '').includes('`to`'), 'the malformed address refused');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect((await storedEmails(world.p.svc, world.p.creds.team_id)).length).toBe(before);
  }, 30_000);

  test('phone width: the editor and the dialog fit', async () => {
    const p = await phonePage();
    await p.goto(`${base}/dashboard/broadcasts/${draftId}`);
    await p.getByRole('heading', { name: 'Spring sale' }).waitFor();
    await p.frameLocator('iframe[title="Email preview"]').getByText('20% off this week.').waitFor();
    await p.waitForLoadState('networkidle');
    expect(await fitsWidth(p)).toBe(true);
    await screenshot(p, 'phone-broadcast-draft');
    await p.getByRole('button', { name: 'Send test' }).click();
    await p.getByRole('dialog', { name: 'Send a test email' }).getByLabel('To').waitFor();
    expect(await fitsWidth(p)).toBe(true);
    await screenshot(p, 'phone-broadcast-test-dialog');
    expect(await axeViolations(p)).toEqual([]);
    await p.keyboard.press('Escape');
  }, 30_000);
});

describe('cancel while sending (§13.3)', () => {
  test('a broadcast held half sent: "Cancel sending" stops it, the notice gives the counts, the page says it was canceled', async () => {
    const { p } = world;
    const t = p.creds.team_id;
    const seg = (await p.api('POST', '/segments', { body: { name: 'Everyone' } })).body.id;
    // Segment order is contact order: 60 delivered at once, then 90 at a held destination.
    const people = [...Array.from({ length: 60 }, (_, i) => `d${i}@dest.test`), ...Array.from({ length: 90 }, (_, i) => `h${i}@held.test`)];
    for (const email of people) expect((await p.api('POST', '/contacts', { body: { email, segments: [seg] } })).status).toBe(201);
    expect((await p.api('POST', '/queue/held.test/hold')).status).toBe(200);
    const id = (
      await p.resend.broadcasts.create({ segmentId: seg, name: 'Big news', from: 'news@example.test', subject: 'Big news', text: 'News.', send: true })
    ).data!.id;
    const mine = async () => (await storedEmails(p.svc, t)).filter((e) => e.broadcast_id === id);
    // The first batch: 60 delivered, 40 held in the queue; the limit keeps the broadcast queued.
    await until(async () => (await mine()).filter((e) => e.last_event === 'delivered').length === 60, '60 emails delivered', 20_000);
    expect((await p.svc.store.broadcasts.get(t, id))!.status).toBe('queued');

    // At phone width first: the page of a broadcast being sent, its cancel button.
    const small = await phonePage();
    await small.goto(`${base}/dashboard/broadcasts/${id}`);
    await small.getByRole('button', { name: 'Cancel sending' }).waitFor();
    await small.waitForLoadState('networkidle');
    expect(await fitsWidth(small)).toBe(true);
    await screenshot(small, 'phone-broadcast-sending');
    expect(await axeViolations(small)).toEqual([]);

    await page.goto(`${base}/dashboard/broadcasts/${id}`);
    await page.getByText('Sending: recipient emails are being created.').waitFor();
    await page.waitForLoadState('networkidle');
    await screenshot(page, 'broadcast-sending');
    expect(await axeViolations(page)).toEqual([]);
    // Asked in the dashboard's own dialog (not the browser's confirm()).
    await page.getByRole('button', { name: 'Cancel sending' }).click();
    const confirm = page.getByRole('dialog', { name: 'Are you sure?' });
    const asked = (await confirm.locator('.ask-message').textContent()) ?? '';
    expect(await axeViolations(page)).toEqual([]);
    await confirm.getByRole('button', { name: 'Stop sending' }).click();
    await page.getByText('Sending canceled: 40 queued emails canceled, 60 had already gone out.').waitFor();
    expect(asked).toContain('Stop sending this broadcast?');
    await page.getByText('Sending was canceled').waitFor();
    expect(await page.locator('.page-header').getByText('canceled', { exact: true }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Cancel sending' }).count()).toBe(0);
    await page.waitForLoadState('networkidle');
    await screenshot(page, 'broadcast-canceled');
    expect(await axeViolations(page)).toEqual([]);
    // What the API says: canceled, the held emails out of the queue.
    expect((await p.api('GET', `/broadcasts/${id}`)).body.status).toBe('canceled');
    expect((await mine()).filter((e) => e.last_event === 'canceled').length).toBe(40);

    await small.reload();
    await small.getByText('Sending was canceled').waitFor();
    await small.waitForLoadState('networkidle');
    expect(await fitsWidth(small)).toBe(true);
    await screenshot(small, 'phone-broadcast-canceled');
  }, 90_000);
});
