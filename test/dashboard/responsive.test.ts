// Every dashboard route at phone (390×844) and desktop (1440×900) size, each showing real content:
// the page never scrolls sideways (a wide table scrolls in its own box) and axe-core finds no
// serious violation. The routes are read from the router's table in web/src/main.tsx, so a page
// added there is walked without touching this file; a route's `:id` is the seeded record's, or else
// the first link of that shape on the nearest list page above it (issue 35, item 1).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startMailWorld, type MailWorld } from '../helpers/world';
import { startSmtp, type SmtpListeners } from '../../src/smtp';
import { mta, inboundProcessed } from '../helpers/smtp';
import { markVerified, waitForEmail } from '../helpers/emails';
import { until } from '../helpers/wait';
import { axeViolations, launchBrowser, screenshot, signIn } from '../helpers/browser';
import { freePort } from '../helpers/posthorn';
import { EMITTED_WEBHOOK_KINDS } from '../../src/event-catalogue';

/** The route patterns of the dashboard's router table (`const ROUTES … = [ ['/dashboard…', …], … ]`). */
export function dashboardRoutes(): string[] {
  const src = readFileSync(resolve(import.meta.dir, '..', '..', 'web', 'src', 'main.tsx'), 'utf8');
  const table = src.slice(src.indexOf('const ROUTES'));
  const body = table.slice(0, table.indexOf('\n];'));
  return [...body.matchAll(/^\s*\[\s*'(\/dashboard[^']*)'/gm)].map((m) => m[1]);
}

let world: MailWorld;
let smtp: SmtpListeners;
let browser: Browser;
let base: string;
let hooks: ReturnType<typeof Bun.serve>;
/** Seeded ids by the route pattern they fill. */
const ids: Record<string, string> = {};
/** Records the names-and-reasons checks look at. */
const extra: Record<string, string> = {};

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  // A webhook endpoint that accepts everything, so the webhook has deliveries to show.
  hooks = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('ok') });
  world = await startMailWorld({ 'http.port': port, public_url: base, 'smtp.starttls_ports': [0], 'security.allow_private_networks': true });
  smtp = await startSmtp(world.p.svc);
  const { resend, api } = world.p;

  const hook = await resend.webhooks.create({
    endpoint: `http://127.0.0.1:${hooks.port}/hooks`,
    events: ['email.sent', 'email.delivered', 'email.bounced'],
  } as never);
  ids['/dashboard/webhooks/:id'] = hook.data!.id;
  const delivered = (
    await resend.emails.send({
      from: 'Acme <hello@example.test>',
      to: ['ann@dest.test'],
      subject: 'Welcome to Acme, a subject long enough to wrap on a phone screen',
      html: '<h1>Hello Ann</h1><p>Thanks for joining.</p>',
    })
  ).data!.id;
  ids['/dashboard/emails/:id'] = delivered;
  world.sink.respond('nobody@dest.test', { code: 550, message: '5.1.1 <nobody@dest.test>: Recipient address rejected: User unknown in local recipient table' });
  await resend.emails.send({ from: 'Acme <hello@example.test>', to: ['nobody@dest.test'], subject: 'To nobody', html: '<p>x</p>' });
  await resend.emails.send({ from: 'Acme <hello@example.test>', to: ['cy@dest.test'], subject: 'Later', html: '<p>Later</p>', scheduledAt: 'in 2 hours' });
  await waitForEmail(world.p.svc, { team_id: world.p.creds.team_id, id: delivered }, (e) => e.last_event === 'delivered');
  await until(async () => (await api('GET', '/suppressions/nobody%40dest.test')).status === 200, 'the bounce suppressed');

  const segment = (await resend.segments.create({ name: 'Newsletter' })).data!.id;
  await resend.topics.create({ name: 'Product news', defaultSubscription: 'opt_in', description: 'New features, once a month' });
  await resend.contactProperties.create({ key: 'company', type: 'string', fallbackValue: 'your company' });
  const dana = await resend.contacts.create({
    email: 'dana@dest.test',
    firstName: 'Dana',
    properties: { company: 'Acme Corp' },
    segments: [{ id: segment }],
  } as never);
  ids['/dashboard/audiences/contacts/:id'] = dana.data!.id;
  await resend.contacts.create({ email: 'eve@dest.test', firstName: 'Eve', unsubscribed: true } as never);
  const broadcast = await resend.broadcasts.create({
    segmentId: segment,
    from: 'Acme <news@example.test>',
    subject: 'March news',
    name: 'March news',
    html: '<p>News for {{{contact.first_name|you}}}</p>',
  } as never);
  ids['/dashboard/broadcasts/:id'] = broadcast.data!.id;
  const sentBroadcast = (
    await resend.broadcasts.create({
      segmentId: segment,
      from: 'Acme <news@example.test>',
      subject: 'April news',
      name: 'April news',
      html: '<p>Hi</p>',
    } as never)
  ).data!.id;
  expect((await resend.broadcasts.send(sentBroadcast)).error).toBeNull();
  extra.sentBroadcast = sentBroadcast;
  // An email to the address the bounce suppressed: suppressed, never tried.
  extra.suppressed = (await resend.emails.send({ from: 'Acme <hello@example.test>', to: ['nobody@dest.test'], subject: 'Again', html: '<p>x</p>' })).data!.id;

  const template = (
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
  ids['/dashboard/templates/:id'] = template;
  ids['/dashboard/templates/:id/versions'] = template;
  await resend.events.create({ name: 'user.created', schema: { plan: 'string' } });
  const automation = await resend.automations.create({
    name: 'Welcome series',
    status: 'enabled',
    steps: [
      { key: 'start', type: 'trigger', config: { eventName: 'user.created' } },
      { key: 'welcome', type: 'send_email', config: { template: { id: template, variables: { NAME: { var: 'contact.first_name' } } } } },
    ],
    connections: [{ from: 'start', to: 'welcome' }],
  });
  ids['/dashboard/automations/:id'] = automation.data!.id;
  await resend.events.send({ event: 'user.created', email: 'dana@dest.test', payload: { plan: 'pro' } });

  const inbound = await api('POST', '/domains', { body: { name: 'inbound.test', capabilities: { receiving: 'enabled' } } });
  // An inbox on it (verified), so the Inboxes pages have a conversation to show: the message below lands in it.
  await markVerified(world.p, world.p.creds.team_id, inbound.body.id);
  ids['/dashboard/inboxes/:id'] = (await api('POST', '/inboxes', { body: { email_address: 'support@inbound.test', name: 'Support' } })).body.id;
  await mta(smtp.port('starttls')).sendMail({
    from: 'Zoe <zoe@sender.test>',
    to: 'support@inbound.test',
    subject: 'Question about pricing',
    text: 'Hi there',
  } as never);
  await inboundProcessed(world.p);
  ids['/dashboard/domains/:id'] = world.domain.id;
  await until(async () => (await api('GET', '/logs')).body.data.length > 0, 'a log entry');
  ids['/dashboard/logs/:id'] = (await api('GET', '/logs')).body.data[0].id;
  await until(async () => (await api('GET', `/webhooks/${ids['/dashboard/webhooks/:id']}/events`)).body.data?.length > 0, 'a webhook delivery');
  await world.p.svc.backOffice.idle('automations');

  browser = await launchBrowser();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await smtp?.stop();
  await world?.stop();
  hooks?.stop(true);
});

