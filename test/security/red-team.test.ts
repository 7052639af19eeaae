// The web red team's probes of issue 34, run again against a running Posthorn: this file is the
// index of every probe. Where a probe lives in another test file it is named below (file and test
// title; the first test here checks that each still exists), and only the probes no other file
// makes are written here: stored XSS in every user-set field the dashboard renders, and a viewer's
// walk through every page.
//
// Findings
//  1. member → full_access key → owner invite:     test/api/roles.test.ts "a member’s full_access key cannot invite an owner"
//     (and keys follow their maker:                  test/api/roles.test.ts "a removed member’s keys stop working")
//  2. /openapi serves JSON, no CDN page:            test/api/platform.test.ts "GET /openapi runs no script"
//  3. `Host: x` — auth and routing agree, 400:      test/api/platform.test.ts "a short Host: authentication and routing read the same path",
//                                                    "a malformed Host → 400 in the documented error shape"
//  4. forged X-Forwarded-For and the sign-in limit: test/api/sessions.test.ts "without trusted proxies a forged X-Forwarded-For is ignored"
//                                                    test/net/client-address.test.ts "from a trusted proxy: the right-most address"
//  5. broadcast page request loop; session limit:   test/dashboard/dashboard.test.ts "its results ask for the metrics once"
//                                                    test/api/sessions.test.ts "over limits.session_requests_per_second a session answers 429"
//  6. encoded dashboard path parameters:            test/dashboard/dashboard.test.ts "path parameters"
//  7. only known ?error= codes on sign-in:          test/dashboard/dashboard.test.ts "the sign-in page shows only known error codes"
//  8. invite of an address with an account elsewhere: test/api/invites.test.ts "an address with an account in another team answers exactly as a new address"
//  9. SSRF guard and IPv6 spellings of IPv4:        test/net/guard.test.ts "isPrivateAddress", "refuses loopback unless allowed"
// Also observed
//  - /d/ downloads carry CSP sandbox:               test/api/emails-attachments.test.ts "a download runs nothing"
//  - MX on loopback refused unless allowed:         test/delivery/mx.test.ts "without security.allow_private_networks an MX host"
//  - lockout lets a recent address through:         test/api/sessions.test.ts "an address that signed in recently gets past the account lock"
//  - session JSON has Cache-Control: no-store:      test/api/sessions.test.ts "the right password gives an HttpOnly SameSite=Lax cookie"
//  - preference page CSP has base-uri:              test/api/topics.test.ts "base-uri 'none'"
// Tracking tokens
//  - opaque links:                                  test/links/tracking.test.ts "tokens are opaque"
//                                                    test/tracking/tracking.test.ts "a tampered or unknown link answers 404 and redirects nowhere"
// Here
//  - stored XSS in user-set fields rendered in Chromium (below)
//  - a viewer sees no enabled write control on any page (below; issue 34, roles)
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, signIn } from '../helpers/browser';
import { startPosthorn, type Running } from '../helpers/posthorn';

const INDEX: [file: string, text: string][] = [
  ['test/api/roles.test.ts', 'a member’s full_access key cannot invite an owner'],
  ['test/api/roles.test.ts', 'a removed member’s keys stop working'],
  ['test/api/platform.test.ts', 'GET /openapi runs no script'],
  ['test/api/platform.test.ts', 'a short Host: authentication and routing read the same path'],
  ['test/api/platform.test.ts', 'a malformed Host → 400 in the documented error shape'],
  ['test/api/sessions.test.ts', 'without trusted proxies a forged X-Forwarded-For is ignored'],
  ['test/net/client-address.test.ts', 'from a trusted proxy: the right-most address'],
  ['test/dashboard/dashboard.test.ts', 'its results ask for the metrics once'],
  ['test/api/sessions.test.ts', 'over limits.session_requests_per_second a session answers 429'],
  ['test/dashboard/dashboard.test.ts', "describe('path parameters'"],
  ['test/dashboard/dashboard.test.ts', 'the sign-in page shows only known error codes'],
  ['test/api/invites.test.ts', 'an address with an account in another team answers exactly as a new address'],
  ['test/net/guard.test.ts', "'::ffff:0:7f00:1'"],
  ['test/net/guard.test.ts', "'http://[::127.0.0.1]/'"],
  ['test/net/guard.test.ts', 'refuses loopback unless allowed'],
  ['test/api/emails-attachments.test.ts', 'a download runs nothing'],
  ['test/delivery/mx.test.ts', 'without security.allow_private_networks an MX host'],
  ['test/api/sessions.test.ts', 'an address that signed in recently gets past the account lock'],
  ['test/api/sessions.test.ts', "toBe('no-store')"],
  ['test/api/topics.test.ts', "base-uri 'none'"],
  ['test/links/tracking.test.ts', 'tokens are opaque'],
  ['test/tracking/tracking.test.ts', 'a tampered or unknown link answers 404 and redirects nowhere'],
];

const ROOT = join(import.meta.dir, '..', '..');

describe('the index of probes', () => {
  test('every probe named above still exists where it says', () => {
    const missing = INDEX.filter(([file, text]) => !readFileSync(join(ROOT, file), 'utf8').includes(text));
    expect(missing).toEqual([]);
  });
});

let p: Running;
let browser: Browser;
const PAYLOAD = '<img src=x onerror=alert(1)>';
const ids: Record<string, string> = {};

