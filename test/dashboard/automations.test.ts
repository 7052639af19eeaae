// The dashboard's Automations pages in a real browser (read only): the automations and event
// definitions made through the SDK, an automation's steps (a send_email step's template by name,
// linked) and its runs filtered by status, and a run's step history — an axe-core check and a
// screenshot of each.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startMailWorld, type MailWorld } from '../helpers/world';
import { until } from '../helpers/wait';
import { axeViolations, launchBrowser, screenshot, signIn } from '../helpers/browser';
import { freePort } from '../helpers/posthorn';

let world: MailWorld;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let base: string;
let automationId: string;
let templateId: string;

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  world = await startMailWorld({ 'http.port': port, public_url: base });
  const { resend } = world.p;
  const tpl = (
    await resend.templates
      .create({
        name: 'Welcome',
        from: 'Acme <hello@example.test>',
        subject: 'Welcome, {{{NAME}}}',
        html: '<p>Hi {{{NAME}}}</p>',
        variables: [{ key: 'NAME', type: 'string', fallbackValue: 'there' }],
      } as never)
      .publish()
  ).data!.id;
  await resend.events.create({ name: 'user.created', schema: { plan: 'string' } });
  await resend.events.create({ name: 'payment.completed', schema: { amount: 'number' } });
  const created = await resend.automations.create({
    name: 'Welcome series',
    status: 'enabled',
    steps: [
      { key: 'start', type: 'trigger', config: { eventName: 'user.created' } },
      { key: 'is_pro', type: 'condition', config: { type: 'rule', field: 'event.plan', operator: 'eq', value: 'pro' } },
      { key: 'welcome', type: 'send_email', config: { template: { id: tpl, variables: { NAME: { var: 'contact.first_name' } } } } },
      { key: 'payment', type: 'wait_for_event', config: { eventName: 'payment.completed', timeout: '3 days' } },
    ],
    connections: [
      { from: 'start', to: 'is_pro' },
      { from: 'is_pro', to: 'welcome', type: 'condition_met' },
      { from: 'welcome', to: 'payment' },
    ],
  });
  automationId = created.data!.id;
  templateId = tpl;
  await resend.contacts.create({ email: 'ann@dest.test', firstName: 'Ann' });
  await resend.events.send({ event: 'user.created', email: 'ann@dest.test', payload: { plan: 'pro' } });
  await resend.events.send({ event: 'user.created', email: 'bob@dest.test', payload: { plan: 'free' } });
  await until(async () => (await resend.automations.runs.list({ automationId })).data!.data.length === 2, 'two runs');
  await world.p.svc.backOffice.idle('automations');

  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await signIn(context, base, { email: world.p.creds.admin_email, password: world.p.creds.admin_password });
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
}, 60_000);

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await world?.stop();
});

describe('automations pages', () => {
  test('the list and the events tab', async () => {
    await page.getByRole('link', { name: 'Automations' }).click();
    await page.getByText('Welcome series').waitFor();
    await page.waitForLoadState('networkidle');
    await screenshot(page, 'automations');
    expect(await axeViolations(page)).toEqual([]);
    await page.getByRole('tab', { name: 'Events' }).click();
    await page.getByText('payment.completed').waitFor();
    expect(await page.getByText('amount: number').count()).toBe(1);
    await screenshot(page, 'automation-events');
    expect(await axeViolations(page)).toEqual([]);
  }, 20_000);

  test("an automation's steps and runs; a run's step history; the status filter", async () => {
    await page.goto(`${base}/dashboard/automations/${automationId}`);
    await page.getByRole('heading', { name: 'Welcome series' }).waitFor();
    await page.getByText('condition met → welcome').waitFor();
    await page.waitForLoadState('networkidle');
    // The send_email step names its template, linked to the template's page.
    const template = page.getByRole('link', { name: 'Welcome', exact: true });
    await template.waitFor();
    expect(await template.getAttribute('href')).toBe(`/dashboard/templates/${templateId}`);
    expect(await page.getByText(templateId).count()).toBe(0);
    await screenshot(page, 'automation');
    expect(await axeViolations(page)).toEqual([]);
    // The waiting run (Ann's): its history.
    await page.getByLabel('Status').selectOption('running');
    await page.waitForLoadState('networkidle');
    await until(async () => (await page.locator('table:has(caption:text("Runs")) tbody tr').count()) === 1, 'one running run');
    await page.locator('table:has(caption:text("Runs")) tbody tr a').first().click();
    await page.getByText('The email').waitFor();
    await page.getByText('payment.completed', { exact: false }).first().waitFor();
    expect(await page.locator('.run-steps li').count()).toBe(4);
    await screenshot(page, 'automation-run');
    expect(await axeViolations(page)).toEqual([]);
  }, 20_000);

  test("a send_email step's template link opens the template; a deleted template is said to be", async () => {
    await page.goto(`${base}/dashboard/automations/${automationId}`);
    await page.getByRole('link', { name: 'Welcome', exact: true }).click();
    await page.getByRole('heading', { name: 'Welcome' }).waitFor();
    expect(page.url()).toBe(`${base}/dashboard/templates/${templateId}`);
    // Gone since the automation was made: the step shows the id, marked deleted.
    await world.p.resend.templates.remove(templateId);
    await page.goto(`${base}/dashboard/automations/${automationId}`);
    await page.getByText(`template ${templateId}`).waitFor();
    await page.getByText('(deleted)').waitFor();
    expect(await page.getByRole('link', { name: 'Welcome', exact: true }).count()).toBe(0);
  }, 20_000);
});
