// Team and account in the dashboard (issue 35 item 7; docs/api.md §19.16), in a real browser: a
// forgotten password reset through the mailed link, the team renamed, a new address confirmed by
// mail, an invitation mailed, the SMTP settings and the usage page — each checked with axe-core and
// shot at desktop (1440x900) and phone (390x844) width.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { axeViolations, launchBrowser, screenshot, signIn } from '../helpers/browser';
import { startPosthorn, type Running } from '../helpers/posthorn';
import { verifiedDomain, storedEmails } from '../helpers/emails';

let p: Running;
let browser: Browser;

const DESKTOP = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };

beforeAll(async () => {
  p = await startPosthorn();
  browser = await launchBrowser();
  // auth.system_from defaults to posthorn@<smtp.hostname> (mx.posthorn.test here).
  await verifiedDomain(p, 'mx.posthorn.test');
});
afterAll(async () => {
  await browser?.close();
  await p.stop();
});

/** The link in the newest system email to `to` (its path on this server: the test's public_url is not where it listens). */
async function mailedPath(to: string): Promise<string> {
  return p.url + new URL(await mailedLink(to)).pathname;
}

async function mailedLink(to: string): Promise<string> {
  const all = await storedEmails(p.svc, p.creds.team_id);
  const e = all.filter((x) => x.to.includes(to) && x.tags.some((t) => t.name === 'posthorn_system')).pop()!;
  const content = (await p.svc.store.emailContent.get(e.team_id, e.id))!;
  return /(http:\/\/\S+\/dashboard\/\S+)/.exec(content.text!)![1]!;
}

async function shoot(page: Page, name: string) {
  for (const [size, vp] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    await page.setViewportSize(vp);
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)).toBe(true);
    await screenshot(page, `${name}-${size}`);
    const violations = await axeViolations(page);
    if (violations.length) console.log(name, size, violations);
    expect(violations).toEqual([]);
  }
  await page.setViewportSize(DESKTOP);
}

describe('team and account in the dashboard', () => {
  test('a forgotten password is reset through the mailed link', async () => {
    const ctx = await browser.newContext({ viewport: DESKTOP });
    const page = await ctx.newPage();
    await page.goto(`${p.url}/dashboard/sign-in`);
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.getByRole('heading', { name: 'Reset your password' }).waitFor();
    await shoot(page, 'forgot-password');
    await page.getByLabel('Email').fill(p.creds.admin_email);
    await page.getByRole('button', { name: 'Send the link' }).click();
    await page.getByText('a link to choose a new password is on its way').waitFor();
    await page.goto(await mailedPath(p.creds.admin_email));
    await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
    await shoot(page, 'reset-password');
    await page.getByLabel('New password').fill('browser-reset-password');
    await page.getByLabel('Repeat the password').fill('browser-reset-password');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('Your password is changed').waitFor();
    p.creds.admin_password = 'browser-reset-password';
    const signed = await signIn(ctx, p.url, { email: p.creds.admin_email, password: p.creds.admin_password });
    await signed.getByRole('heading', { name: 'Overview' }).waitFor();
    await ctx.close();
  });

  test('an owner renames the team, invites by mail, and changes their address through a mailed link', async () => {
    const ctx = await browser.newContext({ viewport: DESKTOP });
    const page = await signIn(ctx, p.url, { email: p.creds.admin_email, password: p.creds.admin_password });
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.goto(`${p.url}/dashboard/settings`);
    await page.getByLabel('Team name').fill('Acme mail');
    await page.getByRole('button', { name: 'Rename team' }).click();
    await page.getByText('Team renamed.').waitFor();
    expect((await p.api('GET', '/team')).body.name).toBe('Acme mail');

    await page.getByRole('button', { name: 'Invite member' }).click();
    await page.locator('#inv-email').fill('mailed-invite@dest.test');
    await page.getByRole('dialog').getByRole('button', { name: 'Invite' }).click();
    await page.getByText('Invitation mailed to mailed-invite@dest.test.').waitFor();
    expect(await page.getByTestId('invite-link').textContent()).toBe(await mailedLink('mailed-invite@dest.test'));

    await page.getByLabel('New email address').fill('renamed-owner@dest.test');
    await page.getByLabel('Password, to confirm').fill(p.creds.admin_password);
    await page.getByRole('button', { name: 'Send confirmation link' }).click();
    await page.getByText('We mailed a confirmation link to renamed-owner@dest.test').waitFor();
    await shoot(page, 'settings-account');
    await page.goto(await mailedPath('renamed-owner@dest.test'));
    await page.getByRole('heading', { name: 'Confirm your new address' }).waitFor();
    await shoot(page, 'confirm-email');
    await page.getByRole('button', { name: 'Confirm the new address' }).click();
    await page.getByText('Your account now uses renamed-owner@dest.test').waitFor();
    p.creds.admin_email = 'renamed-owner@dest.test';
    await ctx.close();
  });

  test('SMTP settings and usage pages', async () => {
    const ctx = await browser.newContext({ viewport: DESKTOP });
    const page = await signIn(ctx, p.url, { email: p.creds.admin_email, password: p.creds.admin_password });
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.goto(`${p.url}/dashboard/settings`);
    await page.getByRole('link', { name: 'SMTP' }).click();
    await page.getByRole('heading', { name: 'SMTP' }).waitFor();
    expect(await page.getByRole('region', { name: 'Nodemailer snippet' }).textContent()).toContain("host: 'mx.posthorn.test'");
    expect(await page.locator('.kv').textContent()).toContain('resend');
    await shoot(page, 'smtp-settings');
    await page.goto(`${p.url}/dashboard/settings/usage`);
    await page.getByRole('heading', { name: 'Usage' }).waitFor();
    await page.getByText('Emails this month').waitFor();
    await shoot(page, 'usage');
    await ctx.close();
  });
});
