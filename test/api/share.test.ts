// Sharing an email (docs/api.md §7.10): `resend.emails.share` against a running Posthorn, the public
// page its link shows (subject, people, date, the html in a sandboxed frame under a strict
// Content-Security-Policy, the text, attachments that download), in Debian's Chromium too — the
// email's scripts never run and its remote images are never fetched — and every bad input: the
// documented error, nothing changed in the store; a tampered, expired or foreign link → 404.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import type { Browser } from 'playwright-core';
import { startMailWorld, type MailWorld } from '../helpers/world';
import { launchBrowser, axeViolations, screenshot } from '../helpers/browser';
import { SignedLinks } from '../../src/links/signed';
import { newId } from '../../src/ids';
import { freePort, type Running } from '../helpers/posthorn';

let world: MailWorld;
let p: Running;
let base: string;
let browser: Browser | null = null;
/** A server standing for the remote host of an email's images: it counts every request. */
let remote: ReturnType<typeof Bun.serve>;
let remoteHits = 0;

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  world = await startMailWorld({ 'http.port': port, public_url: base });
  p = world.p;
  remote = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: () => {
      remoteHits++;
      return new Response('GIF89a', { headers: { 'content-type': 'image/gif' } });
    },
  });
});
afterAll(async () => {
  await browser?.close();
  remote?.stop(true);
  await world.stop();
});

const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8ffff3f0005fe02fea7d6a4c60000000049454e44ae426082',
  'hex',
);

async function sendOne(extra: Record<string, unknown> = {}) {
  const { data, error } = await p.resend.emails.send({
    from: 'Acme <hello@example.test>',
    to: ['ann@dest.test'],
    cc: 'carl@dest.test',
    subject: 'Your invoice <March>',
    html: '<p>Hello <b>Ann</b> <img alt="logo" src="cid:logo"></p>',
    text: 'Hello Ann, plain & simple',
    attachments: [
      { filename: 'invoice.pdf', content: Buffer.from('%PDF-1.4 invoice').toString('base64') },
      { filename: 'logo.png', content: PNG.toString('base64'), contentId: 'logo' },
    ],
    ...extra,
  } as never);
  expect(error).toBeNull();
  return data!.id;
}

/** The payload of a share URL's token (base64url JSON before the signature). */
const payloadOf = (url: string) => JSON.parse(Buffer.from(url.split('/s/')[1].split('.')[0], 'base64url').toString());

