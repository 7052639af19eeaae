// Posthorn's webhook extensions (docs/api.md §14.1, §14.3): `include_content` — `email.received`
// with the message (text, html and headers within their bounds, what was cut said in `truncated`,
// attachments and the raw message as signed links) — and `domain_ids` — a webhook that takes only
// the events of some domains. Real inbound mail over SMTP, loopback receivers.
import { describe, test, expect, beforeAll, afterAll, afterEach } from 'bun:test';
import { startMailWorld, type MailWorld } from '../helpers/world';
import { startReceiver, type Hook, type Receiver } from '../helpers/receiver';
import { inboundProcessed, mta } from '../helpers/smtp';
import { verifiedDomain } from '../helpers/emails';
import { payloadErrors } from '../helpers/payloads';
import { until } from '../helpers/wait';
import type { Running } from '../helpers/posthorn';
import { CONTENT_LIMITS, cutUtf8, linkLifetime } from '../../src/inbound/received-payload';

let world: MailWorld;
let p: Running;
let port: number;
let inbound: string;
const receivers: Receiver[] = [];
const registered: string[] = [];

beforeAll(async () => {
  world = await startMailWorld({ 'webhooks.retry_schedule': ['200ms'], 'security.allow_private_networks': true }, { smtp: true });
  p = world.p;
  port = world.smtp!.starttls;
  const d = await p.api('POST', '/domains', { body: { name: 'inbox.test', capabilities: { receiving: 'enabled' } } });
  expect(d.status).toBe(201);
  inbound = d.body.id;
});
afterAll(async () => {
  await world.stop();
  for (const r of receivers) await r.close();
});
afterEach(async () => {
  for (const id of registered.splice(0)) await p.resend.webhooks.remove(id);
});

async function webhook(events: string[], extra: Record<string, unknown> = {}): Promise<{ r: Receiver; id: string }> {
  const r = await startReceiver();
  receivers.push(r);
  const res = await p.api('POST', '/webhooks', { body: { endpoint: r.url, events, ...extra } });
  expect(res.status).toBe(201);
  registered.push(res.body.id);
  return { r, id: res.body.id };
}

/** Deliver as the internet's MTAs do (no AUTH) and wait until Posthorn has processed it. */
async function deliverInbound(message: Record<string, unknown>, to = ['support@inbox.test']): Promise<void> {
  const t = mta(port);
  try {
    const info = await t.sendMail({ envelope: { from: 'bob@sender.test', to }, from: 'Bob <bob@sender.test>', to: to.join(', '), ...message } as never);
    expect(info.response).toBe('250 2.0.0 OK');
  } finally {
    t.close();
  }
  await inboundProcessed(p);
}

/** Nothing is left to send to this webhook (checks that nothing arrived go after this). */
async function drained(id: string): Promise<void> {
  await until(async () => (await p.svc.store.webhookEvents.findAll('outstanding', id, p.creds.team_id)).length === 0, `webhook ${id} drained`);
  await p.svc.backOffice.idle('webhooks');
}

const bySubject = (r: Receiver, subject: string) => r.delivered().find((h) => h.payload.data.subject === subject);
const local = (url: string) => url.replace('http://localhost:3000', p.url);
let seq = 0;
const unique = (prefix: string) => `${prefix}-${Date.now()}-${++seq}`;

