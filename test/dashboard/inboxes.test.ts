// The Inboxes pages in a real browser (issue 39, item 5) against a running Posthorn: a support
// conversation — a customer's message delivered over SMTP into the inbox, opened (read), answered
// with the r shortcut (the draft saves itself as it is typed, through the drafts API, then is sent
// and joins the thread), labelled, archived with e, found again by search — then the phone's
// separate list and conversation views, the shortcuts' help, and an inbox made from the dashboard.
// Every view axe-clean, screenshots at 1440×900 and 390×844.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startMailWorld, type MailWorld } from '../helpers/world';
import { startSmtp, type SmtpListeners } from '../../src/smtp';
import { inboundProcessed, mta } from '../helpers/smtp';
import { axeViolations, launchBrowser, screenshot, signIn } from '../helpers/browser';
import { freePort } from '../helpers/posthorn';
import { until } from '../helpers/wait';
import { markVerified } from '../helpers/emails';

let world: MailWorld;
let smtp: SmtpListeners;
let browser: Browser;
let base: string;
let inboxId: string;
/** A remote image's host: it counts the fetches of the image, so a test sees whether it was loaded. */
let images: ReturnType<typeof Bun.serve>;
let imageHits = 0;

const ADDRESS = 'support@help.test';

/** The page does not scroll sideways. */
const fitsWidth = (p: Page) => p.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1);

async function signedIn(ctx: BrowserContext): Promise<Page> {
  const p = await signIn(ctx, base, { email: world.p.creds.admin_email, password: world.p.creds.admin_password });
  await p.getByRole('heading', { name: 'Overview' }).waitFor();
  return p;
}

/** A customer's message to the inbox, over SMTP from the internet's side, processed. */
async function customerWrites(from: string, subject: string, text: string, headers: Record<string, string> = {}): Promise<void> {
  await mta(smtp.port('starttls')).sendMail({ from, to: ADDRESS, subject, text, headers } as never);
  await inboundProcessed(world.p);
}

/**
 * A screenshot for docs/screenshots/ (copied there by hand, as the others): without the setup
 * banner, which a loopback test server always shows (its public_url cannot be reached from outside).
 */
async function docsScreenshot(page: Page, name: string): Promise<void> {
  await page.evaluate(() => document.querySelector('.setup-banner')?.remove());
  await screenshot(page, name);
}

/** The inbox's threads as the API lists them. */
async function threads(query = ''): Promise<{ id: string; subject: string; folder: string; read: boolean; labels: { id: string }[] }[]> {
  const r = await world.p.api('GET', `/inboxes/${inboxId}/threads${query}`);
  expect(r.status).toBe(200);
  return r.body.data;
}

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  world = await startMailWorld({ 'http.port': port, public_url: base, 'smtp.starttls_ports': [0] });
  smtp = await startSmtp(world.p.svc);
  const { api } = world.p;
  // A verified domain that receives: an inbox can live on it, and its replies are signed and sent.
  const domain = await api('POST', '/domains', { body: { name: 'help.test', capabilities: { receiving: 'enabled' } } });
  expect(domain.status).toBe(201);
  await markVerified(world.p, world.p.creds.team_id, domain.body.id);
  const made = await api('POST', '/inboxes', { body: { email_address: ADDRESS, name: 'Support', from_name: 'Acme Support' } });
  expect(made.status).toBeLessThan(300);
  inboxId = made.body.id;
  await customerWrites('Ada Lovelace <ada@dest.test>', 'Refund for order 1041', 'Hello,\n\nCould I get a refund for order 1041? It arrived broken.\n\nAda');
  await customerWrites('Bob <bob@dest.test>', 'Cannot sign in', 'My password does not work since yesterday.');
  await until(async () => (await threads('?folders=inbox')).length === 2, 'both messages threaded into the inbox');
  images = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: () => {
      imageHits++;
      return new Response(Buffer.from('R0lGODlhAQABAAAAACw=', 'base64'), { headers: { 'content-type': 'image/gif' } });
    },
  });
  browser = await launchBrowser();
}, 90_000);