/** The route's path with its parameters filled: from the seed, else from a link on the nearest list page above it. */
async function fill(page: Page, pattern: string): Promise<string> {
  if (!pattern.includes(':')) return pattern;
  if (ids[pattern]) return pattern.replace(/:[a-z_]+/g, encodeURIComponent(ids[pattern]));
  // A page below a seeded record's (`/dashboard/automations/:id/edit`) takes that record's id.
  const parent = Object.keys(ids).find((k) => pattern.startsWith(`${k}/`));
  if (parent) return pattern.replace(/:[a-z_]+/g, encodeURIComponent(ids[parent]!));
  const head = pattern.slice(0, pattern.indexOf('/:'));
  const routes = dashboardRoutes();
  let list = head;
  while (!routes.includes(list) && list.includes('/')) list = list.slice(0, list.lastIndexOf('/'));
  await page.goto(base + list);
  await page.waitForLoadState('networkidle');
  const hrefs = await page.$$eval('main a[href]', (as) => as.map((a) => a.getAttribute('href') ?? ''));
  const id = hrefs.map((h) => h.startsWith(`${head}/`) && h.slice(head.length + 1).split(/[/?#]/)[0]).find((x) => x);
  // No record to show: the page still renders (its "not found" state), which is walked all the same.
  if (!id) console.warn(`responsive walk: no id found for ${pattern} on ${list}; seed one in test/dashboard/responsive.test.ts`);
  return pattern.replace(/:[a-z_]+/, id || 'none').replace(/:[a-z_]+/g, 'none');
}

for (const [size, viewport] of [
  ['phone', { width: 390, height: 844 }],
  ['desktop', { width: 1440, height: 900 }],
] as const) {
  describe(`every route at ${viewport.width}×${viewport.height}`, () => {
    let context: BrowserContext;
    let page: Page;
    beforeAll(async () => {
      context = await browser.newContext({ viewport, isMobile: size === 'phone' });
      page = await signIn(context, base, { email: world.p.creds.admin_email, password: world.p.creds.admin_password });
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
    }, 30_000);
    afterAll(() => context?.close());

    test('the router has the routes this walk expects to find', () => {
      const routes = dashboardRoutes();
      expect(routes).toContain('/dashboard');
      expect(routes).toContain('/dashboard/emails/:id');
      expect(routes.length).toBeGreaterThan(20);
    });

    for (const pattern of dashboardRoutes()) {
      test(pattern, async () => {
        const path = await fill(page, pattern);
        await page.goto(base + path);
        await page.locator('main h1').first().waitFor({ timeout: 15_000 });
        await page.waitForLoadState('networkidle');
        await until(async () => (await page.locator('main .loading').count()) === 0, `${path} loaded`);
        const { scrollWidth, innerWidth, wide } = await page.evaluate(() => ({
          scrollWidth: document.documentElement.scrollWidth,
          innerWidth: window.innerWidth,
          // What sticks out, to say which element to fix when the page is too wide.
          wide: Array.from(document.querySelectorAll('main *'))
            .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1 && !el.closest('.table-wrap, pre, .tabs'))
            .slice(0, 5)
            .map((el) => `${el.tagName.toLowerCase()}.${Array.from(el.classList).join('.')} right=${Math.round(el.getBoundingClientRect().right)}`),
        }));
        if (viewport.width < 500) await screenshot(page, `responsive-${size}${pattern.replace(/[/:]+/g, '-')}`);
        expect({ path, scrollWidth: Math.min(scrollWidth, innerWidth), wide: scrollWidth > innerWidth ? wide : [] }).toEqual({
          path,
          scrollWidth: innerWidth,
          wide: [],
        });
        expect(await axeViolations(page)).toEqual([]);
      }, 60_000);
    }
  });
}

// Issue 35, item 6: names where ids were, a suppressed email's reason, the whole webhook payload.
describe('names, reasons, panels', () => {
  let context: BrowserContext;
  let page: Page;
  beforeAll(async () => {
    context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    page = await signIn(context, base, { email: world.p.creds.admin_email, password: world.p.creds.admin_password });
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
  }, 30_000);
  afterAll(() => context?.close());

  test("a suppressed email says why: the suppression's origin, class and reply, and the email that caused it", async () => {
    await until(async () => (await world.p.api('GET', `/emails/${extra.suppressed}`)).body.last_event === 'suppressed', 'suppressed');
    await page.goto(`${base}/dashboard/emails/${extra.suppressed}`);
    const why = page.locator('ul.suppressed-why');
    await why.getByText('Recipient address rejected').waitFor({ timeout: 10_000 });
    const text = (await page.locator('main').textContent()) ?? '';
    expect(text).not.toContain('No attempt yet');
    expect(text).toContain('the recipient is on your suppression list');
    expect(await why.textContent()).toContain('a message to it bounced permanently');
    expect(await why.getByText('bounce class recipient').count()).toBe(1);
    expect(await why.getByRole('link', { name: 'this email' }).getAttribute('href')).toMatch(/^\/dashboard\/emails\//);
    await screenshot(page, 'email-suppressed');
    expect(await axeViolations(page)).toEqual([]);
  }, 30_000);

  test("a log entry names its API key; a sent broadcast its segment; the runs list each run's contact", async () => {
    await page.goto(`${base}/dashboard/logs/${ids['/dashboard/logs/:id']}`);
    expect(await page.getByRole('link', { name: 'Default key' }).getAttribute('href')).toBe('/dashboard/api-keys');
    await page.goto(`${base}/dashboard/broadcasts/${extra.sentBroadcast}`);
    const segment = page.getByRole('link', { name: 'Newsletter' });
    await segment.waitFor({ timeout: 10_000 });
    expect(await segment.getAttribute('href')).toMatch(/^\/dashboard\/audiences\?segment=/);
    await page.goto(`${base}/dashboard/automations/${ids['/dashboard/automations/:id']}`);
    const runs = page.getByRole('table', { name: 'Runs' });
    await runs.getByRole('link', { name: 'dana@dest.test' }).waitFor({ timeout: 10_000 });
    expect(await runs.getByRole('columnheader', { name: 'Contact' }).count()).toBe(1);
    expect(await runs.getByRole('link', { name: 'dana@dest.test' }).getAttribute('href')).toBe(
      `/dashboard/audiences/contacts/${ids['/dashboard/audiences/contacts/:id']}`,
    );
  }, 30_000);

  test('the webhook delivery panel shows the whole payload with a copy button; the form offers every kind the server sends', async () => {
    const hook = ids['/dashboard/webhooks/:id'];
    const [event] = (await world.p.api('GET', `/webhooks/${hook}/events`)).body.data;
    await page.goto(`${base}/dashboard/webhooks/${hook}?event=${event.id}`);
    const body = page.getByRole('region', { name: 'Request body' });
    await body.waitFor({ timeout: 10_000 });
    const payload = (await world.p.api('GET', `/webhooks/${hook}/events/${event.id}`)).body.payload;
    expect(JSON.parse((await body.textContent()) ?? '')).toEqual(payload);
    // Wrapped to the panel: nothing to scroll sideways.
    expect(await body.evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
    expect(await page.getByRole('button', { name: /^Copy: / }).count()).toBeGreaterThan(0);
    await page.getByRole('button', { name: 'Edit' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    for (const kind of EMITTED_WEBHOOK_KINDS) expect(await dialog.getByRole('checkbox', { name: kind, exact: true }).count()).toBe(1);
    await screenshot(page, 'webhook-form');
  }, 30_000);
});