beforeAll(async () => {
  p = await startPosthorn({ 'limits.session_requests_per_second': 100_000, 'security.allow_private_networks': true });
  browser = await launchBrowser();
  // One of each thing a user names, every name the payload.
  const made = async (key: string, path: string, body: unknown) => {
    const r = await p.api('POST', path, { body });
    if (r.status !== 201 && r.status !== 200) throw new Error(`${path}: ${r.status} ${JSON.stringify(r.body)}`);
    ids[key] = r.body.id;
  };
  await made('segment', '/segments', { name: PAYLOAD });
  await made('topic', '/topics', { name: PAYLOAD, default_subscription: 'opt_in' });
  await made('contact', '/contacts', { email: 'xss@dest.test', first_name: PAYLOAD, last_name: PAYLOAD });
  await made('template', '/templates', { name: PAYLOAD, subject: PAYLOAD, html: '<p>hi</p>' });
  await made('broadcast', '/broadcasts', { name: PAYLOAD, segment_id: ids.segment, from: 'a@xss.test', subject: PAYLOAD, html: '<p>hi</p>' });
  await made('webhook', '/webhooks', { endpoint: 'http://127.0.0.1:9/xss', events: ['email.sent'] });
  await made('domain', '/domains', { name: 'xss.test' });
  await made('key', '/api-keys', { name: PAYLOAD });
  await p.api('PATCH', '/team', { body: { name: PAYLOAD } });
  await p.api('POST', '/team/invites', { body: { email: 'xss-invite@dest.test', role: 'member' } });
});
afterAll(async () => {
  await browser?.close();
  await p.stop();
});

/** Every page of the dashboard, with the ids made above. */
const pages = () => [
  '/dashboard',
  '/dashboard/emails',
  '/dashboard/receiving',
  '/dashboard/broadcasts',
  `/dashboard/broadcasts/${ids.broadcast}`,
  '/dashboard/templates',
  `/dashboard/templates/${ids.template}`,
  `/dashboard/templates/${ids.template}/versions`,
  '/dashboard/automations',
  '/dashboard/audiences',
  `/dashboard/audiences/contacts/${ids.contact}`,
  '/dashboard/domains',
  `/dashboard/domains/${ids.domain}`,
  '/dashboard/api-keys',
  '/dashboard/webhooks',
  `/dashboard/webhooks/${ids.webhook}`,
  '/dashboard/logs',
  '/dashboard/settings',
  '/dashboard/settings/smtp',
  '/dashboard/settings/usage',
];

/** Open a dashboard page and wait until it has loaded its data. */
async function open(page: Page, path: string) {
  await page.goto(p.url + path);
  expect(new URL(page.url()).pathname).toBe(path);
  await page.locator('main h1').first().waitFor();
  await page.waitForLoadState('networkidle');
}

describe('stored XSS: every user-set field, rendered in Chromium', () => {
  test('the payload is shown as text on every page: no element made of it, no dialog', async () => {
    const ctx = await browser.newContext();
    const page = await signIn(ctx, p.url, { email: p.creds.admin_email, password: p.creds.admin_password });
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      d.dismiss();
    });
    let shown = 0;
    for (const path of pages()) {
      await open(page, path);
      // An <img src="x"> would mean the name was parsed as HTML (the CSP would then be all that stops it).
      expect({ path, injected: await page.locator('img[src="x"]').count() }).toEqual({ path, injected: 0 });
      if (((await page.locator('body').textContent()) ?? '').includes(PAYLOAD)) shown++;
    }
    expect(dialogs).toEqual([]);
    // The names do appear, as text, on the pages that list them.
    expect(shown).toBeGreaterThan(5);
    await ctx.close();
  });
});

/** Write actions by name: what a viewer must not be offered, enabled. */
const WRITE =
  /^(create|add|new|edit|delete|remove|send|save|invite|import|rotate|revoke|cancel|pause|resume|verify|duplicate|rename|upload|publish|retry|hold|release|lift|enable|disable|turn on|set up|schedule|restore|test)\b/i;

/** The enabled write controls of every page, as `path: name`. */
async function writeControls(page: Page): Promise<string[]> {
  const offered: string[] = [];
  for (const path of pages()) {
    await open(page, path);
    const controls = await page
      .locator('main button:visible, main a.btn:visible')
      .evaluateAll((els) =>
        els
          .filter((e) => !(e as HTMLButtonElement).disabled && e.getAttribute('aria-disabled') !== 'true')
          .map((e) => (e.getAttribute('aria-label') || e.textContent || '').trim()),
      );
    for (const name of controls) if (WRITE.test(name)) offered.push(`${path}: ${name}`);
  }
  return offered;
}

describe('a viewer sees no enabled write control on any page (issue 34, roles)', () => {
  test('the walk finds them for an owner (the probe sees what it looks for)', async () => {
    const ctx = await browser.newContext();
    const page = await signIn(ctx, p.url, { email: p.creds.admin_email, password: p.creds.admin_password });
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    expect((await writeControls(page)).length).toBeGreaterThan(10);
    await ctx.close();
  });

  test('every page, walked as a viewer', async () => {
    const inv = await p.api('POST', '/team/invites', { body: { email: 'walker@dest.test', role: 'viewer' } });
    const accept = await fetch(`${p.url}/auth/invites/${inv.body.url.split('/').pop()}/accept`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ password: 'walker-password' }),
    });
    expect(accept.status).toBe(201);
    const ctx = await browser.newContext();
    const page = await signIn(ctx, p.url, { email: 'walker@dest.test', password: 'walker-password' });
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    const offered = await writeControls(page);
    // A viewer's own account is theirs to change (password, address, second factor, sessions).
    const own = /^\/dashboard\/settings: (Change password|Send confirmation link|Set up an authenticator)$/;
    expect(offered.filter((o) => !own.test(o))).toEqual([]);
    await ctx.close();
  });
});