describe('include_content', () => {
  test('email.received carries text, html, headers and signed links to the attachments and the raw message; without it, Resend’s payload', async () => {
    const withContent = await webhook(['email.received'], { include_content: true });
    const plain = await webhook(['email.received']);
    expect((await p.api('GET', `/webhooks/${withContent.id}`)).body).toMatchObject({ include_content: true, domain_ids: [] });
    expect((await p.api('GET', `/webhooks/${plain.id}`)).body).toMatchObject({ include_content: false, domain_ids: [] });

    const pdf = Buffer.from('%PDF-1.4 a reply with an invoice');
    await deliverInbound({
      subject: 'Re: order 1234',
      text: 'Yes, thank you — ✓',
      html: '<p>Yes, thank you — ✓</p>',
      messageId: '<reply-1@sender.test>',
      headers: [{ key: 'In-Reply-To', value: '<order-1234@example.test>' }],
      attachments: [{ filename: 'invoice.pdf', content: pdf }],
    });
    const h = await until(() => bySubject(withContent.r, 'Re: order 1234'), 'the payload with content');
    expect(payloadErrors('email.received+content', h.payload)).toEqual([]);
    const data = h.payload.data as Record<string, unknown>;
    const stored = (await p.api('GET', `/emails/receiving/${data.email_id}`)).body;
    expect(data).toMatchObject({ text: stored.text, html: stored.html, headers: stored.headers, truncated: [] });
    expect(data.text).toBe('Yes, thank you — ✓');
    expect((data.headers as Record<string, string>)['in-reply-to']).toBe('<order-1234@example.test>');
    // The attachment: Resend's fields, its size and a link that needs no key.
    const [att] = data.attachments as Record<string, string>[];
    expect(att).toMatchObject({ filename: 'invoice.pdf', content_type: 'application/pdf', size: pdf.length });
    const dl = await fetch(local(att!.download_url!));
    expect(dl.status).toBe(200);
    expect(Buffer.from(await dl.arrayBuffer())).toEqual(pdf);
    const raw = await fetch(local((data.raw as { download_url: string }).download_url));
    expect((await raw.text()).includes('Subject: Re: order 1234')).toBe(true);
    // Valid an hour past the event's last scheduled attempt: every retry carries working links.
    const lifetime = linkLifetime(p.svc.config.webhooks.retry_schedule);
    for (const expires of [att!.expires_at!, (data.raw as { expires_at: string }).expires_at])
      expect(Math.abs(Date.parse(expires) - Date.parse(h.payload.created_at) - lifetime)).toBeLessThan(60_000);

    // The webhook without it gets Resend's payload: metadata only.
    const bare = await until(() => bySubject(plain.r, 'Re: order 1234'), 'the plain payload');
    expect(payloadErrors('email.received', bare.payload)).toEqual([]);
    expect(bare.payload.data.email_id).toBe(data.email_id);
    // The event log keeps Resend's payload too: the message is sent, not logged twice.
    const [logged] = await p.svc.events.log(p.svc.store, p.creds.team_id, data.email_id as string);
    expect(logged!.data).toEqual(bare.payload.data);
  });

  test('parts beyond their bound are cut — on a character boundary, whole header fields — and named in `truncated`', async () => {
    const withContent = await webhook(['email.received'], { include_content: true });
    // 300 KiB of html in 3-byte characters, 70 header fields of 1 KiB: over the bounds of 256 KiB and 64 KiB.
    const html = `<p>${'€'.repeat(100 * 1024)}</p>`;
    const headers = Array.from({ length: 70 }, (_, i) => ({ key: `X-Filler-${i}`, value: 'f'.repeat(1000) }));
    await deliverInbound({ subject: 'Huge', text: 'short', html, headers });
    const h = await until(() => bySubject(withContent.r, 'Huge'), 'the payload');
    expect(payloadErrors('email.received+content', h.payload)).toEqual([]);
    const data = h.payload.data as { html: string; text: string; headers: Record<string, string>; truncated: string[]; email_id: string };
    expect(data.truncated).toEqual(['html', 'headers']);
    expect(data.text).toBe('short');
    const stored = (await p.api('GET', `/emails/receiving/${data.email_id}`)).body;
    expect(Buffer.byteLength(data.html)).toBeLessThanOrEqual(CONTENT_LIMITS.html);
    expect(Buffer.byteLength(data.html)).toBeGreaterThan(CONTENT_LIMITS.html - 3);
    expect(stored.html.startsWith(data.html)).toBe(true);
    expect(data.html.includes('\uFFFD')).toBe(false);
    // Headers: the first fields in order, whole, while they fit.
    const kept = Object.entries(data.headers);
    const all = Object.entries(stored.headers as Record<string, string>);
    expect(kept).toEqual(all.slice(0, kept.length));
    expect(kept.length).toBeLessThan(all.length);
    const size = kept.reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v) + 4, 0);
    expect(size).toBeLessThanOrEqual(CONTENT_LIMITS.headers);
  });

  test('cutUtf8: within the bound unchanged; beyond it, the longest prefix of whole characters that fits', () => {
    expect(cutUtf8('abc', 3)).toEqual({ text: 'abc', cut: false });
    expect(cutUtf8('abcd', 3)).toEqual({ text: 'abc', cut: true });
    expect(cutUtf8('a€b', 2)).toEqual({ text: 'a', cut: true });
    expect(cutUtf8('a€b', 4)).toEqual({ text: 'a€', cut: true });
    expect(cutUtf8('😀😀', 5)).toEqual({ text: '😀', cut: true });
    expect(cutUtf8('😀', 3)).toEqual({ text: '', cut: true });
  });
});

