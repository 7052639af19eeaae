// The DMARC section of a domain's page (docs/deliverability.md §4) in a real browser: the policy
// step, the totals, the day-by-day chart and the sources (Posthorn's own marked, with PTR) from
// reports kept for the domain — an axe-core check and screenshots at desktop and phone width.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startMailWorld, type MailWorld } from '../helpers/world';
import { axeViolations, launchBrowser, screenshot, signIn } from '../helpers/browser';
import { freePort } from '../helpers/posthorn';
import { newId } from '../../src/ids';

const DESKTOP = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };
const DAY = 86_400_000;

let world: MailWorld;
let browser: Browser;
let desktop: BrowserContext;
let phone: BrowserContext;
let page: Page;
let small: Page;
let base: string;

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  world = await startMailWorld({ 'http.port': port, public_url: base });
  const { dns, domain } = world;
  dns.zone.set('mx.posthorn.test', 'A', ['127.0.0.1']);
  dns.zone.set('1.0.0.127.in-addr.arpa', 'PTR', ['mx.posthorn.test']);
  dns.zone.set('_dmarc.example.test', 'TXT', ['v=DMARC1; p=none; rua=mailto:dmarc-reports@send.example.test']);
  // Twelve days of reports from Google and Microsoft: Posthorn's address aligned, a forwarder's not.
  await world.p.svc.store.write(async (tx) => {
    for (let n = 12; n >= 1; n--) {
      const begin = Math.floor(Date.now() / DAY - n) * DAY;
      for (const [org, volume] of [
        ['google.com', 900 + n * 13],
        ['Enterprise Outlook', 300 + n * 7],
      ] as const)
        tx.dmarcReports.put({
          id: newId(),
          team_id: domain.team_id,
          created_at: new Date().toISOString(),
          domain_id: domain.id,
          org_name: org,
          org_email: 'noreply@reports.test',
          report_id: `${org}-${n}`,
          begin: new Date(begin).toISOString(),
          end: new Date(begin + DAY - 1000).toISOString(),
          day: new Date(begin + DAY / 2).toISOString().slice(0, 10),
          policy: { domain: 'example.test', adkim: 'r', aspf: 'r', p: 'none', sp: 'none', pct: 100 },
          rows: [
            { source_ip: '127.0.0.1', count: volume, disposition: 'none', dkim: 'pass', spf: 'pass' },
            { source_ip: '192.0.2.44', count: 4 + (n % 3), disposition: 'none', dkim: 'fail', spf: 'fail' },
          ],
        });
    }
  });
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
  await world?.stop();
});

describe('DMARC reports on the domain page', () => {
  test('the policy step, totals, chart and sources; axe clean at desktop and phone width', async () => {
    for (const [p, name] of [
      [page, 'domain-dmarc'],
      [small, 'phone-domain-dmarc'],
    ] as const) {
      await p.goto(`${base}/dashboard/domains/${world.domain.id}`);
      await p.getByRole('heading', { name: 'DMARC reports' }).waitFor();
      await p.getByText('Keep monitoring.').waitFor();
      const sources = p.getByRole('table', { name: "Sources of mail in this domain's name" });
      for (const text of ['mx.posthorn.test', '192.0.2.44', 'Posthorn']) await sources.getByText(text, { exact: true }).first().waitFor();
      await screenshot(p, name);
      expect(await axeViolations(p)).toEqual([]);
      expect(await p.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)).toBe(true);
    }
  }, 60_000);
});
