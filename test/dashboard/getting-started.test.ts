// First run (issue 35, item 2): a fresh install's Overview opens on the getting-started checklist
// and gives no verdict on zero data; each step ticks itself from real state as the domain is
// verified and the first email — sent from the checklist's own form to the sandbox address — is
// delivered; done, it can be dismissed. At desktop and phone width, axe-checked, with screenshots.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startPosthorn, freePort, type Running } from '../helpers/posthorn';
import { startDnsServer, type TestDns } from '../helpers/dns';
import { verifiedDomain } from '../helpers/emails';
import { until } from '../helpers/wait';
import { axeViolations, launchBrowser, screenshot, signIn } from '../helpers/browser';

let p: Running;
let dns: TestDns;
let browser: Browser;
let base: string;

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  dns = await startDnsServer();
  p = await startPosthorn({ 'http.port': port, public_url: base, 'dns.servers': [dns.address] });
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await p?.stop();
  await dns?.close();
});

const steps = (page: Page) => page.getByRole('region', { name: /Get started|You are all set/ }).locator('ol.checklist > li');
const stepDone = async (page: Page, title: string) => (await steps(page).filter({ hasText: title }).getAttribute('class')) === 'done';

describe('first run', () => {
  let context: BrowserContext;
  let page: Page;
  beforeAll(async () => {
    context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    page = await signIn(context, base, { email: p.creds.admin_email, password: p.creds.admin_password });
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
  }, 30_000);
  afterAll(() => context?.close());

  test('a fresh install: the checklist, and no verdict on zero data', async () => {
    await page.getByRole('region', { name: 'Get started' }).waitFor({ timeout: 10_000 });
    await page.waitForLoadState('networkidle');
    expect(await steps(page).count()).toBe(4);
    expect(await stepDone(page, 'Add a domain')).toBe(false);
    // The bootstrap key exists: that step is done from the start.
    expect(await stepDone(page, 'Create an API key')).toBe(true);
    expect(await stepDone(page, 'Send your first email')).toBe(false);
    const main = (await page.locator('main').textContent()) ?? '';
    expect(main).not.toContain('Healthy');
    expect(main).not.toContain('Every accepted email has been handed');
    expect(main).toContain('Nothing sent in the last 7 days.');
    expect(await page.locator('main .uplot').count()).toBe(0);
    // The add-domain link opens the domain form.
    expect(await page.getByRole('link', { name: 'Add the domain you send from' }).getAttribute('href')).toBe('/dashboard/domains?add=1');
    await screenshot(page, 'getting-started-fresh');
    // Snippets aimed at this install: the SDK's baseUrl, curl, SMTP with user `resend`.
    const snippet = page.getByRole('region', { name: 'Node.js example' });
    expect(await snippet.textContent()).toContain(`baseUrl: '${base}'`);
    expect(await snippet.textContent()).toContain(`RESEND_BASE_URL=${base}`);
    await page.getByRole('tab', { name: 'curl' }).click();
    expect(await page.getByRole('region', { name: 'curl example' }).textContent()).toContain(`curl -X POST '${base}/emails'`);
    await page.getByRole('tab', { name: 'SMTP' }).click();
    expect(await page.getByRole('region', { name: 'SMTP example' }).textContent()).toContain('Username: resend');
    expect(await axeViolations(page)).toEqual([]);
  }, 30_000);

  test('at phone width the checklist fits the screen', async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true });
    const pg = await signIn(phone, base, { email: p.creds.admin_email, password: p.creds.admin_password });
    await pg.getByRole('region', { name: 'Get started' }).waitFor({ timeout: 10_000 });
    await pg.waitForLoadState('networkidle');
    await screenshot(pg, 'phone-getting-started');
    expect(await pg.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect(await axeViolations(pg)).toEqual([]);
    await phone.close();
  }, 30_000);

  test('the domain form opens from the checklist link', async () => {
    await page.getByRole('link', { name: 'Add the domain you send from' }).click();
    await page.getByRole('dialog').waitFor({ timeout: 10_000 });
    await page.goto(`${base}/dashboard`);
  }, 20_000);

  test('the steps tick themselves: a verified domain, a first email sent from the checklist to the sandbox, delivered; then dismissed', async () => {
    await verifiedDomain(p, 'example.test', { dns });
    await page.reload();
    await page.getByRole('region', { name: 'Get started' }).waitFor({ timeout: 10_000 });
    await until(() => stepDone(page, 'Add a domain'), 'the domain step done');
    const from = page.getByLabel('From', { exact: true });
    expect(await from.inputValue()).toBe('Posthorn <onboarding@example.test>');
    expect(await page.getByLabel('To', { exact: true }).inputValue()).toBe('delivered@resend.dev');
    await page.getByRole('button', { name: 'Send test email' }).click();
    await until(() => stepDone(page, 'Send your first email'), 'the send step done');
    const sent = (await p.api('GET', '/emails')).body.data;
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ to: ['delivered@resend.dev'], from: 'Posthorn <onboarding@example.test>' });
    await until(async () => (await p.api('GET', `/emails/${sent[0].id}`)).body.last_event === 'delivered', 'delivered');
    // The live stream may tick the last step before the click: Check again is then gone, and not needed.
    const allSet = page.getByRole('region', { name: 'You are all set' });
    if (!(await allSet.isVisible()))
      await page
        .getByRole('button', { name: 'Check again' })
        .click({ timeout: 5_000 })
        .catch(() => {});
    await allSet.waitFor({ timeout: 10_000 });
    // The page around the checklist follows: the email is counted, the empty state gone.
    await until(async () => !((await page.locator('main').textContent()) ?? '').includes('Nothing sent in the last 7 days.'), 'the overview counts the email');
    expect(await page.getByRole('link', { name: 'Delivered' }).getAttribute('href')).toBe(`/dashboard/emails/${sent[0].id}`);
    await page.waitForLoadState('networkidle');
    await screenshot(page, 'getting-started-done');
    expect(await axeViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Dismiss' }).click();
    expect(await page.getByRole('region', { name: 'You are all set' }).count()).toBe(0);
    await page.reload();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.waitForLoadState('networkidle');
    expect(await page.locator('ol.checklist').count()).toBe(0);
  }, 40_000);
});
