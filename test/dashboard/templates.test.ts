// The dashboard's Templates pages in a real browser, checked against the official `resend` SDK: the
// list of templates made through the SDK (status, unpublished changes, long names), one created from
// the dashboard, edited and saved (a draft change the SDK sees), published, duplicated, deleted, and
// an edit the API refuses (its message shown, nothing changed) — an axe-core check and a screenshot
// of each view, at desktop and phone width.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startMailWorld, type MailWorld } from '../helpers/world';
import { join } from 'node:path';
import { axeViolations, launchBrowser, screenshot, SCREENSHOTS, signIn } from '../helpers/browser';
import { freePort } from '../helpers/posthorn';

let world: MailWorld;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let base: string;
let receiptId: string;

const LONG_NAME = 'Quarterly account statement for enterprise customers with several workspaces and a very long name';

async function signedIn(ctx: BrowserContext): Promise<Page> {
  const p = await signIn(ctx, base, { email: world.p.creds.admin_email, password: world.p.creds.admin_password });
  await p.getByRole('heading', { name: 'Overview' }).waitFor();
  return p;
}

/** The page does not scroll sideways. */
const fitsWidth = (p: Page) => p.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1);

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  world = await startMailWorld({ 'http.port': port, public_url: base });
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await signedIn(context);
}, 60_000);

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await world?.stop();
});

