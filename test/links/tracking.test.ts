// Tracking links and the html rewriter (docs/mail.md §6): which hrefs are tracked, what stays byte
// for byte, where the pixel goes, how tokens verify, and which hits count as automated.
import { describe, test, expect } from 'bun:test';
import { randomBytes } from 'node:crypto';
import { trackHtml, trackableUrl } from '../../src/links/track-html';
import { TrackingLinks, trackingBase } from '../../src/links/tracking';
import { Signer } from '../../src/links/signer';
import { automatedReason } from '../../src/tracking/automated';

const opts = {
  pixelUrl: 'https://p.test/t/o/PIX',
  clickUrl: (u: string) => `https://p.test/t/c/${Buffer.from(u).toString('base64url')}`,
  isUnsubscribe: (u: string) => u.startsWith('https://p.test/u/'),
};
const decode = (href: string) => Buffer.from(href.slice('https://p.test/t/c/'.length), 'base64url').toString();

describe('trackHtml', () => {
  test('only what is rewritten changes: the rest of the markup stays byte for byte', () => {
    const html = `<html><head><style>a[href="https://x.test"]{color:red}</style></head><body class=x>\n<p   data-x='1'>Hi &nbsp;<A HREF='https://x.test/a?b=1&amp;c=2' target=_blank>go</A></p>\n</body></html>`;
    const out = trackHtml(html, { ...opts, pixelUrl: null });
    const href = /HREF="([^"]+)"/.exec(out)![1];
    expect(decode(href)).toBe('https://x.test/a?b=1&c=2');
    expect(out.replace(/HREF="[^"]+"/, "HREF='https://x.test/a?b=1&amp;c=2'")).toBe(html);
  });

  test('area links, whitespace around the URL, upper-case schemes are tracked; other schemes, anchors, unsubscribe links are not', () => {
    const html =
      '<a href="  HTTPS://x.test/p \n">1</a><area href="http://x.test/m"><a href="javascript:alert(1)">j</a><a href="ftp://x.test">f</a><a href="/relative">r</a><a href="#s">s</a><a href="https://p.test/u/tok">u</a><a>none</a>';
    const out = trackHtml(html, { ...opts, pixelUrl: null });
    const hrefs = [...out.matchAll(/href="([^"]*)"/g)].map((m) => m[1]);
    expect(decode(hrefs[0])).toBe('HTTPS://x.test/p');
    expect(decode(hrefs[1])).toBe('http://x.test/m');
    expect(hrefs.slice(2)).toEqual(['javascript:alert(1)', 'ftp://x.test', '/relative', '#s', 'https://p.test/u/tok']);
  });

  test('the pixel goes before </body>, or at the end without one; once', () => {
    expect(trackHtml('<body><p>x</p></body>', { ...opts, clickUrl: null })).toMatch(/^<body><p>x<\/p><img src="https:\/\/p\.test\/t\/o\/PIX"[^>]*\/><\/body>$/);
    expect(trackHtml('<p>fragment</p>', { ...opts, clickUrl: null })).toMatch(/^<p>fragment<\/p><img src="https:\/\/p\.test\/t\/o\/PIX"/);
    expect(trackHtml('<body>a</body><body>b</body>', { ...opts, clickUrl: null }).match(/<img/g)!.length).toBe(1);
  });

  test('nothing to track: the html comes back unchanged', () => {
    const html = '<p><a href="mailto:a@x.test">m</a></p>';
    expect(trackHtml(html, { ...opts, pixelUrl: null })).toBe(html);
  });

  test('trackableUrl decodes attribute entities as a browser does', () => {
    expect(trackableUrl('https://x.test/?a=1&amp;b=&#50;&quot;')).toBe('https://x.test/?a=1&b=2"');
    expect(trackableUrl('https:/missing-slash')).toBeNull();
    expect(trackableUrl('')).toBeNull();
  });
});

