// The Metrics page (issue 35, item 5) in a real browser: per-day bars of each event kind, the
// rates, the breakdowns by sending domain and by mailbox provider, the period and zone pickers,
// and the empty state of a team that sent nothing. Axe-clean, no sideways scroll, at desktop and
// phone widths.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { startMailWorld, type MailWorld } from '../helpers/world';
import { waitForEmail } from '../helpers/emails';
import { axeViolations, launchBrowser, screenshot, signIn } from '../helpers/browser';
import { freePort } from '../helpers/posthorn';

let world: MailWorld;
let browser: Browser;
let base: string;

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  world = await startMailWorld({ 'http.port': port, public_url: base });
  world.sink.respond('gone@dest.test', { code: 550, message: '5.1.1 No such user' });
  for (const to of ['ann@dest.test', 'bob@dest.test', 'gone@dest.test']) {
    const r = await world.p.api('POST', '/emails', { body: { from: 'Acme <hello@example.test>', to, subject: 'Hello', html: '<p>Hello</p>' } });
    expect(r.status).toBe(200);
    await waitForEmail(world.p.svc, { team_id: world.p.creds.team_id, id: r.body.id }, (e) => e.last_event === 'delivered' || e.last_event === 'bounced');
  }
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await world?.stop();
});

async function metrics(viewport: { width: number; height: number }, isMobile: boolean, creds = world.p.creds): Promise<Page> {
  const context = await browser.newContext({ viewport, isMobile });
  const page = await signIn(context, base, { email: creds.admin_email, password: creds.admin_password });
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  // In the navigation (behind the menu button on a phone).
  expect(await page.locator('nav a[href="/dashboard/metrics"]').count()).toBe(1);
  await page.goto(`${base}/dashboard/metrics`);
  await page.getByRole('heading', { name: 'Metrics' }).waitFor();
  return page;
}

describe('the Metrics page', () => {
  for (const [name, viewport, isMobile] of [
    ['desktop', { width: 1440, height: 900 }, false],
    ['phone', { width: 390, height: 844 }, true],
  ] as const) {
    test(`${name}: bars per kind, rates, by domain and by provider`, async () => {
      const page = await metrics(viewport, isMobile && name === 'phone');
      const domains = page.getByRole('table', { name: /Emails by sending domain/ });
      await domains.waitFor();
      const cells = (await domains.locator('tbody tr').first().locator('td').allInnerTexts()).map((t) => t.trim());
      expect(cells.slice(0, 4)).toEqual(['example.test', '3', '2 · 66.7%', '1 · 33.3%']);
      await page.getByRole('table', { name: /Emails by mailbox provider/ }).waitFor();
      expect(await page.locator('.metrics-grid .chart').count()).toBe(8);
      expect(await page.locator('.stat-label').allInnerTexts()).toEqual(['Delivery rate', 'Bounce rate', 'Complaint rate', 'Open rate', 'Click rate']);
      // The zone picker asks again in that zone; a custom period shows its date fields.
      await page.getByLabel('Time zone').selectOption('UTC');
      await page.getByLabel('Period').selectOption('custom');
      await page.locator('.metrics-custom input[type=date]').first().waitFor();
      await domains.waitFor();
      await page.waitForLoadState('networkidle');
      await screenshot(page, `${name === 'phone' ? 'phone-' : ''}metrics`);
      expect(await axeViolations(page)).toEqual([]);
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
      await page.context().close();
    }, 60_000);
  }

  test('a team that sent nothing sees what to do, not zeros', async () => {
    const other = await world.p.newTeam();
    const page = await metrics({ width: 1440, height: 900 }, false, other);
    await page.getByText(/No mail last 30 days/).waitFor();
    expect(await page.locator('.metrics-grid').count()).toBe(0);
    await screenshot(page, 'metrics-empty');
    expect(await axeViolations(page)).toEqual([]);
    await page.context().close();
  }, 60_000);
});
