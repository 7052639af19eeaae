// The broadcast block editor in a real browser (issue 35 item 4): a new user makes a broadcast with
// blocks (a heading, text, a button from the `/` menu, the footer), previews it as a contact, sends
// a test whose received HTML is the table markup with the unsubscribe link; the draft autosaves and
// reopens as blocks after a reload; leaving with unsaved changes asks first (a dialog, not
// confirm()); and no Content-Security-Policy violation is reported on the way — an axe-core check
// and screenshots at desktop (1440x900) and phone (390x844) width.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { simpleParser } from 'mailparser';
import { startMailWorld, type MailWorld } from '../helpers/world';
import { until } from '../helpers/wait';
import { join } from 'node:path';
import { axeViolations, launchBrowser, SCREENSHOTS, screenshot, signIn } from '../helpers/browser';
import { freePort } from '../helpers/posthorn';

let world: MailWorld;
let browser: Browser;
let desktop: BrowserContext;
let phone: BrowserContext;
let page: Page;
let base: string;
let draftId: string;

/** CSP violations the page reports (`securitypolicyviolation`), gathered from before its scripts run. */
async function watchCsp(ctx: BrowserContext) {
  await ctx.addInitScript(() => {
    const w = window as unknown as { cspViolations: string[] };
    w.cspViolations = [];
    document.addEventListener('securitypolicyviolation', (e) => w.cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
}
const cspViolations = (p: Page) => p.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations);

const fitsWidth = async (p: Page) => (await p.evaluate(() => document.documentElement.scrollWidth)) <= p.viewportSize()!.width + 1;

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  world = await startMailWorld({ 'http.port': port, public_url: base });
  const seg = (await world.p.resend.segments.create({ name: 'Newsletter' })).data!.id;
  await world.p.resend.contacts.create({ email: 'ann@dest.test', firstName: 'Ann', segments: [{ id: seg }] } as never);
  browser = await launchBrowser();
  desktop = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true });
  await watchCsp(desktop);
  await watchCsp(phone);
  page = await signIn(desktop, base, { email: world.p.creds.admin_email, password: world.p.creds.admin_password });
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
}, 60_000);

afterAll(async () => {
  await desktop?.close();
  await phone?.close();
  await browser?.close();
  await world?.stop();
});

