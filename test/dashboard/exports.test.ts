// The export buttons of the dashboard (docs/api.md §4.1) in a real browser: on the emails, contacts,
// suppressions and logs pages, each downloads the CSV of what the page lists with the filters it
// shows (read back with csv-parse, checked against the API's list) — an axe-core check and a
// screenshot of each page at 1440×900 and 390×844.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { parse } from 'csv-parse/sync';
import { freePort, startPosthorn, type ApiBody, type Running } from '../helpers/posthorn';
import { verifiedDomain } from '../helpers/emails';
import { axeViolations, launchBrowser, screenshot, signIn } from '../helpers/browser';

let p: Running;
let browser: Browser;
let base: string;

/** The ids of a list with these filters, as the API pages it. */
async function listIds(path: string, filters: Record<string, string> = {}): Promise<string[]> {
  const ids: string[] = [];
  for (let after: string | undefined; ; ) {
    const r = await p.api('GET', `${path}?${new URLSearchParams({ ...filters, limit: '100', ...(after ? { after } : {}) })}`);
    ids.push(...r.body.data.map((x: ApiBody) => x.id));
    if (!r.body.has_more) return ids;
    after = ids.at(-1);
  }
}

/** Click the page's "Export CSV" and read the file the browser saved. */
async function exportCsv(page: Page): Promise<{ name: string; rows: Record<string, string>[] }> {
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
  const path = await download.path();
  return { name: download.suggestedFilename(), rows: parse(readFileSync(path), { columns: true }) };
}

const fitsWidth = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1);

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  p = await startPosthorn({ 'http.port': port, public_url: base });
  await verifiedDomain(p, 'example.test');
  // Held: the emails stay `queued` while the page, its export and the API are compared.
  await p.api('POST', '/queue/dest.test/hold');
  const send = (subject: string, extra: Record<string, unknown> = {}) =>
    p.resend.emails.send({ from: 'Acme <hello@example.test>', to: ['ann@dest.test'], subject, text: 'hi', ...extra } as never);
  await send('Welcome to Acme');
  await send('Your invoice, March', { cc: ['"Doe, Jo" <jo@dest.test>'] });
  await send('=HYPERLINK("http://evil.test")');
  await send('Later', { scheduledAt: 'in 2 hours' });
  const segment = (await p.resend.segments.create({ name: 'Newsletter' })).data!.id;
  await p.resend.contacts.create({ email: 'dana@dest.test', firstName: 'Dana', segments: [{ id: segment }] } as never);
  await p.resend.contacts.create({ email: 'eve@dest.test', firstName: 'Eve', unsubscribed: true } as never);
  await p.resend.suppressions.add({ email: 'gone@dest.test' });
  await p.resend.suppressions.add({ email: 'left@dest.test' });
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await p?.stop();
});

describe.each([
  ['desktop', { width: 1440, height: 900 }],
  ['phone', { width: 390, height: 844 }],
] as const)('%s', (label, viewport) => {
  let context: BrowserContext;
  let page: Page;
  beforeAll(async () => {
    context = await browser.newContext({ viewport, isMobile: label === 'phone', acceptDownloads: true });
    page = await signIn(context, base, { email: p.creds.admin_email, password: p.creds.admin_password });
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
  }, 20_000);
  afterAll(() => context.close());

  const shown = async (path: string, text: string, shot: string) => {
    await page.goto(base + path);
    await page.getByText(text).first().waitFor({ timeout: 10_000 });
    await page.waitForLoadState('networkidle');
    await screenshot(page, `export-${shot}-${label}`);
    expect(await axeViolations(page)).toEqual([]);
    expect(await fitsWidth(page)).toBe(true);
  };

  test('emails: every email, then only those the search finds', async () => {
    await shown('/dashboard/emails', 'Welcome to Acme', 'emails');
    const all = await exportCsv(page);
    expect(all.name).toMatch(/^emails-\d{4}-\d\d-\d\d\.csv$/);
    expect(all.rows.map((r) => r.id)).toEqual(await listIds('/emails'));
    expect(all.rows.find((r) => r.subject.includes('HYPERLINK'))!.subject).toBe(`'=HYPERLINK("http://evil.test")`);
    expect(all.rows.find((r) => r.subject === 'Your invoice, March')!.cc).toBe('"Doe, Jo" <jo@dest.test>');
    await page.goto(`${base}/dashboard/emails?status=scheduled`);
    await page.getByText('Later').first().waitFor();
    await page.waitForLoadState('networkidle');
    const scheduled = await exportCsv(page);
    expect(scheduled.rows.map((r) => r.subject)).toEqual(['Later']);
  }, 30_000);

  test('contacts: the list, and one segment', async () => {
    await shown('/dashboard/audiences', 'dana@dest.test', 'contacts');
    const all = await exportCsv(page);
    expect(all.name).toMatch(/^contacts-.*\.csv$/);
    expect(all.rows.map((r) => r.email)).toEqual(['eve@dest.test', 'dana@dest.test']);
    await page.getByLabel('Segment').selectOption({ label: 'Newsletter' });
    await page.getByText('eve@dest.test').waitFor({ state: 'detached' });
    await screenshot(page, `debug-${label}`);
    expect((await exportCsv(page)).rows.map((r) => r.email)).toEqual(['dana@dest.test']);
  }, 30_000);

  test('suppressions', async () => {
    await shown('/dashboard/audiences?tab=suppressions', 'gone@dest.test', 'suppressions');
    const { rows } = await exportCsv(page);
    expect(rows.map((r) => r.email)).toEqual(['left@dest.test', 'gone@dest.test']);
    expect(rows.map((r) => r.origin)).toEqual(['manual', 'manual']);
  }, 30_000);

  test('logs: the API requests with the method filter', async () => {
    await shown('/dashboard/logs?method=POST', '/emails', 'logs');
    const { rows } = await exportCsv(page);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.method === 'POST')).toBe(true);
    expect(rows.map((r) => r.id)).toEqual(await listIds('/logs', { method: 'POST' }));
  }, 30_000);
});