describe('tracking tokens', () => {
  const secret = randomBytes(32);
  const links = new TrackingLinks(secret);
  const t = { team: 't1', email: 'e1', recipient: 'a@x.test' };
  const ids = { team: '01a21e30-97bd-7188-ba9e-2f372fc21bf2', email: '01a21e35-2b97-7234-9ff2-16fda4a4a8bf', recipient: 'reader@dest.test' };
  const URL_ = 'https://shop.test/item?id=42&ref=mail';

  // Issue 34, "tracking tokens are readable": they carried base64 JSON naming the team, the email,
  // the recipient and the URL. Resend's links are opaque.
  test('tokens are opaque: nothing of the team, email, recipient or URL can be read from them', () => {
    for (const token of [links.openUrl('https://p.test', ids).split('/t/o/')[1]!, links.clickUrl('https://p.test', { ...ids, url: URL_ }).split('/t/c/')[1]!]) {
      const readable = [token, ...token.split('.')].map((part) => Buffer.from(part, 'base64url').toString('latin1')).join('\n');
      for (const secretWord of ['reader', 'dest.test', 'shop.test', ids.team, ids.email, ids.team.replace(/-/g, ''), '"t"', '"u"'])
        expect([secretWord, readable.includes(secretWord)]).toEqual([secretWord, false]);
      const raw = Buffer.from(token, 'base64url');
      expect(raw.includes(Buffer.from(ids.team.replace(/-/g, ''), 'hex'))).toBe(false);
      expect(raw.includes(Buffer.from(ids.email.replace(/-/g, ''), 'hex'))).toBe(false);
    }
  });

  test('shorter than the signed JSON they replace', () => {
    const legacy = new Signer(secret).seal({ k: 'c', t: ids.team, e: ids.email, r: ids.recipient, u: URL_ });
    const token = links.clickUrl('https://p.test', { ...ids, url: URL_ }).split('/t/c/')[1]!;
    expect(token.length).toBeLessThan(legacy.length * 0.65);
    expect(links.verifyClick(token)).toEqual({ ...ids, url: URL_ });
  });

  test('links of the signed JSON format still work (they sit in mailboxes); forged ones do not', () => {
    const signer = new Signer(secret);
    const click = signer.seal({ k: 'c', t: ids.team, e: ids.email, r: ids.recipient, u: URL_ });
    const open = signer.seal({ k: 'o', t: ids.team, e: ids.email, r: null });
    expect(links.verifyClick(click)).toEqual({ ...ids, url: URL_ });
    expect(links.verifyOpen(open)).toEqual({ ...ids, recipient: null });
    expect(links.verifyOpen(click)).toBeNull();
    expect(links.verifyClick(new Signer(randomBytes(32)).seal({ k: 'c', t: ids.team, e: ids.email, r: null, u: 'https://evil.test/' }))).toBeNull();
  });

  test('open and click tokens round-trip and do not pass for each other', () => {
    const open = links.openUrl('https://p.test', t).split('/t/o/')[1];
    const click = links.clickUrl('https://p.test', { ...t, url: 'https://x.test/é?q=1' }).split('/t/c/')[1];
    expect(links.verifyOpen(open)).toEqual(t);
    expect(links.verifyClick(click)).toEqual({ ...t, url: 'https://x.test/é?q=1' });
    expect(links.verifyClick(open)).toBeNull();
    expect(links.verifyOpen(click)).toBeNull();
  });

  test('another install’s secret, any changed byte, a cut or lengthened token: null', () => {
    const click = links.clickUrl('https://p.test', { ...t, url: 'https://x.test/' }).split('/t/c/')[1]!;
    expect(links.verifyClick(click)).toEqual({ ...t, url: 'https://x.test/' });
    expect(new TrackingLinks(randomBytes(32)).verifyClick(click)).toBeNull();
    const raw = Buffer.from(click, 'base64url');
    for (let i = 0; i < raw.length; i++) {
      const changed = Buffer.from(raw);
      changed[i]! ^= 1;
      expect([i, links.verifyClick(changed.toString('base64url'))]).toEqual([i, null]);
    }
    expect(links.verifyClick(click.slice(0, -1))).toBeNull();
    expect(links.verifyClick(`${click}A`)).toBeNull();
    expect(links.verifyClick('')).toBeNull();
    expect(links.verifyClick(null)).toBeNull();
  });

  test('the tracking subdomain is used only once its CNAME is verified', () => {
    const d = { name: 'x.test', tracking_subdomain: 'links', record_status: {} as Record<string, string> };
    expect(trackingBase('https://mail.example.test', d)).toBe('https://mail.example.test');
    d.record_status.Tracking = 'verified';
    expect(trackingBase('https://mail.example.test', d)).toBe('https://links.x.test');
  });
});

describe('automated hits', () => {
  const person = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko)';
  const hit = (userAgent: string, extra: Partial<Parameters<typeof automatedReason>[0]> = {}) =>
    automatedReason({ method: 'GET', userAgent, deliveredAt: 0, now: 60_000, ...extra }, 5_000);
  test('user agents', () => {
    expect(hit(person)).toBeNull();
    expect(hit('')).toBe('no_user_agent');
    expect(hit('Mozilla/5.0')).toBe('apple_privacy_proxy');
    expect(hit('Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)')).toBe('image_proxy');
    expect(hit('python-requests/2.31')).toBe('scanner');
    expect(hit('Mozilla/5.0 (compatible; Barracuda Sentinel)')).toBe('scanner');
  });
  test('timing and method', () => {
    expect(hit(person, { now: 2_000 })).toBe('prefetch');
    expect(hit(person, { deliveredAt: null, now: 2_000 })).toBeNull();
    expect(hit(person, { method: 'HEAD' })).toBe('head_request');
    expect(automatedReason({ method: 'GET', userAgent: person, deliveredAt: 0, now: 1 }, 0)).toBeNull();
  });
});
