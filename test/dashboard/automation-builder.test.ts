// The visual automation builder in a real browser (issue 35 item 4): a new automation built as a
// graph (trigger → wait → send a template), an invalid graph refused with the server's own error
// (the step it names marked), then saved and read back through the API with the right steps and
// connections; an existing automation opened in the builder, a step connected by its handle and
// saved — an axe-core check, no CSP violation, screenshots at 1440x900 and 390x844.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startMailWorld, type MailWorld } from '../helpers/world';
import { join } from 'node:path';
import { axeViolations, launchBrowser, SCREENSHOTS, screenshot, signIn } from '../helpers/browser';
import { freePort } from '../helpers/posthorn';

let world: MailWorld;
let browser: Browser;
let desktop: BrowserContext;
let phone: BrowserContext;
let page: Page;
let base: string;
let templateId: string;
let automationId: string;

async function watchCsp(ctx: BrowserContext) {
  await ctx.addInitScript(() => {
    const w = window as unknown as { cspViolations: string[] };
    w.cspViolations = [];
    document.addEventListener('securitypolicyviolation', (e) => w.cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
}
const cspViolations = (p: Page) => p.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations);
const fitsWidth = async (p: Page) => (await p.evaluate(() => document.documentElement.scrollWidth)) <= p.viewportSize()!.width + 1;

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  world = await startMailWorld({ 'http.port': port, public_url: base });
  const { resend } = world.p;
  templateId = (await resend.templates.create({ name: 'Welcome', from: 'Acme <hello@example.test>', subject: 'Welcome', html: '<p>Hi</p>' } as never).publish())
    .data!.id;
  await resend.events.create({ name: 'user.created' });
  browser = await launchBrowser();
  desktop = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true });
  await watchCsp(desktop);
  await watchCsp(phone);
  page = await signIn(desktop, base, { email: world.p.creds.admin_email, password: world.p.creds.admin_password });
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
}, 60_000);

afterAll(async () => {
  await desktop?.close();
  await phone?.close();
  await browser?.close();
  await world?.stop();
});

describe('the automation builder', () => {
  test('trigger → wait → send email, built as a graph; the invalid graph shows the server error; saved, it is what the API returns', async () => {
    await page.goto(`${base}/dashboard/automations`);
    await page.getByRole('link', { name: 'New automation' }).first().click();
    await page.getByRole('heading', { name: 'New automation' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Onboarding');
    const panel = page.getByRole('complementary', { name: 'Step settings' });
    await panel.getByLabel('Event').fill('user.created');
    await page.getByLabel('Add a step').selectOption({ label: 'Wait' });
    await panel.getByLabel('Wait for').fill('1 hour');
    await page.getByLabel('Add a step').selectOption({ label: 'Send email' });
    // Saved without a template: the server's check refuses it, and the step it names is marked.
    await page.getByRole('button', { name: 'Save' }).click();
    const alert = page.getByRole('alert');
    await alert.getByText('steps[2].config.template.id').waitFor();
    expect(await page.locator('.flow-node.invalid').count()).toBe(1);
    expect(await page.locator('.flow-node.invalid').textContent()).toContain('Send email');
    expect((await world.p.api('GET', '/automations')).body.data).toEqual([]);
    await panel.getByLabel('Template').selectOption({ label: 'Welcome' });
    expect(await page.locator('.flow-edge').count()).toBe(2);
    await screenshot(page, 'automation-builder');
    expect(await axeViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForURL(/\/dashboard\/automations\/[0-9a-f-]{36}$/);
    automationId = page.url().split('/').pop()!;
    await page.getByRole('heading', { name: 'Onboarding' }).waitFor();
    const a = (await world.p.api('GET', `/automations/${automationId}`)).body;
    expect(a).toMatchObject({
      name: 'Onboarding',
      status: 'disabled',
      steps: [
        { key: 'trigger', type: 'trigger', config: { event_name: 'user.created' } },
        { key: 'delay_1', type: 'delay', config: { duration: '1 hour' } },
        { key: 'send_email_1', type: 'send_email', config: { template: { id: templateId } } },
      ],
      connections: [
        { from: 'trigger', to: 'delay_1', type: 'default' },
        { from: 'delay_1', to: 'send_email_1', type: 'default' },
      ],
    });
  }, 60_000);

  test('an existing automation in the builder: a condition connected by its handles, saved by PATCH', async () => {
    await page.getByRole('link', { name: 'Edit in the builder' }).click();
    await page.getByRole('heading', { name: 'Edit Onboarding' }).waitFor();
    expect(await page.locator('.flow-node').count()).toBe(3);
    // Select the email step, add a condition below it (connected from it), then connect its "yes" to a new wait.
    await page.locator('.flow-node', { hasText: 'Send email' }).getByRole('button', { pressed: false }).first().click();
    await page.getByLabel('Add a step').selectOption({ label: 'Condition' });
    const panel = page.getByRole('complementary', { name: 'Step settings' });
    await panel.getByLabel('Field').fill('event.plan');
    await panel.getByLabel('Value').fill('pro');
    await page.getByLabel('Add a step').selectOption({ label: 'Wait' });
    // The wait was connected as "yes" (the condition's first way out); connect "no" to it too by the handle.
    await page.getByRole('button', { name: 'no: connect condition_1 to a step' }).click();
    await page.getByRole('status').getByText('click a step').waitFor();
    await page.locator('.flow-node', { hasText: '1 day' }).locator('.flow-node-body').click();
    expect(await page.locator('.flow-edge').count()).toBe(5);
    await page.locator('.flow-node', { hasText: 'Condition' }).locator('.flow-node-body').click();
    await page.screenshot({ path: join(SCREENSHOTS, 'automation-builder-window.png') });
    expect(await axeViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('heading', { name: 'Onboarding' }).waitFor();
    const a = (await world.p.api('GET', `/automations/${automationId}`)).body;
    expect(a.steps.map((s: { key: string }) => s.key)).toEqual(['trigger', 'delay_1', 'send_email_1', 'condition_1', 'delay_2']);
    expect(a.connections).toEqual([
      { from: 'trigger', to: 'delay_1', type: 'default' },
      { from: 'delay_1', to: 'send_email_1', type: 'default' },
      { from: 'send_email_1', to: 'condition_1', type: 'default' },
      { from: 'condition_1', to: 'delay_2', type: 'condition_met' },
      { from: 'condition_1', to: 'delay_2', type: 'condition_not_met' },
    ]);
    expect(await cspViolations(page)).toEqual([]);
  }, 60_000);

  test('phone width: the builder fits', async () => {
    const p = await signIn(phone, base, { email: world.p.creds.admin_email, password: world.p.creds.admin_password });
    await p.getByRole('heading', { name: 'Overview' }).waitFor();
    await p.goto(`${base}/dashboard/automations/${automationId}/edit`);
    await p.locator('.flow-node').first().waitFor();
    await p.waitForLoadState('networkidle');
    expect(await fitsWidth(p)).toBe(true);
    await screenshot(p, 'phone-automation-builder');
    expect(await axeViolations(p)).toEqual([]);
    expect(await cspViolations(p)).toEqual([]);
  }, 30_000);
});