describe('a broadcast built with blocks', () => {
  test('created from the dashboard, it opens in the block editor; heading, text, a button from the `/` menu; autosaved', async () => {
    await page.goto(`${base}/dashboard/broadcasts`);
    await page.getByRole('button', { name: 'New broadcast' }).click();
    const dialog = page.getByRole('dialog', { name: 'New broadcast' });
    await dialog.getByLabel('Name').fill('Spring letter');
    await dialog.getByLabel('Segment').selectOption({ label: 'Newsletter' });
    await dialog.getByLabel('From').fill('Acme <news@example.test>');
    await dialog.getByLabel('Subject').fill('Spring is here, {{{contact.first_name|friend}}}');
    await dialog.getByRole('button', { name: 'Create draft' }).click();
    await page.waitForURL(/\/dashboard\/broadcasts\/[0-9a-f-]{36}$/);
    draftId = page.url().split('/').pop()!;
    const doc = page.getByRole('textbox', { name: 'Email content' });
    await doc.waitFor();
    // The heading: its text replaced.
    await doc.locator('h1').click();
    await page.keyboard.press('End');
    await page.keyboard.press('Shift+Home');
    await page.keyboard.type('Spring news');
    // Text after the greeting's line, then a Markdown shortcut (`## `) and a button from the `/` menu.
    await doc.locator('p', { hasText: 'Write your message here.' }).click();
    await page.keyboard.press('End');
    await page.keyboard.press('Enter');
    await page.keyboard.type('## Our offer');
    await page.keyboard.press('Enter');
    await page.keyboard.type('Twenty percent off all week.');
    await page.keyboard.press('Enter');
    await page.keyboard.type('/butt');
    const menu = page.getByRole('listbox', { name: 'Insert' });
    await menu.getByRole('option', { name: /Button/ }).waitFor();
    await page.keyboard.press('Enter');
    await menu.waitFor({ state: 'detached' });
    // The button's settings: its text and link.
    await doc.locator('.blk-button-face').click();
    const settings = page.getByRole('group', { name: 'Button settings' });
    await settings.getByLabel('Button text').fill('Shop the sale');
    await settings.getByLabel('Button text').press('Tab');
    await settings.getByLabel('Link').fill('https://shop.example.test/sale');
    await settings.getByLabel('Link').press('Tab');
    await doc.locator('.blk-button-face', { hasText: 'Shop the sale' }).waitFor();
    expect(await doc.locator('h2').textContent()).toBe('Our offer');
    expect(await doc.locator('footer').count()).toBe(1);
    // Autosaved through PATCH /broadcasts/{id}: the API's html is the table markup.
    await page.getByText('All changes saved').waitFor({ timeout: 15_000 });
    const saved = (await world.p.api('GET', `/broadcasts/${draftId}`)).body as { html: string };
    expect(saved.html).toContain('role="presentation"');
    expect(saved.html).toContain('https://shop.example.test/sale');
    expect(saved.html).toContain('{{{RESEND_UNSUBSCRIBE_URL}}}');
    expect(saved.html).toContain('<h1');
    await screenshot(page, 'block-editor');
    expect(await axeViolations(page)).toEqual([]);
  }, 60_000);

  test('the edits persist across a reload and reopen as blocks', async () => {
    await page.reload();
    const doc = page.getByRole('textbox', { name: 'Email content' });
    await doc.locator('h1', { hasText: 'Spring news' }).waitFor();
    expect(await doc.locator('.blk-button-face').textContent()).toBe('Shop the sale');
    expect(await page.getByRole('tab', { name: 'Blocks' }).getAttribute('aria-selected')).toBe('true');
  }, 30_000);

  test('a link being typed survives a render of the page (the broadcast changed and reloaded) and is applied when committed', async () => {
    const stream = page.waitForRequest((r) => r.url().endsWith('/auth/session/events'));
    await page.reload();
    const doc = page.getByRole('textbox', { name: 'Email content' });
    await doc.locator('.blk-button-face').click();
    await stream;
    const link = page.getByRole('group', { name: 'Button settings' }).getByLabel('Link');
    await link.fill('https://shop.example.test/spring');
    // A change of the broadcast heard on the live stream: the page reloads its record and renders again.
    const reloaded = page.waitForResponse((r) => r.request().method() === 'GET' && r.url().endsWith(`/broadcasts/${draftId}`));
    expect((await world.p.api('PATCH', `/broadcasts/${draftId}`, { body: { preview_text: 'Twenty percent off' } })).status).toBe(200);
    await reloaded;
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 50))));
    expect(await link.inputValue()).toBe('https://shop.example.test/spring');
    await link.press('Tab');
    await page.getByText('All changes saved').waitFor({ timeout: 15_000 });
    await until(
      async () => ((await world.p.api('GET', `/broadcasts/${draftId}`)).body.html as string).includes('https://shop.example.test/spring'),
      'the link saved',
    );
    // Back as the other tests expect it.
    await doc.locator('.blk-button-face').click();
    await link.fill('https://shop.example.test/sale');
    await link.press('Tab');
    await until(
      async () => ((await world.p.api('GET', `/broadcasts/${draftId}`)).body.html as string).includes('https://shop.example.test/sale'),
      'the link restored',
    );
  }, 40_000);

  test('the preview shows the placeholders filled from a chosen contact', async () => {
    await page.getByLabel('Preview as contact').selectOption({ label: 'ann@dest.test' });
    const frame = page.frameLocator('iframe[title="Email preview"]');
    await frame.getByText('Hello Ann,').waitFor();
    await page.getByText('Spring is here, Ann').waitFor();
    // The editor and the preview side by side, as the window shows them (docs/screenshots/block-editor.png).
    await page.getByRole('tab', { name: 'Blocks' }).scrollIntoViewIfNeeded();
    await page.mouse.wheel(0, 380);
    await page.screenshot({ path: join(SCREENSHOTS, 'block-editor-window.png') });
  }, 30_000);

  test('leaving with unsaved changes asks first; staying keeps the page', async () => {
    await page.getByLabel('Name').fill('Spring letter (final)');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Broadcasts' }).click();
    const ask = page.getByRole('dialog', { name: 'Are you sure?' });
    await ask.getByText('You have unsaved changes').waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await ask.getByRole('button', { name: 'Cancel' }).click();
    expect(page.url()).toBe(`${base}/dashboard/broadcasts/${draftId}`);
    await page.getByText('All changes saved').waitFor({ timeout: 15_000 });
    expect(((await world.p.api('GET', `/broadcasts/${draftId}`)).body as { name: string }).name).toBe('Spring letter (final)');
    // Saved: leaving no longer asks, and the browser's own prompt is not armed.
    let prompted = false;
    page.once('dialog', (d) => {
      prompted = true;
      void d.dismiss();
    });
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Broadcasts' }).click();
    await page.getByRole('heading', { name: 'Broadcasts', exact: true }).waitFor();
    expect(prompted).toBe(false);
  }, 30_000);

  test('a test send: the received HTML is the table markup with the unsubscribe link', async () => {
    await page.goto(`${base}/dashboard/broadcasts/${draftId}`);
    await page.getByRole('textbox', { name: 'Email content' }).waitFor();
    await page.getByRole('button', { name: 'Send test' }).click();
    const dialog = page.getByRole('dialog', { name: 'Send a test email' });
    await dialog.getByLabel('To').fill('ann@dest.test');
    await dialog.getByRole('button', { name: 'Send test' }).click();
    await until(() => world.sink.to('ann@dest.test').length === 1, 'the test received');
    const mail = await simpleParser(world.sink.to('ann@dest.test')[0]!.raw);
    expect(mail.subject).toBe('[Test] Spring is here, Ann');
    const html = String(mail.html);
    expect(html).toContain('<table role="presentation"');
    expect(html).toContain('Hello Ann,');
    expect(html).toContain('Shop the sale');
    // The footer's link: the recipient's own unsubscribe URL (docs/api.md §13.4).
    expect(html).toContain(`<a href="${base}/u/`);
    expect(html).toMatch(/<a href="[^"]+\/u\/[^"]+"[^>]*>Unsubscribe<\/a>/);
    expect(html).not.toContain('{{{');
  }, 30_000);

  test('the broadcast is sent to its segment from the review dialog', async () => {
    await page.getByRole('button', { name: 'Send now' }).click();
    const review = page.getByRole('dialog', { name: 'Review before sending' });
    await review.waitFor();
    await review
      .getByRole('button', { name: /Send now|Accept and send/ })
      .last()
      .click();
    await until(() => world.sink.to('ann@dest.test').length === 2, 'the broadcast received');
    const html = String((await simpleParser(world.sink.to('ann@dest.test')[1]!.raw)).html);
    expect(html).toContain('<table role="presentation"');
    expect(html).toMatch(/<a href="[^"]+\/u\/[^"]+"[^>]*>Unsubscribe<\/a>/);
  }, 60_000);

  test('a template: HTML mode until switched to blocks; a variable from the `/` menu; saved and reopened as blocks', async () => {
    const id = (
      await world.p.api('POST', '/templates', {
        body: { name: 'Receipt', html: '<p>Hello,</p>\n<p></p>\n', variables: [{ key: 'ORDER', type: 'string', fallback_value: 'n/a' }] },
      })
    ).body.id as string;
    await page.goto(`${base}/dashboard/templates/${id}`);
    await page.getByRole('textbox', { name: 'HTML' }).waitFor();
    await page.getByRole('tab', { name: 'Blocks' }).click();
    const doc = page.getByRole('textbox', { name: 'Email content' });
    await doc.locator('p', { hasText: 'Write your message here.' }).click();
    await page.keyboard.press('End');
    await page.keyboard.type(' Order ');
    await page.keyboard.type('/ORDER');
    await page
      .getByRole('listbox', { name: 'Insert' })
      .getByRole('option', { name: /Variable ORDER/ })
      .waitFor();
    await page.keyboard.press('Enter');
    await doc.locator('.blk-ph', { hasText: 'ORDER' }).waitFor();
    await page.frameLocator('iframe[title="Email preview"]').getByText('Write your message here. Order n/a').waitFor();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('button', { name: 'Saved', exact: true }).waitFor();
    const html = ((await world.p.api('GET', `/templates/${id}`)).body as { html: string }).html;
    expect(html).toContain('<table role="presentation"');
    expect(html).toContain('Order {{{ORDER}}}');
    await page.reload();
    await page.getByRole('textbox', { name: 'Email content' }).locator('.blk-ph', { hasText: 'ORDER' }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
  }, 60_000);

  test('no Content-Security-Policy violation was reported', async () => {
    expect(await cspViolations(page)).toEqual([]);
  });

  test("the live stream opens after the editor's chunk has loaded: a tool waiting for network idle is not held", async () => {
    // The page opens its live stream (a request that never ends) once its own work has been quiet
    // for a while (web/src/api.ts `quiet`). A slow chunk of code counts as its work: had the
    // stream opened while the chunk was still loading, the browser would never be 500 ms without a
    // request, and `networkidle` would never come (the dashboard tests wait for it).
    const ctx = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const times: { chunkDone?: number; stream?: number } = {};
    await ctx.route(/\/dashboard\/assets\/chunk-[^/]*\.js$/, async (route) => {
      await Bun.sleep(1_500);
      await route.continue();
    });
    const p = await signIn(ctx, base, { email: world.p.creds.admin_email, password: world.p.creds.admin_password });
    await p.getByRole('heading', { name: 'Overview' }).waitFor();
    p.on('requestfinished', (r) => {
      if (/\/chunk-[^/]*\.js$/.test(r.url())) times.chunkDone = Date.now();
    });
    p.on('request', (r) => {
      if (r.url().endsWith('/auth/session/events')) times.stream ??= Date.now();
    });
    const id = (await world.p.api('POST', `/broadcasts/${draftId}/duplicate`)).body.id as string;
    await p.goto(`${base}/dashboard/broadcasts/${id}`);
    await p.getByRole('textbox', { name: 'Email content' }).locator('h1').waitFor();
    await p.waitForLoadState('networkidle', { timeout: 20_000 });
    await until(() => times.stream !== undefined, 'the live stream opened');
    expect(times.chunkDone).toBeDefined();
    expect(times.stream!).toBeGreaterThan(times.chunkDone!);
    await ctx.close();
  }, 40_000);

  test('phone width: the block editor fits', async () => {
    const p = await signIn(phone, base, { email: world.p.creds.admin_email, password: world.p.creds.admin_password });
    await p.getByRole('heading', { name: 'Overview' }).waitFor();
    const id = (await world.p.api('POST', `/broadcasts/${draftId}/duplicate`)).body.id as string;
    await p.goto(`${base}/dashboard/broadcasts/${id}`);
    await p.getByRole('textbox', { name: 'Email content' }).locator('h1').waitFor();
    await p.frameLocator('iframe[title="Email preview"]').getByText('Spring news').waitFor();
    await p.waitForLoadState('networkidle');
    expect(await fitsWidth(p)).toBe(true);
    await screenshot(p, 'phone-block-editor');
    expect(await axeViolations(p)).toEqual([]);
    expect(await cspViolations(p)).toEqual([]);
  }, 30_000);
});
