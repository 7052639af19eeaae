// The IPs page in a real browser (README "Sending IPs and warm-up"): the sending IPs with their
// pool, EHLO, reverse DNS, rotation and warm-up, what each sent today per site, the warm-up
// controls, the last 7 days per address (GET /emails/metrics?dimensions=ip), and the domain page's
// pool and region selectors — an axe-core check and screenshots at desktop and phone width.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { startMailWorld, type MailWorld } from '../helpers/world';
import { waitForEmail } from '../helpers/emails';
import { axeViolations, launchBrowser, screenshot, signIn } from '../helpers/browser';
import { freePort } from '../helpers/posthorn';
import { until } from '../helpers/wait';

let world: MailWorld;
let browser: Browser;
let base: string;

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  world = await startMailWorld({
    'http.port': port,
    public_url: base,
    'delivery.ips': [
      { address: '127.0.0.3', ehlo: 'mta3.posthorn.test', pool: 'default' },
      { address: '127.0.0.4', ehlo: 'mta4.posthorn.test', pool: 'default' },
      { address: '127.0.0.5', ehlo: 'mta5.posthorn.test', pool: 'marketing', warmup: 'new' },
    ],
    // A region of the operator's: the domain page offers the regions.
    'cluster.regions': ['moon-1'],
  });
  const team = world.p.creds.team_id;
  for (const to of ['ann@dest.test', 'bob@dest.test']) {
    const r = await world.p.api('POST', '/emails', { body: { from: 'Acme <hello@example.test>', to, subject: 'Hello', html: '<p>Hello</p>' } });
    expect(r.status).toBe(200);
    await waitForEmail(world.p.svc, { team_id: team, id: r.body.id }, (e) => e.last_event === 'delivered');
  }
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await world?.stop();
});

async function open(path: string, heading: string, viewport: { width: number; height: number }, isMobile = false): Promise<Page> {
  const context = await browser.newContext({ viewport, isMobile });
  const page = await signIn(context, base, { email: world.p.creds.admin_email, password: world.p.creds.admin_password });
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  await page.goto(`${base}${path}`);
  await page.getByRole('heading', { name: heading, exact: true }).first().waitFor();
  await page
    .getByRole('table', { name: 'Sending IPs' })
    .or(page.getByRole('heading', { name: 'Settings' }))
    .first()
    .waitFor({ timeout: 10_000 });
  await page.waitForLoadState('networkidle');
  return page;
}

describe('IPs page', () => {
  test('every address with its pool, EHLO and warm-up; the warm-up controls; axe clean; desktop and phone', async () => {
    const page = await open('/dashboard/ips', 'Sending IPs', { width: 1440, height: 900 });
    const rows = await page.getByRole('table', { name: 'Sending IPs' }).locator('tbody tr').allInnerTexts();
    expect(rows.length).toBe(3);
    expect(rows[2]).toContain('marketing');
    expect(rows[2]).toContain('mta5.posthorn.test');
    expect(rows[2]).toContain('warming');
    // Sent today: the two emails went from the default pool.
    await page
      .getByRole('table', { name: 'Sent today per address and site' })
      .waitFor({ timeout: 15_000 })
      .catch(async () => {
        await page.reload();
        await page.getByRole('table', { name: 'Sent today per address and site' }).waitFor({ timeout: 15_000 });
      });
    // The last 7 days per address: the two emails left from the default pool's addresses.
    const week = page.getByRole('table', { name: 'Sent, delivered, bounced and complained per sending IP, last 7 days' });
    await week.waitFor({ timeout: 15_000 });
    const weekRows = await week.locator('tbody tr').allInnerTexts();
    expect(weekRows.every((r) => r.includes('127.0.0.3') || r.includes('127.0.0.4'))).toBe(true);
    expect(weekRows.length).toBeGreaterThan(0);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'ips-desktop');
    await page.getByRole('button', { name: 'Pause: 127.0.0.5' }).click();
    await page.getByRole('button', { name: 'Resume: 127.0.0.5' }).waitFor();
    expect((await world.p.api('GET', '/ips')).body.data[2].warmup.state).toBe('paused');
    const phone = await open('/dashboard/ips', 'Sending IPs', { width: 390, height: 844 }, true);
    expect(await axeViolations(phone)).toEqual([]);
    await screenshot(phone, 'ips-phone');
  });

  test("a domain's pool is chosen on its page", async () => {
    const page = await open(`/dashboard/domains/${world.domain.id}`, 'example.test', { width: 1440, height: 900 });
    const select = page.getByLabel('Sending IP pool');
    await select.selectOption('marketing');
    await until(async () => (await world.p.api('GET', `/domains/${world.domain.id}`)).body.pool === 'marketing' || null, 'the domain is in pool marketing');
    await page.getByText('Domain updated.').waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'ips-domain-pool');
    // The region beside the pool, once the operator defines one (README "Regions").
    await page.getByLabel('Region').selectOption('moon-1');
    await until(async () => (await world.p.api('GET', `/domains/${world.domain.id}`)).body.region === 'moon-1' || null, 'the domain is in region moon-1');
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'ips-domain-region');
    const phone = await open(`/dashboard/domains/${world.domain.id}`, 'example.test', { width: 390, height: 844 }, true);
    expect(await axeViolations(phone)).toEqual([]);
    await screenshot(phone, 'ips-domain-region-phone');
  });
});
