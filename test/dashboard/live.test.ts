// Live pages (issue 35, item 3; docs/api.md §19.15) in a real browser: an email's page, open while
// the destination defers it, shows it delivered once the retry succeeds — without a reload (the
// reported defect: the page said "sent" until reloaded). The test waits for the text, never for
// a time. Axe-clean at desktop and phone widths.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser } from 'playwright-core';
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
  // Retries a second apart: the deferred email is delivered at the first retry after the sink accepts it.
  world = await startMailWorld({ 'http.port': port, public_url: base, 'delivery.retry_schedule': Array(120).fill('1s') });
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await world?.stop();
});

describe('the email page follows its email', () => {
  for (const [name, viewport, isMobile] of [
    ['desktop', { width: 1440, height: 900 }, false],
    ['phone', { width: 390, height: 844 }, true],
  ] as const) {
    test(`${name}: deferred, then delivered, without a reload`, async () => {
      const to = `live-${name}@dest.test`;
      world.sink.respond(to, { code: 451, message: '4.3.0 Try again later' });
      const r = await world.p.api('POST', '/emails', { body: { from: 'Acme <hello@example.test>', to, subject: `Live ${name}`, html: '<p>Hello</p>' } });
      expect(r.status).toBe(200);
      const id = r.body.id as string;
      await waitForEmail(world.p.svc, { team_id: world.p.creds.team_id, id }, (e) => e.last_event === 'delivery_delayed');
      const context = await browser.newContext({ viewport, isMobile });
      const page = await signIn(context, base, { email: world.p.creds.admin_email, password: world.p.creds.admin_password });
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      await page.goto(`${base}/dashboard/emails/${id}`);
      await page
        .locator('main .badge', { hasText: /^delivery delayed$/ })
        .first()
        .waitFor();
      let reloads = 0;
      page.on('load', () => reloads++);
      // The destination takes it now: the next retry delivers it, and the page shows it.
      world.sink.respond(to, null);
      await page
        .locator('main .badge', { hasText: /^delivered$/ })
        .first()
        .waitFor({ timeout: 30_000 });
      expect(reloads).toBe(0);
      await screenshot(page, `${name === 'phone' ? 'phone-' : ''}email-live-delivered`);
      expect(await axeViolations(page)).toEqual([]);
      await context.close();
    }, 60_000);
  }
});
