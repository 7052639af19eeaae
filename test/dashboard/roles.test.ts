// Roles, the team's sign-in switches and the audit log in the dashboard (docs/api.md §19.4, §19.11),
// in a real browser: an owner changes a member's role and the switches, a viewer sees no control
// it cannot use, a member the team requires TOTP of is led to enrol, the audit log page lists what
// happened — an axe-core check and screenshots at desktop (1440x900) and phone (390x844) width.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { TOTP, Secret } from 'otpauth';
import { axeViolations, launchBrowser, screenshot, signIn } from '../helpers/browser';
import { startPosthorn, type Running } from '../helpers/posthorn';

let p: Running;
let browser: Browser;

const DESKTOP = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };

beforeAll(async () => {
  p = await startPosthorn();
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await p.stop();
});

/** A member of `role`, invited and joined through the API: their address and password. */
async function member(email: string, role: string) {
  const inv = await p.api('POST', '/team/invites', { body: { email, role } });
  const password = `${email}-password`;
  const r = await fetch(`${p.url}/auth/invites/${inv.body.url.split('/').pop()}/accept`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ password }),
  });
  expect(r.status).toBe(201);
  return { email, password };
}

async function signedIn(ctx: BrowserContext, creds: { email: string; password: string }, heading = 'Overview'): Promise<Page> {
  const page = await signIn(ctx, p.url, creds);
  await page.getByRole('heading', { name: heading }).waitFor();
  return page;
}

/** Screenshots at both widths, each checked with axe. */
async function shoot(page: Page, name: string) {
  for (const [size, vp] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    await page.setViewportSize(vp);
    // The page does not scroll sideways.
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)).toBe(true);
    await screenshot(page, `${name}-${size}`);
    expect(await axeViolations(page)).toEqual([]);
  }
  await page.setViewportSize(DESKTOP);
}

const owner = () => ({ email: p.creds.admin_email, password: p.creds.admin_password });

describe('roles in the dashboard', () => {
  test('an owner gives a member another role and sees the team’s sign-in switches', async () => {
    const ctx = await browser.newContext({ viewport: DESKTOP });
    const m = await member('dash-member@dest.test', 'member');
    const page = await signedIn(ctx, owner());
    await page.goto(`${p.url}/dashboard/settings`);
    await page.getByRole('heading', { name: 'Team sign-in' }).waitFor();
    expect(await page.getByLabel('Require two-factor sign-in for every member').isEnabled()).toBe(true);
    // OpenID Connect is not configured here: its switch cannot be turned on.
    expect(await page.getByLabel('Require sign-in with OpenID Connect').isDisabled()).toBe(true);
    const select = page.getByLabel(`Role of ${m.email}`);
    await select.selectOption('admin');
    await page.getByText('Role changed.').waitFor();
    const members = (await p.api('GET', '/team/members')).body.data as { email: string; role: string }[];
    expect(members.find((x) => x.email === m.email)!.role).toBe('admin');
    // The invitation offers every role to an owner.
    await page.getByRole('button', { name: 'Invite member' }).click();
    expect(await page.locator('#inv-role option').allTextContents()).toEqual(['Viewer', 'Member', 'Admin', 'Owner']);
    await page.keyboard.press('Escape');
    await shoot(page, 'settings-roles');
    await ctx.close();
  });

  test('a viewer sees no control it cannot use', async () => {
    const ctx = await browser.newContext({ viewport: DESKTOP });
    const v = await member('dash-viewer@dest.test', 'viewer');
    const page = await signedIn(ctx, v);
    expect(await page.getByText('Read-only access (viewer)').isVisible()).toBe(true);
    await page.goto(`${p.url}/dashboard/domains`);
    await page.getByRole('heading', { name: 'Domains' }).waitFor();
    expect(
      await page
        .locator('.page-header')
        .getByRole('button', { name: /add domain/i })
        .count(),
    ).toBe(0);
    await page.goto(`${p.url}/dashboard/api-keys`);
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    expect(await page.locator('.page-header button').count()).toBe(0);
    await page.goto(`${p.url}/dashboard/settings`);
    await page.getByRole('heading', { name: 'Team sign-in' }).waitFor();
    expect(await page.getByLabel('Require two-factor sign-in for every member').isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Invite member' }).count()).toBe(0);
    expect(await page.getByRole('combobox', { name: /^Role of/ }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Audit log' }).count()).toBe(0);
    await shoot(page, 'settings-viewer');
    await ctx.close();
  });

  test('the audit log page lists administrative actions', async () => {
    const ctx = await browser.newContext({ viewport: DESKTOP });
    const page = await signedIn(ctx, owner());
    await page.goto(`${p.url}/dashboard/settings`);
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    await page.getByRole('table', { name: 'Audit log' }).waitFor();
    const text = await page.getByRole('table', { name: 'Audit log' }).textContent();
    expect(text).toContain('member.role_changed');
    expect(text).toContain('auth.signed_in');
    expect(text).toContain('127.0.0.1');
    await page.getByRole('combobox', { name: 'Action' }).selectOption('member.');
    await page.waitForURL(/action=member\./);
    await page.waitForFunction(() => !document.querySelector('table')?.textContent?.includes('auth.signed_in'));
    await shoot(page, 'audit-log');
    await ctx.close();
  });

  test('a team that requires TOTP leads a member without it to enrol first', async () => {
    const m = await member('dash-totp@dest.test', 'member');
    expect((await p.api('PATCH', '/team', { body: { require_totp: true } })).status).toBe(200);
    try {
      const ctx = await browser.newContext({ viewport: DESKTOP });
      const page = await signedIn(ctx, m, 'Set up two-factor sign-in');
      await shoot(page, 'enrol-totp');
      await page.getByRole('button', { name: 'Set up an authenticator' }).click();
      const secret = (await page.getByTestId('totp-secret').textContent())!.trim();
      await page.getByLabel('Code from the app').fill(new TOTP({ secret: Secret.fromBase32(secret), period: 30, digits: 6, algorithm: 'SHA1' }).generate());
      await page.getByRole('button', { name: 'Turn on' }).click();
      await page.getByRole('button', { name: 'I saved them' }).click();
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      await ctx.close();
    } finally {
      await p.api('PATCH', '/team', { body: { require_totp: false } });
    }
  });
});