describe('resend.emails.share', () => {
  test('a signed link under public_url, 48 hours by default, or expires_in', async () => {
    const id = await sendOne();
    const before = Date.now();
    const { data, error } = await p.resend.emails.share(id);
    const after = Date.now();
    expect(error).toBeNull();
    expect(data).toEqual({ object: 'email', id, url: expect.stringMatching(new RegExp(`^${base}/s/[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$`)) } as never);
    const x = payloadOf(data!.url).x as number;
    expect(x).toBeGreaterThanOrEqual(before + 48 * 3_600_000);
    expect(x).toBeLessThanOrEqual(after + 48 * 3_600_000);

    for (const [expiresIn, span] of [
      ['2 hours', 2 * 3_600_000],
      ['10m', 600_000],
      ['1 day', 86_400_000],
      ['48h', 48 * 3_600_000],
    ] as const) {
      const t0 = Date.now();
      const r = await p.resend.emails.share(id, { expiresIn });
      expect(r.error).toBeNull();
      const exp = payloadOf(r.data!.url).x as number;
      expect(exp).toBeGreaterThanOrEqual(t0 + span);
      expect(exp).toBeLessThanOrEqual(Date.now() + span);
    }
    // Plain HTTP with no body at all is the default too.
    const plain = await p.api('POST', `/emails/${id}/share`);
    expect(plain.status).toBe(200);
    expect(plain.body).toMatchObject({ object: 'email', id });
  });

  test('bad input: the documented error, nothing changed in the store', async () => {
    // Scheduled a day ahead: delivery leaves the record alone while the test compares it.
    const id = await sendOne({ scheduledAt: 'in 1 day' });
    const before = await p.svc.store.emails.get(p.creds.team_id, id);
    const bad: [unknown, string][] = [
      ['49h', 'at most 48 hours'],
      ['3 days', 'at most 48 hours'],
      ['soon', 'a duration'],
      ['60', 'a duration'], // no unit
      ['0m', 'a duration'],
      ['-1h', 'a duration'],
      [3600, 'a duration'],
      ['x'.repeat(200), 'a duration'],
    ];
    for (const [expiresIn, message] of bad) {
      const r = await p.api('POST', `/emails/${id}/share`, { body: { expires_in: expiresIn } });
      expect([expiresIn, r.status, r.body.name]).toEqual([expiresIn, 422, 'validation_error']);
      expect(r.body.message).toContain('Invalid `expires_in` field');
      expect(r.body.message).toContain(message);
    }
    const sdk = await p.resend.emails.share(id, { expiresIn: '3 days' });
    expect(sdk.error).toMatchObject({ statusCode: 422, name: 'validation_error' });
    expect((await p.resend.emails.share(newId())).error).toMatchObject({ statusCode: 404, name: 'not_found', message: 'Email not found' });
    expect((await p.resend.emails.share('not-an-id')).error).toMatchObject({ statusCode: 422, name: 'invalid_parameter' });
    expect((await p.api('POST', `/emails/${id}/share`, { raw: '[1]' })).body).toMatchObject({ statusCode: 400, name: 'validation_error' });
    // Another team's email is not there for this key.
    const other = p.client((await p.newTeam()).api_key);
    expect((await other.emails.share(id)).error).toMatchObject({ statusCode: 404, name: 'not_found' });
    // A sending-only key may not share.
    const sending = await p.resend.apiKeys.create({ name: 'sender', permission: 'sending_access' });
    expect((await p.client(sending.data!.token).emails.share(id)).error).toMatchObject({ statusCode: 401, name: 'restricted_api_key' });
    expect(await p.svc.store.emails.get(p.creds.team_id, id)).toEqual(before);
  });
});