afterAll(async () => {
  images?.stop(true);
  await browser?.close();
  await smtp?.stop();
  await world?.stop();
});

describe('a support conversation in the Inboxes page (desktop)', () => {
  let context: BrowserContext;
  let page: Page;
  beforeAll(async () => {
    context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    page = await signedIn(context);
  }, 30_000);
  afterAll(() => context?.close());

  test('the inbox list shows the inbox with its unread count; it opens on its conversations, unread ones marked', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Inboxes' }).click();
    await page.getByRole('link', { name: 'Support' }).waitFor();
    expect(await page.getByText('2 unread').count()).toBe(1);
    await screenshot(page, 'inboxes-list');
    expect(await axeViolations(page)).toEqual([]);
    await page.getByRole('link', { name: 'Support' }).click();
    const list = page.getByRole('region', { name: 'Conversations' });
    await list.locator('.thread-subject', { hasText: 'Refund for order 1041' }).waitFor();
    expect(await list.locator('.thread-item.unread').count()).toBe(2);
    expect(await list.getByText('Unread:').count()).toBe(2);
    await screenshot(page, 'inbox-mailbox');
    expect(await axeViolations(page)).toEqual([]);
  }, 30_000);

  test('opening a conversation shows its message in the sandboxed frame and marks it read', async () => {
    const list = page.getByRole('region', { name: 'Conversations' });
    await list.getByRole('link', { name: /Refund for order 1041/ }).click();
    const thread = page.getByRole('region', { name: 'Conversation', exact: true });
    await thread.getByRole('heading', { name: 'Refund for order 1041' }).waitFor();
    await thread.locator('.messages').getByText('It arrived broken.').waitFor();
    const id = (await threads()).find((t) => t.subject === 'Refund for order 1041')!.id;
    await until(async () => (await threads()).find((t) => t.id === id)!.read, 'the thread read');
    await until(async () => (await list.locator('.thread-item.unread').count()) === 1, 'the list shows it read');
    // Unread only: the read one leaves the list (the API's `read=false`), and comes back.
    await list.getByRole('checkbox', { name: 'Unread only' }).check();
    await until(async () => (await list.locator('.thread-item').count()) === 1, 'only the unread one listed');
    expect(await list.locator('.thread-subject').textContent()).toBe('Cannot sign in');
    await list.getByRole('checkbox', { name: 'Unread only' }).uncheck();
    await until(async () => (await list.locator('.thread-item').count()) === 2, 'both listed again');
    await thread.getByRole('heading', { name: 'Refund for order 1041' }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
  }, 30_000);

  test('r opens the reply; the draft saves as it is typed; Send sends it into the thread', async () => {
    const thread = page.getByRole('region', { name: 'Conversation', exact: true });
    await page.locator('main').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('r');
    const composer = thread.getByRole('region', { name: 'Reply' });
    await composer.waitFor();
    await page.keyboard.type('Hi Ada, sorry about that. The refund is on its way.');
    await composer.getByText('Draft saved').waitFor({ timeout: 15_000 });
    // The draft is the inbox's, through the drafts API: the SDK sees what was typed.
    const drafts = await world.p.resend.inboxes.drafts.list({ inboxId });
    expect(drafts.error).toBeNull();
    expect(drafts.data!.data.map((d) => d.snippet ?? '')).toContainEqual(expect.stringContaining('The refund is on its way'));
    await screenshot(page, 'inbox-reply');
    expect(await axeViolations(page)).toEqual([]);
    await composer.getByRole('button', { name: 'Send' }).click();
    await page.getByText('Reply sent.').waitFor();
    await thread.locator('.messages').getByText('The refund is on its way.').waitFor();
    expect(await thread.locator('.message.outbound').count()).toBe(1);
    // Sent through the one sending core: it reaches Ada's server, as a reply to her message.
    await until(async () => world.sink.messages.some((m) => m.rcptTo.includes('ada@dest.test')), 'the reply delivered');
    const reply = world.sink.messages.find((m) => m.rcptTo.includes('ada@dest.test'))!;
    expect(reply.raw.toString()).toMatch(/^In-Reply-To: </im);
    expect((await world.p.resend.inboxes.drafts.list({ inboxId })).data!.data.length).toBe(0);
  }, 60_000);

  test('a label is put on and shows in the list; e archives the conversation, the next one opens', async () => {
    const label = await world.p.resend.inboxes.labels.create({ inboxId, name: 'Billing', color: '#E93D82' });
    expect(label.error).toBeNull();
    await page.reload();
    const thread = page.getByRole('region', { name: 'Conversation', exact: true });
    await thread.getByRole('button', { name: 'Labels' }).click();
    const dialog = page.getByRole('dialog', { name: 'Labels' });
    await dialog.getByRole('checkbox', { name: 'Billing' }).check();
    await until(async () => (await threads()).find((t) => t.subject === 'Refund for order 1041')!.labels.length === 1, 'the label put on');
    await dialog.getByRole('button', { name: 'Done' }).click();
    await thread.getByRole('button', { name: 'Remove label Billing' }).waitFor();
    const list = page.getByRole('region', { name: 'Conversations' });
    await list.locator('.thread-item.current .label-chip', { hasText: 'Billing' }).waitFor();
    await thread.locator('.message.outbound').waitFor();
    // Assigned to a teammate (the team's one member here): Posthorn's `assignee` (docs/api.md §25.4).
    const me = world.p.creds.admin_email;
    await thread.getByRole('combobox', { name: 'Assigned to' }).selectOption(me);
    await page.getByText(`Assigned to ${me}.`).waitFor();
    await until(
      async () =>
        (await world.p.api('GET', `/inboxes/${inboxId}/threads/${(await threads()).find((t) => t.subject === 'Refund for order 1041')!.id}`)).body.assignee ===
        me,
      'assigned',
    );
    await list.locator('.thread-item.current .assignee').waitFor();
    await thread.locator('.thread-tags').getByText(`Assigned to ${me}`).waitFor();
    await docsScreenshot(page, 'docs-inbox');
    await page.locator('main h1').click();
    await page.keyboard.press('e');
    await page.getByText('Moved to archive.').waitFor();
    await until(async () => (await threads()).find((t) => t.subject === 'Refund for order 1041')!.folder === 'archive', 'archived');
    await thread.getByRole('heading', { name: 'Cannot sign in' }).waitFor();
    expect(await list.locator('.thread-subject', { hasText: 'Refund for order 1041' }).count()).toBe(0);
    await page.getByRole('navigation', { name: 'Folders and labels' }).getByRole('link', { name: 'Archive' }).click();
    await list.locator('.thread-subject', { hasText: 'Refund for order 1041' }).waitFor();
  }, 60_000);

  test('search finds the archived conversation by a word of its body', async () => {
    await page.getByRole('searchbox', { name: 'Search conversations' }).fill('refund');
    await page.getByRole('button', { name: 'Search' }).click();
    const list = page.getByRole('region', { name: 'Conversations' });
    await list.getByRole('heading', { name: 'Search: refund' }).waitFor();
    await list.locator('.thread-subject', { hasText: 'Refund for order 1041' }).waitFor();
    expect(await list.locator('.thread-subject', { hasText: 'Cannot sign in' }).count()).toBe(0);
    await screenshot(page, 'inbox-search');
    expect(await axeViolations(page)).toEqual([]);
  }, 30_000);

  test('f forwards the conversation to a colleague; the forward leaves through the sink', async () => {
    await page.goto(`${base}/dashboard/inboxes/${inboxId}`);
    const list = page.getByRole('region', { name: 'Conversations' });
    await list.getByRole('link', { name: /Cannot sign in/ }).click();
    const thread = page.getByRole('region', { name: 'Conversation', exact: true });
    await thread.getByRole('heading', { name: 'Cannot sign in' }).waitFor();
    await page.locator('main h1').click();
    await page.keyboard.press('f');
    const composer = thread.getByRole('region', { name: 'Forward' });
    await composer.getByLabel('To').fill('it@dest.test');
    await composer.getByLabel('Message').fill('Can you look at his account?');
    await composer.getByText('Draft saved').waitFor({ timeout: 15_000 });
    await composer.getByRole('button', { name: 'Send' }).click();
    await page.getByText('Forwarded.').waitFor();
    await until(async () => world.sink.to('it@dest.test').length === 1, 'the forward delivered');
    const raw = world.sink.to('it@dest.test')[0]!.raw.toString();
    expect(raw).toContain('Can you look at his account?');
    expect(raw).toContain('My password does not work since yesterday.');
    // Its draft is gone once sent.
    await until(async () => (await world.p.resend.inboxes.drafts.list({ inboxId })).data!.data.length === 0, 'the draft removed');
  }, 60_000);

  test('a new email from the inbox: saved in Drafts as it is written, then sent', async () => {
    await page.getByRole('button', { name: 'New email' }).click();
    const composer = page.getByRole('region', { name: 'New email' });
    await composer.getByLabel('To').fill('dana@dest.test');
    await composer.getByLabel('Subject').fill('Your order shipped');
    await composer.getByLabel('Message').fill('Hi Dana, it is on its way.');
    await composer.getByText('Draft saved').waitFor({ timeout: 15_000 });
    await page
      .getByRole('navigation', { name: 'Folders and labels' })
      .getByRole('link', { name: /Drafts/ })
      .click();
    const list = page.getByRole('region', { name: 'Conversations' });
    await list.getByRole('button', { name: /Your order shipped/ }).click();
    const reopened = page.getByRole('region', { name: 'New email' });
    expect(await reopened.getByLabel('Message').inputValue()).toBe('Hi Dana, it is on its way.');
    expect(await axeViolations(page)).toEqual([]);
    await reopened.getByRole('button', { name: 'Send' }).click();
    await page.getByText('Email sent.').waitFor();
    await until(async () => world.sink.to('dana@dest.test').length === 1, 'the new email delivered');
    expect(world.sink.to('dana@dest.test')[0]!.raw.toString()).toMatch(/^Subject: Your order shipped/m);
  }, 60_000);

  test("an HTML message's remote images stay off until Show remote images is clicked", async () => {
    const src = `http://127.0.0.1:${images.port}/pixel.gif`;
    await mta(smtp.port('starttls')).sendMail({
      from: 'Eve <eve@dest.test>',
      to: ADDRESS,
      subject: 'Look at this',
      html: `<p>See the picture below.</p><img src="${src}" alt="a picture" width="1" height="1">`,
    } as never);
    await inboundProcessed(world.p);
    await page.goto(`${base}/dashboard/inboxes/${inboxId}`);
    await page
      .getByRole('region', { name: 'Conversations' })
      .getByRole('link', { name: /Look at this/ })
      .click();
    const frame = page.frameLocator('iframe[title^="Message 1"]');
    await frame.getByText('See the picture below.').waitFor();
    expect(imageHits).toBe(0);
    await page.getByRole('button', { name: 'Show remote images' }).click();
    await until(async () => imageHits > 0, 'the remote image loaded once asked for');
  }, 60_000);

  test('? lists the shortcuts; j and k walk the conversations', async () => {
    await page.goto(`${base}/dashboard/inboxes/${inboxId}`);
    const list = page.getByRole('region', { name: 'Conversations' });
    await list.locator('.thread-subject', { hasText: 'Cannot sign in' }).waitFor();
    await page.keyboard.press('?');
    const help = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await help.getByText('Move to trash').waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await page.keyboard.press('Escape');
    // Latest activity first: the picture's thread, then the sign-in one.
    const thread = page.getByRole('region', { name: 'Conversation', exact: true });
    await page.keyboard.press('j');
    await thread.getByRole('heading', { name: 'Look at this' }).waitFor();
    await page.keyboard.press('j');
    await thread.getByRole('heading', { name: 'Cannot sign in' }).waitFor();
    await page.keyboard.press('k');
    await thread.getByRole('heading', { name: 'Look at this' }).waitFor();
    expect(new URL(page.url()).searchParams.get('thread')).toBeTruthy();
  }, 30_000);

  test('# moves the open conversation to the trash; from there it is deleted for good', async () => {
    const thread = page.getByRole('region', { name: 'Conversation', exact: true });
    await thread.getByRole('heading', { name: 'Look at this' }).waitFor();
    await page.keyboard.press('#');
    await page.getByText('Moved to trash.').waitFor();
    await until(async () => (await threads()).find((t) => t.subject === 'Look at this')?.folder === 'trash', 'in the trash');
    await page.getByRole('navigation', { name: 'Folders and labels' }).getByRole('link', { name: 'Trash' }).click();
    await page
      .getByRole('region', { name: 'Conversations' })
      .getByRole('link', { name: /Look at this/ })
      .click();
    await thread.getByRole('button', { name: 'Delete forever' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete forever' }).click();
    await page.getByText('Conversation deleted.').waitFor();
    expect((await threads()).find((t) => t.subject === 'Look at this')).toBeUndefined();
  }, 30_000);

  test('a new inbox is made from the dashboard on a receiving domain', async () => {
    await page.goto(`${base}/dashboard/inboxes`);
    await page.getByRole('button', { name: 'New inbox' }).click();
    const dialog = page.getByRole('dialog', { name: 'New inbox' });
    await dialog.getByLabel('Address').fill('sales');
    await dialog.getByLabel('Name', { exact: true }).fill('Sales');
    expect(await axeViolations(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Create inbox' }).click();
    await page.locator('main h1', { hasText: 'Sales' }).waitFor();
    const list = await world.p.resend.inboxes.list();
    expect(list.data!.data.map((i) => i.email_address).sort()).toEqual(['sales@help.test', ADDRESS]);
    await page.locator('main').getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'Inbox settings' }).waitFor();
    await screenshot(page, 'inbox-settings');
    expect(await axeViolations(page)).toEqual([]);
    // The support inbox's label renamed and recoloured there (PATCH …/labels/{label}).
    await page.goto(`${base}/dashboard/inboxes/${inboxId}/settings`);
    await page.getByRole('button', { name: 'Edit label Billing' }).click();
    const form = page.locator('form', { has: page.getByLabel('Label name') });
    await form.getByLabel('Label name').fill('Billing and refunds');
    await form.getByRole('radio', { name: '#30A46C' }).check();
    await form.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('Billing and refunds').waitFor();
    const labels = await world.p.resend.inboxes.labels.list({ inboxId });
    expect(labels.data!.data.map((l) => [l.name, l.color.toUpperCase()])).toEqual([['Billing and refunds', '#30A46C']]);
  }, 30_000);
});

describe('on a phone the list and the conversation are separate views', () => {
  test('the list, then the conversation alone, then back', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true });
    const page = await signedIn(context);
    await customerWrites('Cy <cy@dest.test>', 'Where is my parcel?', 'It has been a week. <https://example.org/track>');
    await page.goto(`${base}/dashboard/inboxes/${inboxId}`);
    const list = page.getByRole('region', { name: 'Conversations' });
    const thread = page.getByRole('region', { name: 'Conversation', exact: true });
    await list.locator('.thread-subject', { hasText: 'Where is my parcel?' }).waitFor();
    expect(await thread.isVisible()).toBe(false);
    expect(await fitsWidth(page)).toBe(true);
    await screenshot(page, 'phone-inbox-list');
    await docsScreenshot(page, 'docs-phone-inbox');
    expect(await axeViolations(page)).toEqual([]);
    await list.getByRole('link', { name: /Where is my parcel/ }).click();
    await thread.locator('.messages').getByText('It has been a week.').waitFor();
    expect(await list.isVisible()).toBe(false);
    expect(await fitsWidth(page)).toBe(true);
    await screenshot(page, 'phone-inbox-thread');
    expect(await axeViolations(page)).toEqual([]);
    await page.goBack();
    await list.locator('.thread-subject', { hasText: 'Where is my parcel?' }).waitFor();
    expect(await thread.isVisible()).toBe(false);
    await context.close();
  }, 60_000);
});
