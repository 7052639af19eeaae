// The Overview's table by mailbox provider in a real browser (docs/api.md §7.9, "By mailbox
// provider"): mail delivered and bounced at providers the test DNS server maps by MX host (Google,
// here `*.mx.google.test`) and by domain (Microsoft, `outlook.test`), and at a domain no site covers
// (`other`) — each row's counts, its bounces by class, an axe-core check and screenshots at desktop
// and phone width.
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
  world = await startMailWorld({
    'http.port': port,
    public_url: base,
    // The shipped sites, pointed at test names: Google by its MX hosts, Microsoft by a domain.
    'delivery.shaping.sites': { google: { mx: ['*.mx.google.test'] }, microsoft: { domains: ['outlook.test'] } },
  });
  for (const [domain, mx] of [
    ['workspace.test', 'aspmx.mx.google.test'],
    ['outlook.test', 'mx.outlook.test'],
  ] as const) {
    world.dns.zone.set(domain, 'MX', [{ exchange: mx, priority: 10 }]);
    world.dns.zone.set(mx, 'A', ['127.0.0.1']);
  }
  world.sink.respond('gone@workspace.test', { code: 550, message: '5.1.1 The email account that you tried to reach does not exist.' });
  world.sink.respond('dan@outlook.test', {
    code: 550,
    message:
      '5.7.1 Service unavailable, Client host [192.0.2.25] blocked using Spamhaus. To request removal from this list see https://www.spamhaus.org/query/ip/192.0.2.25',
  });
  const team = world.p.creds.team_id;
  for (const to of ['ann@workspace.test', 'bob@workspace.test', 'gone@workspace.test', 'dan@outlook.test', 'cy@dest.test']) {
    const r = await world.p.api('POST', '/emails', { body: { from: 'Acme <hello@example.test>', to, subject: 'Hello', html: '<p>Hello</p>' } });
    expect(r.status).toBe(200);
    await waitForEmail(world.p.svc, { team_id: team, id: r.body.id }, (e) => e.last_event === 'delivered' || e.last_event === 'bounced');
  }
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await world?.stop();
});

async function overview(viewport: { width: number; height: number }, isMobile = false): Promise<Page> {
  const context = await browser.newContext({ viewport, isMobile });
  const page = await signIn(context, base, { email: world.p.creds.admin_email, password: world.p.creds.admin_password });
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  await page.getByRole('table', { name: /Emails by mailbox provider/ }).waitFor({ timeout: 10_000 });
  await page.waitForLoadState('networkidle');
  return page;
}

describe('Overview: by mailbox provider', () => {
  test('a row per provider, most mail first, with bounces by class', async () => {
    const page = await overview({ width: 1440, height: 900 });
    const table = page.getByRole('table', { name: /Emails by mailbox provider/ });
    const rows = await table.locator('tbody tr').allInnerTexts();
    expect(rows.map((r) => r.split('\t')[0]!.trim())).toEqual(['Google (Gmail, Workspace)', 'Microsoft (Outlook, Microsoft 365)', 'Other providers']);
    const cells = async (i: number) => (await table.locator('tbody tr').nth(i).locator('td').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
    // Provider, sent, delivered (share of sent), deferred, bounced (by class), complained, opened.
    expect(await cells(0)).toEqual(['Google (Gmail, Workspace)', '3', '2 66.7%', '0', '1 recipient 1', '0', '0']);
    expect(await cells(1)).toEqual(['Microsoft (Outlook, Microsoft 365)', '1', '0 0.0%', '0', '1 reputation 1', '0', '0']);
    expect(await cells(2)).toEqual(['Other providers', '1', '1 100.0%', '0', '0', '0', '0']);
    // The sender's classes are marked apart from the address's.
    expect(await table.locator('.bounce-class.bad').allInnerTexts()).toEqual(['reputation 1']);
    await page.getByRole('heading', { name: 'By mailbox provider' }).scrollIntoViewIfNeeded();
    await screenshot(page, 'overview-providers');
    expect(await axeViolations(page)).toEqual([]);
    await page.context().close();
  }, 30_000);

  test('phone width: the table scrolls in its own box, the page does not', async () => {
    const page = await overview({ width: 390, height: 844 }, true);
    await page.getByRole('heading', { name: 'By mailbox provider' }).scrollIntoViewIfNeeded();
    await screenshot(page, 'phone-overview-providers');
    expect(await axeViolations(page)).toEqual([]);
    // At the phone's width (a page wider than the screen would widen the layout viewport itself).
    expect(await page.evaluate(() => [window.innerWidth, document.documentElement.scrollWidth])).toEqual([390, 390]);
    await page.context().close();
  }, 30_000);
});