describe('domain_ids', () => {
  test('a webhook limited to one domain takes its email and domain events, and the events of no domain; not the other domain’s', async () => {
    const a = await verifiedDomain(p, 'alpha.test');
    const b = await verifiedDomain(p, 'beta.test');
    const kinds = ['email.sent', 'email.received', 'domain.updated', 'contact.created'];
    const limited = await webhook(kinds, { domain_ids: [a.id.toUpperCase(), a.id, inbound] });
    const everything = await webhook(kinds);
    expect((await p.api('GET', `/webhooks/${limited.id}`)).body.domain_ids).toEqual([a.id, inbound]);

    await p.resend.emails.send({ from: 'hi@alpha.test', to: ['ann@dest.test'], subject: 'From alpha', text: 'x' });
    await p.resend.emails.send({ from: 'hi@beta.test', to: ['ann@dest.test'], subject: 'From beta', text: 'x' });
    await p.api('PATCH', `/domains/${a.id}`, { body: { click_tracking: true } });
    await p.api('PATCH', `/domains/${b.id}`, { body: { click_tracking: true } });
    await p.api('POST', '/contacts', { body: { email: `c-${Date.now()}@people.test` } });
    await deliverInbound({ subject: 'To the inbox', text: 'x' });

    const seen = (r: Receiver) =>
      r
        .delivered()
        .map((h: Hook) => `${h.payload.type} ${h.payload.data.subject ?? h.payload.data.name ?? ''}`.trim())
        .sort();
    await until(
      () => seen(everything.r).length === 6,
      () => `six events for the unlimited webhook, got ${seen(everything.r)}`,
    );
    expect(seen(everything.r)).toEqual([
      'contact.created',
      'domain.updated alpha.test',
      'domain.updated beta.test',
      'email.received To the inbox',
      'email.sent From alpha',
      'email.sent From beta',
    ]);
    await drained(limited.id);
    expect(seen(limited.r)).toEqual(['contact.created', 'domain.updated alpha.test', 'email.received To the inbox', 'email.sent From alpha']);

    // PATCH: null (or []) takes every domain again.
    expect((await p.api('PATCH', `/webhooks/${limited.id}`, { body: { domain_ids: null } })).status).toBe(200);
    expect((await p.api('GET', `/webhooks/${limited.id}`)).body.domain_ids).toEqual([]);
    await p.resend.emails.send({ from: 'hi@beta.test', to: ['ann@dest.test'], subject: 'From beta again', text: 'x' });
    await limited.r.waitFor(() => seen(limited.r).includes('email.sent From beta again'), 'beta’s email once unlimited');
  });

  test('bad values → 422 naming the field, nothing changed; list items keep Resend’s fields', async () => {
    const other = await p.newTeam();
    const theirs = (await p.api('POST', '/domains', { body: { name: 'theirs.test' }, key: other.api_key })).body.id;
    const post = (extra: Record<string, unknown>) =>
      p.api('POST', '/webhooks', { body: { endpoint: 'http://127.0.0.1:9/x', events: ['email.sent'], ...extra } });
    const before = (await p.api('GET', '/webhooks?limit=100')).body.data.length;
    for (const [extra, words] of [
      [{ domain_ids: [theirs] }, `\`${theirs}\` is not a domain of this team`],
      [{ domain_ids: ['0195608a-51e4-70ed-a079-d3bde8e25d94'] }, 'is not a domain of this team'],
      [{ domain_ids: ['alpha.test'] }, '`alpha.test` is not a domain of this team'],
      [{ domain_ids: 'alpha.test' }, 'The `domain_ids` field must be an array of domain ids.'],
      [{ domain_ids: [7] }, 'The `domain_ids` field must be an array of domain ids.'],
      [{ include_content: 'yes' }, 'The `include_content` field must be a boolean.'],
    ] as const) {
      const r = await post(extra);
      expect({ extra, status: r.status, name: r.body.name }).toEqual({ extra, status: 422, name: 'validation_error' });
      expect(r.body.message).toContain(words);
    }
    expect((await p.api('GET', '/webhooks?limit=100')).body.data.length).toBe(before);

    const { id } = await webhook(['email.sent'], { include_content: true });
    const patched = await p.api('PATCH', `/webhooks/${id}`, { body: { domain_ids: [theirs], events: ['email.delivered'] } });
    expect(patched.body).toMatchObject({ statusCode: 422, name: 'validation_error' });
    expect((await p.api('GET', `/webhooks/${id}`)).body).toMatchObject({ events: ['email.sent'], domain_ids: [], include_content: true });
    expect((await p.api('PATCH', `/webhooks/${id}`, { body: { include_content: false } })).status).toBe(200);
    expect((await p.api('GET', `/webhooks/${id}`)).body.include_content).toBe(false);
    const item = (await p.api('GET', '/webhooks')).body.data.find((w: { id: string }) => w.id === id);
    expect(Object.keys(item).sort()).toEqual(['created_at', 'endpoint', 'events', 'id', 'status']);
  });
});

// Posthorn never disables an endpoint by itself (docs/api.md §14.4), so there is no warning event or
// grace period to give: an endpoint that fails every attempt of every event stays enabled, and the
// next event is tried in full as the first was.
describe('a failing endpoint', () => {
  test('is never disabled automatically: after every event failed it is still enabled and still tried', async () => {
    const { r, id } = await webhook(['contact.created']);
    r.answer(() => ({ status: 500, body: 'down' }));
    const attempts = 1 + p.svc.config.webhooks.retry_schedule.length;
    const newContact = () => p.api('POST', '/contacts', { body: { email: `${unique('fail')}@people.test` } });
    for (let i = 0; i < 5; i++) expect((await newContact()).status).toBe(201);
    await r.waitFor((reqs) => reqs.length === 5 * attempts, `${5 * attempts} attempts`);
    await drained(id);
    const events = (await p.api('GET', `/webhooks/${id}/events?limit=100`)).body.data as { status: string }[];
    expect(events.map((e) => e.status)).toEqual(Array(5).fill('failed'));
    expect((await p.api('GET', `/webhooks/${id}`)).body.status).toBe('enabled');

    // The endpoint recovers: the next event goes to it as to any other.
    r.answer(() => ({ status: 200 }));
    expect((await newContact()).status).toBe(201);
    await r.waitFor(() => r.delivered().length === 1, 'the event after the failures');
    expect(r.requests.length).toBe(5 * attempts + 1);
  });
});