describe('templates pages', () => {
  test('no template yet: the empty state says how to make one', async () => {
    await page.getByRole('link', { name: 'Templates' }).click();
    await page.getByText('No templates yet.').waitFor();
    expect(await page.getByText('resend.templates.create', { exact: false }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'New template' }).count()).toBe(2);
    await screenshot(page, 'templates-empty');
    expect(await axeViolations(page)).toEqual([]);
  }, 20_000);

  test('the list shows the templates made through the SDK: status, unpublished changes, alias', async () => {
    const { resend } = world.p;
    const order = (
      await resend.templates
        .create({
          name: 'Order confirmation',
          alias: 'order-confirmation',
          from: 'Acme <store@example.test>',
          subject: 'Order {{{ORDER}}}',
          html: '<p>Order {{{ORDER}}}</p>',
          variables: [{ key: 'ORDER', type: 'string', fallbackValue: 'n/a' }],
        } as never)
        .publish()
    ).data!.id;
    await resend.templates.update(order, { html: '<p>Your order {{{ORDER}}}</p>' });
    await resend.templates.create({ name: 'Password reset', html: '<p>Reset</p>' });
    await resend.templates.create({ name: LONG_NAME, alias: 'quarterly-account-statement-enterprise-customers-several-workspaces', html: '<p>Statement</p>' });
    await page.reload();
    await page.getByText('Order confirmation').waitFor();
    const row = (name: string) => page.getByRole('row').filter({ has: page.getByRole('link', { name, exact: true }) });
    expect(await row('Order confirmation').textContent()).toContain('order-confirmation');
    expect(await row('Order confirmation').getByText('published', { exact: true }).count()).toBe(1);
    expect(await row('Order confirmation').getByText('Unpublished changes').count()).toBe(1);
    expect(await row('Password reset').getByText('draft', { exact: true }).count()).toBe(1);
    expect(await row('Password reset').getByText('Unpublished changes').count()).toBe(0);
    expect(await fitsWidth(page)).toBe(true);
    await page.waitForLoadState('networkidle');
    await screenshot(page, 'templates');
    expect(await axeViolations(page)).toEqual([]);
    // Its page: the SDK's fields, and the unpublished changes.
    await row('Order confirmation').getByRole('link').click();
    await page.getByRole('heading', { name: 'Order confirmation' }).waitFor();
    expect(await page.getByLabel('Alias').inputValue()).toBe('order-confirmation');
    expect(await page.getByLabel('From').inputValue()).toBe('Acme <store@example.test>');
    expect(await page.getByRole('textbox', { name: 'HTML' }).inputValue()).toBe('<p>Your order {{{ORDER}}}</p>');
    expect(await page.getByLabel('Variable 1: key').inputValue()).toBe('ORDER');
    expect(await page.getByLabel('Variable 1: fallback').inputValue()).toBe('n/a');
    expect(await page.locator('.page-header').getByText('Unpublished changes').count()).toBe(1);
    // The preview renders the fallback.
    await page.frameLocator('iframe[title="Email preview"]').getByText('Your order n/a').waitFor();
    await page.getByText('Order n/a').waitFor();
  }, 90_000);

  test('a template created from the dashboard is a draft the SDK sees', async () => {
    await page.goto(`${base}/dashboard/templates`);
    await page.getByRole('button', { name: 'New template' }).click();
    const dialog = page.getByRole('dialog', { name: 'New template' });
    await dialog.getByLabel('Name', { exact: true }).fill('Receipt');
    await dialog.getByLabel('Alias (optional)').fill('receipt');
    await dialog.getByLabel('From (optional)').fill('Acme <billing@example.test>');
    await screenshot(page, 'template-new');
    expect(await axeViolations(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Create template' }).click();
    await page.getByRole('heading', { name: 'Receipt' }).waitFor();
    receiptId = page.url().split('/').pop()!;
    const t = (await world.p.resend.templates.get('receipt')).data!;
    expect(t).toMatchObject({ id: receiptId, name: 'Receipt', alias: 'receipt', from: 'Acme <billing@example.test>', status: 'draft', subject: null });
    expect(t.html).toContain('<p>Hello,</p>');
  }, 20_000);

  test('edit and save: the SDK sees the draft change; Ctrl+S saves too', async () => {
    await page.getByLabel('Subject').fill('Your receipt {{{ORDER}}}');
    await page.getByLabel('Reply-to').fill('help@example.test, billing@example.test');
    await page.getByRole('button', { name: 'Add variable' }).click();
    // The new row's key has the focus (moved there once the row has rendered: waited for, since
    // keys typed before it would go nowhere).
    const key1 = await page.getByLabel('Variable 1: key').elementHandle();
    await page.waitForFunction((el) => el === document.activeElement, key1);
    await page.keyboard.type('ORDER');
    await page.getByLabel('Variable 1: type').selectOption('number');
    await page.getByLabel('Variable 1: fallback').fill('42');
    await page.getByRole('button', { name: 'Add variable' }).click();
    await page.getByLabel('Variable 2: key').fill('NAME');
    await page.getByLabel('Variable 2: fallback').fill('there');
    await page.getByRole('textbox', { name: 'HTML' }).fill('<h1>Receipt {{{ORDER}}}</h1>\n<p>Thanks, {{{NAME}}}. Total: {{{TOTAL}}}</p>');
    await page.getByLabel('Plain text').fill('Receipt {{{ORDER}}} for {{{NAME}}}');
    // The live preview: fallbacks filled in, a variable without one shown as its placeholder.
    const preview = page.frameLocator('iframe[title="Email preview"]');
    await preview.getByText('Receipt 42').waitFor();
    await preview.getByText('Thanks, there. Total: {{{TOTAL}}}').waitFor();
    await page.getByText('Your receipt 42').waitFor();
    await page.getByRole('tab', { name: 'Plain text' }).click();
    await page.getByText('Receipt 42 for there').waitFor();
    await page.getByRole('tab', { name: 'HTML' }).click();
    await page.evaluate(() => window.scrollTo(0, 0));
    await preview.getByText('Receipt 42').waitFor();
    await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
    await screenshot(page, 'template-editor');
    expect(await axeViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('button', { name: 'Saved', exact: true }).waitFor();
    let t = (await world.p.resend.templates.get(receiptId)).data!;
    expect(t).toMatchObject({
      status: 'draft',
      subject: 'Your receipt {{{ORDER}}}',
      reply_to: ['help@example.test', 'billing@example.test'],
      html: '<h1>Receipt {{{ORDER}}}</h1>\n<p>Thanks, {{{NAME}}}. Total: {{{TOTAL}}}</p>',
      text: 'Receipt {{{ORDER}}} for {{{NAME}}}',
      has_unpublished_versions: false,
    });
    expect(t.variables!.map(({ key, type, fallback_value }) => ({ key, type, fallback_value }))).toEqual([
      { key: 'ORDER', type: 'number', fallback_value: 42 },
      { key: 'NAME', type: 'string', fallback_value: 'there' },
    ]);
    // Ctrl+S: a rename, saved from the keyboard; removing a variable.
    await page.getByLabel('Name', { exact: true }).fill('Receipt email');
    await page.getByRole('button', { name: 'Remove variable 2 (NAME)' }).click();
    await page.keyboard.press('Control+s');
    await page.getByRole('button', { name: 'Saved', exact: true }).waitFor();
    await page.getByRole('heading', { name: 'Receipt email' }).waitFor();
    t = (await world.p.resend.templates.get(receiptId)).data!;
    expect(t.name).toBe('Receipt email');
    expect(t.variables!.map((v) => v.key)).toEqual(['ORDER']);
    expect(t.text).toBe('Receipt {{{ORDER}}} for {{{NAME}}}');
  }, 90_000);

  test('publish: the SDK sees it published and sends use it; a later save is an unpublished change', async () => {
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.getByRole('button', { name: 'Published' }).waitFor();
    let t = (await world.p.resend.templates.get(receiptId)).data!;
    expect(t).toMatchObject({ status: 'published', has_unpublished_versions: false, published_at: expect.any(String) });
    const sent = await world.p.resend.emails.send({
      to: 'ann@dest.test',
      template: { id: 'receipt', variables: { ORDER: 7, NAME: 'Ann', TOTAL: '€9' } },
    } as never);
    expect(sent.error).toBeNull();
    const email = (await world.p.resend.emails.get(sent.data!.id)).data!;
    expect(email).toMatchObject({ subject: 'Your receipt 7', from: 'Acme <billing@example.test>', html: '<h1>Receipt 7</h1>\n<p>Thanks, Ann. Total: €9</p>' });

    await page.getByRole('textbox', { name: 'HTML' }).fill('<h1>Receipt {{{ORDER}}}, version 2</h1>');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.locator('.page-header').getByText('Unpublished changes').waitFor();
    t = (await world.p.resend.templates.get(receiptId)).data!;
    expect(t).toMatchObject({ status: 'published', has_unpublished_versions: true, html: '<h1>Receipt {{{ORDER}}}, version 2</h1>' });
    await screenshot(page, 'template-unpublished');
    // Publish again: the header says so, and the SDK agrees.
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.getByRole('button', { name: 'Published' }).waitFor();
    expect(await page.locator('.page-header').getByText('Unpublished changes').count()).toBe(0);
    expect((await world.p.resend.templates.get(receiptId)).data!.has_unpublished_versions).toBe(false);
  }, 90_000);

  test('an edit the API refuses shows its message and changes nothing', async () => {
    const before = (await world.p.resend.templates.get(receiptId)).data!;
    await page.getByLabel('Variable 1: key').fill('FIRST_NAME');
    await page.getByLabel('Subject').fill('Changed subject');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('Invalid `variables[0].key` field');
    expect(await alert.textContent()).toContain('reserved name');
    // Still unsaved, and nothing changed on the server.
    expect(await page.getByRole('button', { name: 'Save', exact: true }).isEnabled()).toBe(true);
    const after = (await world.p.resend.templates.get(receiptId)).data!;
    expect(after).toEqual(before);
    await screenshot(page, 'template-error');
    expect(await axeViolations(page)).toEqual([]);
    // Text that is no template: the preview says so before the API does.
    await page.getByLabel('Variable 1: key').fill('ORDER');
    await page.getByRole('textbox', { name: 'HTML' }).fill('<p>{{#ORDER}}unclosed</p>');
    await page.getByText('Not a valid template yet', { exact: false }).waitFor();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('alert').filter({ hasText: 'Invalid `html` field' }).waitFor();
    expect((await world.p.resend.templates.get(receiptId)).data).toEqual(before);
    // Put right, the edit saves and the error goes.
    await page.getByRole('textbox', { name: 'HTML' }).fill(before.html);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('button', { name: 'Saved', exact: true }).waitFor();
    expect(await page.getByRole('alert').count()).toBe(0);
    expect((await world.p.resend.templates.get(receiptId)).data).toMatchObject({
      subject: 'Changed subject',
      html: before.html,
      variables: [{ key: 'ORDER' }],
    });
  }, 90_000);

  test('duplicate opens the copy, a draft without alias; delete asks, then removes it', async () => {
    await page.getByRole('button', { name: 'Duplicate' }).click();
    await page.getByRole('heading', { name: 'Receipt email (copy)' }).waitFor();
    const copyId = page.url().split('/').pop()!;
    expect(copyId).not.toBe(receiptId);
    const copy = (await world.p.resend.templates.get(copyId)).data!;
    expect(copy).toMatchObject({ name: 'Receipt email (copy)', alias: null, status: 'draft', html: '<h1>Receipt {{{ORDER}}}, version 2</h1>' });
    expect(await page.getByLabel('Alias').inputValue()).toBe('');

    await page.getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete template' });
    await dialog.getByText('Receipt email (copy)').waitFor();
    await screenshot(page, 'template-delete');
    expect(await axeViolations(page)).toEqual([]);
    // Cancel keeps it.
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect((await world.p.resend.templates.get(copyId)).error).toBeNull();
    await page.getByRole('button', { name: 'Delete' }).click();
    await dialog.getByRole('button', { name: 'Delete template' }).click();
    await page.waitForURL(`${base}/dashboard/templates`);
    await page.getByText('Order confirmation').waitFor();
    expect((await world.p.resend.templates.get(copyId)).error).toMatchObject({ statusCode: 404, name: 'not_found' });
    expect(await page.getByRole('link', { name: 'Receipt email (copy)' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Receipt email', exact: true }).count()).toBe(1);
  }, 90_000);

  test('a long name wraps in the header; phone width stays readable', async () => {
    const long = (await world.p.resend.templates.list()).data!.data.find((t) => t.name === LONG_NAME)!;
    await page.goto(`${base}/dashboard/templates/${long.id}`);
    await page.getByRole('heading', { name: LONG_NAME }).waitFor();
    await page.waitForLoadState('networkidle');
    expect(await fitsWidth(page)).toBe(true);
    await screenshot(page, 'template-long-name');

    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true });
    const p = await signedIn(phone);
    await p.goto(`${base}/dashboard/templates`);
    await p.getByText('Order confirmation').waitFor();
    await p.waitForLoadState('networkidle');
    expect(await fitsWidth(p)).toBe(true);
    await screenshot(p, 'phone-templates');
    expect(await axeViolations(p)).toEqual([]);
    await p.goto(`${base}/dashboard/templates/${receiptId}`);
    await p.getByRole('heading', { name: 'Receipt email' }).waitFor();
    await p.waitForLoadState('networkidle');
    expect(await fitsWidth(p)).toBe(true);
    // Below the fields at this width, the preview still renders.
    await p.locator('iframe[title="Email preview"]').scrollIntoViewIfNeeded();
    await p.frameLocator('iframe[title="Email preview"]').getByText('Receipt 42, version 2').waitFor();
    await screenshot(p, 'phone-template');
    // A full-page capture leaves the sandboxed frame blank below the first screen: the preview as seen.
    await p.screenshot({ path: join(SCREENSHOTS, 'phone-template-preview.png') });
    expect(await axeViolations(p)).toEqual([]);
    await phone.close();
  }, 90_000);

  test('version history: the versions published, one beside the latest (subject, HTML lines, previews), restore publishes it again', async () => {
    // Published twice (version 1, then version 2), and a saved change not yet published (the subject).
    const wide = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const w = await signedIn(wide);
    await w.goto(`${base}/dashboard/templates/${receiptId}`);
    await w.getByRole('heading', { name: 'Receipt email' }).waitFor();
    await w.getByRole('link', { name: 'History' }).click();
    await w.getByRole('heading', { name: 'Version history' }).waitFor();
    const list = w.getByRole('navigation', { name: 'Published versions' });
    await list.getByText('Version 2').waitFor();
    expect(await list.getByRole('link').allTextContents()).toEqual([
      expect.stringMatching(/^Version 2Sends use itPublished .*Your receipt \{\{\{ORDER\}\}\}$/),
      expect.stringMatching(/^Version 1Published .*Your receipt \{\{\{ORDER\}\}\}$/),
    ]);
    // Shown first: version 2, the one sends use, beside the latest (its unpublished subject).
    await w.getByRole('heading', { name: 'Version 2 beside the latest version' }).waitFor();
    const subject = w.getByRole('row', { name: /Subject/ });
    expect(await subject.locator('td.del').textContent()).toBe('Your receipt {{{ORDER}}}');
    expect(await subject.locator('td.ins').textContent()).toBe('Changed subject');
    // Version 1: its HTML lines beside the latest's, what changed marked on each side.
    await list.getByRole('link', { name: /Version 1/ }).click();
    await w.getByRole('heading', { name: 'Version 1 beside the latest version' }).waitFor();
    expect(await list.getByRole('link', { name: /Version 1/ }).getAttribute('aria-current')).toBe('true');
    const diff = w.getByRole('region', { name: 'HTML: Version 1 beside Latest (unpublished)' });
    expect(await diff.locator('td.line.del').allTextContents()).toEqual([
      'removed: <h1>Receipt {{{ORDER}}}</h1>',
      'removed: <p>Thanks, {{{NAME}}}. Total: {{{TOTAL}}}</p>',
    ]);
    expect(await diff.locator('td.line.ins').allTextContents()).toEqual(['added: <h1>Receipt {{{ORDER}}}, version 2</h1>']);
    await w.getByText('HTML: 1 place differs.').waitFor();
    await w.waitForLoadState('networkidle');
    await screenshot(w, 'template-versions');
    expect(await axeViolations(w)).toEqual([]);
    // Both previews, rendered with each version's fallbacks.
    await w.getByRole('tab', { name: 'Preview' }).click();
    await w.frameLocator('iframe[title="Email preview: Version 1"]').getByText('Thanks, {{{NAME}}}. Total: {{{TOTAL}}}').waitFor();
    await w.frameLocator('iframe[title="Email preview: Latest (unpublished)"]').getByText('Receipt 42, version 2').waitFor();
    await screenshot(w, 'template-versions-preview');
    expect(await axeViolations(w)).toEqual([]);

    // Restore version 1: asked first, then published at once as version 3; sends use it.
    await w.getByRole('button', { name: 'Restore version 1' }).click();
    const dialog = w.getByRole('dialog', { name: 'Restore version 1' });
    await dialog.getByText('The unpublished changes are replaced.', { exact: false }).waitFor();
    await screenshot(w, 'template-versions-restore');
    expect(await axeViolations(w)).toEqual([]);
    await dialog.getByRole('button', { name: 'Restore and publish' }).click();
    await w.getByText('Version 1 restored as version 3: sends use it now.').waitFor();
    await list.getByText('Version 3').waitFor();
    expect(await list.getByRole('link', { name: /Version 3/ }).textContent()).toContain('restored from version 1');
    expect(await list.getByRole('link', { name: /Version 3/ }).textContent()).toContain('Sends use it');
    const t = (await world.p.resend.templates.get(receiptId)).data!;
    expect(t).toMatchObject({ html: '<h1>Receipt {{{ORDER}}}</h1>\n<p>Thanks, {{{NAME}}}. Total: {{{TOTAL}}}</p>', has_unpublished_versions: false });
    expect(t.subject).toBe('Your receipt {{{ORDER}}}');
    expect((await world.p.api('GET', `/templates/${receiptId}/versions/3`)).body).toMatchObject({ reverted_from: 1, current: true });
    const sent = await world.p.resend.emails.send({
      to: 'ann@dest.test',
      template: { id: 'receipt', variables: { ORDER: 8, NAME: 'Ann', TOTAL: '€1' } },
    } as never);
    expect((await world.p.resend.emails.get(sent.data!.id)).data!.html).toBe('<h1>Receipt 8</h1>\n<p>Thanks, Ann. Total: €1</p>');
    await wide.close();

    // Phone width: one column, nothing scrolls sideways.
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true });
    const p = await signedIn(phone);
    await p.goto(`${base}/dashboard/templates/${receiptId}/versions?version=2`);
    await p.getByRole('heading', { name: 'Version 2 beside the latest version' }).waitFor();
    await p.getByRole('region', { name: 'HTML: Version 2 beside Latest' }).waitFor();
    await p.waitForLoadState('networkidle');
    expect(await fitsWidth(p)).toBe(true);
    await screenshot(p, 'phone-template-versions');
    expect(await axeViolations(p)).toEqual([]);
    await phone.close();
  }, 120_000);
});