describe('the shared page', () => {
  test('subject, people, date, the html sandboxed, the text, attachments that download; strict headers', async () => {
    const id = await sendOne();
    const { data } = await p.resend.emails.share(id, { expiresIn: '1 hour' });
    const res = await fetch(data!.url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain('img-src data:');
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/script-src/);
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const page = await res.text();
    expect(page).not.toMatch(/<script/i);
    expect(page).toContain('<title>Your invoice &lt;March&gt;</title>');
    expect(page).toContain('Acme &lt;hello@example.test&gt;');
    expect(page).toContain('ann@dest.test');
    expect(page).toContain('carl@dest.test');
    expect(page).toMatch(/<iframe title="Email content" sandbox="" [^>]*srcdoc="[^"]*Hello &lt;b&gt;Ann&lt;\/b&gt;/);
    // The inline image is part of the frame's document, as a data: URI.
    expect(page).toContain(`data:image/png;base64,${PNG.toString('base64')}`);
    expect(page).toContain('Hello Ann, plain &amp; simple');
    const link = /<a href="([^"]+)" download>invoice\.pdf<\/a>/.exec(page)![1];
    const dl = await fetch(link.replace(/&amp;/g, '&'));
    expect(dl.status).toBe(200);
    expect(Buffer.from(await dl.arrayBuffer()).toString()).toBe('%PDF-1.4 invoice');
  });

  test('a text-only email shows its text', async () => {
    const { data: sent } = await p.resend.emails.send({ from: 'hello@example.test', to: 'ann@dest.test', subject: 'Plain', text: 'Only <text> here' });
    const { data } = await p.resend.emails.share(sent!.id);
    const page = await (await fetch(data!.url)).text();
    expect(page).toContain('<pre>Only &lt;text&gt; here</pre>');
    expect(page).not.toContain('<iframe');
  });

  test('a received email can be shared too', async () => {
    const team = p.creds.team_id;
    const id = newId();
    const at = new Date().toISOString();
    await p.svc.store.write(async (tx) => {
      tx.receivedEmails.put({
        id,
        team_id: team,
        created_at: at,
        from: 'bob@sender.test',
        to: ['support@example.test'],
        cc: [],
        bcc: [],
        reply_to: [],
        subject: 'A question',
        message_id: '<q@sender.test>',
        received_for: ['support@example.test'],
        attachments: [],
        authentication: null,
        envelope: { mail_from: 'bob@sender.test', remote_address: '127.0.0.1', helo: 'sender.test', tls: false },
        size: 10,
      });
      tx.receivedContent.put(team, id, {
        raw: new Uint8Array([1]),
        html: '<p>Can you help?</p>',
        text: 'Can you help?',
        headers: { from: 'Bob <bob@sender.test>' },
        files: {},
      });
    });
    const { data, error } = await p.resend.emails.share(id, { expiresIn: '5 minutes' });
    expect(error).toBeNull();
    const page = await (await fetch(data!.url)).text();
    expect(page).toContain('A question');
    expect(page).toContain('Bob &lt;bob@sender.test&gt;');
    expect(page).toContain('Can you help?');
  });

  test('tampered, expired, of another kind, or whose email is gone → 404', async () => {
    const id = await sendOne();
    const { data } = await p.resend.emails.share(id);
    const url = data!.url;
    const tampered = url.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
    const links = new SignedLinks(p.svc.store.secret('links'), base);
    const expired = links.shareUrl({ team: p.creds.team_id, email: id, received: false, expires: Date.now() - 1 });
    const download = (await links.download({ kind: 'sent-attachment', team: p.creds.team_id, email: id, attachment: newId() })).download_url.replace(
      '/d/',
      '/s/',
    );
    const forged = new SignedLinks(Buffer.alloc(32, 7), base).shareUrl({ team: p.creds.team_id, email: id, received: false, expires: Date.now() + 60_000 });
    for (const u of [tampered, expired, download, forged, `${base}/s/nonsense`, `${base}/s/%ZZ`]) {
      const r = await fetch(u);
      expect([u, r.status]).toEqual([u, 404]);
      expect(await r.text()).toContain('Link not valid');
    }
    // The email leaves the store (retention): its link shows nothing any more.
    await p.svc.store.write(async (tx) => tx.emails.remove(p.creds.team_id, id));
    expect((await fetch(url)).status).toBe(404);
  });

  test('in Chromium: the email is shown, its scripts never run, its remote images are never fetched', async () => {
    browser = await launchBrowser();
    const pixel = `http://127.0.0.1:${remote.port}/pixel.gif`;
    const id = await sendOne({
      html: `<p id="greeting">Hello from the frame</p><img src="${pixel}" alt="remote"><div style="background:url(${pixel}?css)">x</div><script>document.body.setAttribute('data-ran','yes');parent.document.title='pwned'</script>`,
    });
    const { data } = await p.resend.emails.share(id);
    const page = await browser.newPage();
    const blocked: string[] = [];
    page.on('console', (m) => blocked.push(m.text()));
    await page.goto(data!.url);
    await page.getByRole('heading', { name: 'Your invoice <March>' }).waitFor();
    const frame = page.frameLocator('iframe[title="Email content"]');
    await frame.locator('#greeting').waitFor();
    expect(await frame.locator('#greeting').textContent()).toBe('Hello from the frame');
    expect(await frame.locator('body').getAttribute('data-ran')).toBeNull();
    expect(await page.title()).toBe('Your invoice <March>');
    await page.waitForLoadState('networkidle');
    expect(remoteHits).toBe(0);
    await screenshot(page, 'shared-email');
    expect(await axeViolations(page)).toEqual([]);
    await page.close();
  }, 30_000);
});
