// POST /emails and friends end to end: the official SDK against a running Posthorn, a test DNS
// server publishing the destination's MX, and a loopback MTA receiving the DKIM-signed message.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { simpleParser } from 'mailparser';
import type { Running } from '../helpers/posthorn';
import type { TestDns } from '../helpers/dns';
import type { Sink } from '../helpers/sink';
import { verifiedDomain, waitForEmail, eventTypes, storedEmails } from '../helpers/emails';
import { releaseDue } from '../../src/sending/scheduled';
import { startMailWorld, authenticateReceived, type MailWorld } from '../helpers/world';
import { until } from '../helpers/wait';

let world: MailWorld;
let p: Running;
let dns: TestDns;
let sink: Sink;

beforeAll(async () => {
  world = await startMailWorld({ 'delivery.retry_schedule': ['1s'], 'security.allow_private_networks': true });
  ({ p, dns, sink } = world);
});
afterAll(() => world.stop());

const lastEvent = async (id: string) => (await p.api('GET', `/emails/${id}`)).body.last_event as string;

describe('send with the SDK', () => {
  test('arrives DKIM-signed at the recipient MX and GET shows last_event delivered', async () => {
    const { data, error } = await p.resend.emails.send({
      from: 'Acme <hello@example.test>',
      to: ['ann@dest.test'],
      subject: 'Hello World',
      html: '<p>Hi <strong>Ann</strong></p>',
      tags: [{ name: 'category', value: 'confirm_email' }],
      headers: { 'X-Entity-Ref-ID': '123' },
    });
    expect(error).toBeNull();
    const id = data!.id;
    await until(async () => (await lastEvent(id)) === 'delivered', 'delivery');
    const msg = sink.messages.find((m) => m.raw.toString().includes(`<${id}@example.test>`))!;
    expect(msg.rcptTo).toEqual(['ann@dest.test']);
    expect(msg.mailFrom).toMatch(/^bounces\+[^@]+@send\.example\.test$/);

    // DKIM verifies against the key published in the test DNS.
    const auth = await authenticateReceived(dns, msg);
    const sig = auth.dkim.results[0];
    expect(sig.status.result).toBe('pass');
    expect(sig.signingDomain).toBe('example.test');
    expect(sig.selector).toBe('posthorn');

    const parsed = await simpleParser(msg.raw);
    expect(parsed.subject).toBe('Hello World');
    expect(parsed.text?.trim()).toBe('Hi ANN'.replace('ANN', 'Ann'));
    expect(parsed.headers.get('x-entity-ref-id')).toBe('123');

    const got = await p.resend.emails.get(id);
    expect(got.data).toMatchObject({
      object: 'email',
      id,
      message_id: `<${id}@example.test>`,
      to: ['ann@dest.test'],
      from: 'Acme <hello@example.test>',
      subject: 'Hello World',
      html: '<p>Hi <strong>Ann</strong></p>',
      text: null,
      bcc: [],
      cc: [],
      reply_to: [],
      last_event: 'delivered',
      scheduled_at: null,
      tags: [{ name: 'category', value: 'confirm_email' }],
    });
    expect((await p.svc.events.log(p.svc.store, p.creds.team_id, id)).map((e) => e.type)).toEqual(['email.queued', 'email.sent', 'email.delivered']);
  });

  test('the event log: email.queued comes from the email (no row of its own) and pages like every stored event', async () => {
    const { data } = await p.resend.emails.send({ from: 'hello@example.test', to: 'log@dest.test', subject: 'log', text: 'x' });
    const id = data!.id;
    await until(async () => (await lastEvent(id)) === 'delivered', 'delivery');
    const stored = await p.svc.store.events.findAll('subject', id, p.creds.team_id);
    expect(stored.map((e) => e.type)).toEqual(['email.sent', 'email.delivered']);
    // Rows keep only what is each event's own; the rest of the payload is the email's.
    expect(stored.map((e) => [e.email_payload, e.data])).toEqual([
      [true, {}],
      [true, { recipients: ['log@dest.test'] }],
    ]);
    const all = (await p.api('GET', `/emails/${id}/events`)).body;
    const payload = {
      email_id: id,
      created_at: expect.any(String),
      message_id: `<${id}@example.test>`,
      from: 'hello@example.test',
      to: ['log@dest.test'],
      subject: 'log',
      tags: {},
    };
    expect(all.data[0].data).toEqual(payload);
    expect(all.data[1].data).toEqual(payload);
    expect(all.has_more).toBe(false);
    expect(all.data.map((e: { type: string }) => e.type)).toEqual(['email.delivered', 'email.sent', 'email.queued']);
    const queued = all.data[2];
    expect(queued).toEqual({
      object: 'event',
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7000-8000-0{12}$/),
      type: 'email.queued',
      created_at: expect.any(String),
      data: { email_id: id, recipients: null },
      automated: null,
    });
    expect(Date.parse(queued.created_at)).toBeLessThanOrEqual(Date.parse(all.data[1].created_at));
    // One at a time, downwards then upwards: the same events, the same order.
    const ids = all.data.map((e: { id: string }) => e.id);
    const down: string[] = [];
    for (let after: string | undefined, more = true; more; ) {
      const page = (await p.api('GET', `/emails/${id}/events?limit=1${after ? `&after=${after}` : ''}`)).body;
      down.push(...page.data.map((e: { id: string }) => e.id));
      more = page.has_more;
      after = page.data.at(-1)?.id;
    }
    expect(down).toEqual(ids);
    const up = (await p.api('GET', `/emails/${id}/events?limit=1&before=${ids[2]}`)).body;
    expect(up).toMatchObject({ has_more: true, data: [{ id: ids[1] }] });
    expect((await p.api('GET', `/emails/${id}/events?limit=2&before=${ids[2]}`)).body).toMatchObject({
      has_more: false,
      data: [{ id: ids[0] }, { id: ids[1] }],
    });
    expect((await p.api('GET', `/emails/${id}/events?limit=2&after=${ids[0]}`)).body).toMatchObject({
      has_more: false,
      data: [{ id: ids[1] }, { id: ids[2] }],
    });
    expect((await p.api('GET', `/emails/${id}/events?after=${ids[2]}`)).body).toEqual({ object: 'list', has_more: false, data: [] });
  });

  test('list: newest first, default page 20, no bodies', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await p.resend.emails.send({ from: 'hello@example.test', to: 'bob@dest.test', subject: `n${i}`, text: 'x' })).data!.id);
    const list = await p.resend.emails.list({ limit: 2 });
    expect(list.data!.data.map((e) => e.id)).toEqual([ids[2], ids[1]]);
    expect(list.data!.has_more).toBe(true);
    expect(Object.keys(list.data!.data[0]).sort()).toEqual([
      'bcc',
      'cc',
      'created_at',
      'from',
      'id',
      'last_event',
      'message_id',
      'reply_to',
      'scheduled_at',
      'subject',
      'to',
    ]);
    const all = await p.api('GET', '/emails');
    expect(all.body.data.length).toBeLessThanOrEqual(20);
  });

  test('attachments: listed with signed download URLs that need no key', async () => {
    const pdf = Buffer.from('%PDF-1.4 test invoice');
    const { data } = await p.resend.emails.send({
      from: 'hello@example.test',
      to: 'carl@dest.test',
      subject: 'Invoice',
      html: '<p>See attached <img src="cid:logo"></p>',
      attachments: [
        { filename: 'invoice.pdf', content: pdf.toString('base64') },
        { filename: 'logo.png', content: Buffer.from('PNGDATA').toString('base64'), contentId: 'logo' } as never,
      ],
    });
    const list = await p.api('GET', `/emails/${data!.id}/attachments`);
    expect(list.status).toBe(200);
    const [logo, invoice] = list.body.data;
    expect(invoice).toMatchObject({
      object: 'attachment',
      filename: 'invoice.pdf',
      size: pdf.length,
      content_type: 'application/pdf',
      content_disposition: 'attachment',
    });
    // Optional in the SDK's type, never null: no content_id key on a part that has none (docs/api.md §1.5).
    expect('content_id' in invoice).toBe(false);
    expect(logo).toMatchObject({ filename: 'logo.png', content_disposition: 'inline', content_id: 'logo' });
    const dl = await fetch(invoice.download_url.replace('http://localhost:3000', p.url));
    expect(dl.status).toBe(200);
    expect(Buffer.from(await dl.arrayBuffer())).toEqual(pdf);
    const one = await p.api('GET', `/emails/${data!.id}/attachments/${invoice.id}`);
    expect(one.body.id).toBe(invoice.id);
    expect('content_id' in one.body).toBe(false);
    // An unnamed part has no filename key either.
    const unnamed = await p.resend.emails.send({
      from: 'hello@example.test',
      to: 'carl@dest.test',
      subject: 'Blob',
      text: 'x',
      attachments: [{ content: pdf.toString('base64') }],
    });
    const blob = (await p.resend.emails.attachments.list({ emailId: unnamed.data!.id })).data!.data[0];
    expect(blob).toMatchObject({ object: 'attachment', content_type: 'application/octet-stream', content_disposition: 'attachment' });
    expect('filename' in blob || 'content_id' in blob).toBe(false);
    const forged = await fetch(invoice.download_url.replace('http://localhost:3000', p.url).replace(/.$/, (c: string) => (c === 'B' ? 'A' : 'B')));
    expect(forged.status).toBe(404);
  });
});

describe('rules', () => {
  test('unverified or unknown sender domain → 403 validation_error, nothing stored', async () => {
    const before = (await storedEmails(p.svc, p.creds.team_id)).length;
    const r = await p.resend.emails.send({ from: 'a@unknown.test', to: 'x@dest.test', subject: 's', text: 't' });
    expect(r.error).toMatchObject({
      name: 'validation_error',
      statusCode: 403,
      message: 'The `unknown.test` domain is not verified. Please, add and verify your domain.',
    });
    expect((await storedEmails(p.svc, p.creds.team_id)).length).toBe(before);
  });

  test('a sending_access key bound to another domain → 403', async () => {
    const other = await verifiedDomain(p, 'other.test');
    const key = await p.resend.apiKeys.create({ name: 'bound', permission: 'sending_access', domain_id: other.id });
    const r = await p.client(key.data!.token).emails.send({ from: 'a@example.test', to: 'x@dest.test', subject: 's', text: 't' });
    expect(r.error).toMatchObject({ statusCode: 403, message: 'This API key is not authorized to send emails from `example.test`.' });
    const ok = await p.client(key.data!.token).emails.send({ from: 'a@other.test', to: 'x@dest.test', subject: 's', text: 't' });
    expect(ok.error).toBeNull();
  });

  test('a suppressed recipient is skipped; all suppressed → last_event suppressed', async () => {
    await p.api('POST', '/suppressions', { body: { email: 'Gone@Dest.test' } });
    const r = await p.resend.emails.send({ from: 'hello@example.test', to: 'gone@dest.test', subject: 's', text: 't' });
    expect(r.error).toBeNull();
    expect(await lastEvent(r.data!.id)).toBe('suppressed');
    const mixed = await p.resend.emails.send({ from: 'hello@example.test', to: ['gone@dest.test', 'dan@dest.test'], subject: 'mixed', text: 't' });
    await until(async () => (await lastEvent(mixed.data!.id)) === 'delivered', 'mixed delivery');
    const rec = (await p.svc.store.emails.get(p.creds.team_id, mixed.data!.id))!;
    expect(rec.recipients).toEqual({ 'gone@dest.test': 'suppressed', 'dan@dest.test': 'delivered' });
    expect(sink.to('gone@dest.test').length).toBe(0);
  });

  test('bad fields → documented errors', async () => {
    const cases: [Record<string, unknown>, number, string][] = [
      [{ to: 'a@dest.test', subject: 's', text: 't' }, 422, 'missing_required_field'],
      [{ from: 'nope', to: 'a@dest.test', subject: 's', text: 't' }, 422, 'validation_error'],
      [{ from: 'hello@example.test', to: 'a@dest.test', subject: 's' }, 422, 'validation_error'],
      [{ from: 'hello@example.test', to: Array.from({ length: 51 }, (_, i) => `u${i}@dest.test`), subject: 's', text: 't' }, 422, 'validation_error'],
      [{ from: 'hello@example.test', to: 'a@dest.test', subject: 's', text: 't', attachments: [{ filename: 'x' }] }, 422, 'invalid_attachment'],
      [{ from: 'hello@example.test', to: 'a@dest.test', subject: 's', text: 't', scheduled_at: 'next blue moon' }, 422, 'validation_error'],
    ];
    for (const [body, status, name] of cases) {
      const r = await p.api('POST', '/emails', { body });
      expect([r.status, r.body.name]).toEqual([status, name]);
    }
  });
});

describe('batch', () => {
  test('strict: all or nothing, error prefixed with the item index', async () => {
    const ok = await p.resend.batch.send([
      { from: 'hello@example.test', to: 'b1@dest.test', subject: '1', text: 't' },
      { from: 'hello@example.test', to: 'b2@dest.test', subject: '2', text: 't' },
    ]);
    expect(ok.error).toBeNull();
    expect(ok.data!.data.length).toBe(2);
    const before = (await storedEmails(p.svc, p.creds.team_id)).length;
    const bad = await p.resend.batch.send([
      { from: 'hello@example.test', to: 'b3@dest.test', subject: '3', text: 't' },
      { from: 'hello@example.test', to: 'not-an-address', subject: '4', text: 't' },
    ]);
    expect(bad.error).toMatchObject({ statusCode: 422, name: 'validation_error' });
    expect(bad.error!.message).toStartWith('[1] Invalid `to` field.');
    expect((await storedEmails(p.svc, p.creds.team_id)).length).toBe(before);
  });

  test('permissive: accepted items sent, rejected ones reported by index', async () => {
    const r = await p.resend.batch.send(
      [
        { from: 'hello@example.test', to: 'p1@dest.test', subject: '1', text: 't' },
        { from: 'hello@example.test', to: 'bad', subject: '2', text: 't' },
        { from: 'hello@example.test', to: 'p3@dest.test', subject: '3', text: 't' },
      ],
      { batchValidation: 'permissive' },
    );
    expect(r.error).toBeNull();
    expect(r.data!.data.length).toBe(2);
    expect(r.data!.errors).toEqual([{ index: 1, message: expect.stringContaining('Invalid `to` field.') }]);
  });

  test('size limits and header values', async () => {
    expect((await p.api('POST', '/emails/batch', { body: [] })).status).toBe(422);
    expect((await p.api('POST', '/emails/batch', { body: {} })).status).toBe(400);
    const odd = await p.api('POST', '/emails/batch', { body: [{}], headers: { 'x-batch-validation': 'lenient' } });
    expect([odd.status, odd.body.name]).toEqual([422, 'validation_error']);
    // Attachments are accepted in batch items (docs/api.md §7.2; emails-attachments.test.ts), checked as in POST /emails.
    const att = await p.api('POST', '/emails/batch', {
      body: [{ from: 'hello@example.test', to: 'a@dest.test', subject: 's', text: 't', attachments: [{ content: 'eA==', filename: 'x' }] }],
    });
    expect(att.status).toBe(200);
    const bad = await p.api('POST', '/emails/batch', {
      body: [{ from: 'hello@example.test', to: 'a@dest.test', subject: 's', text: 't', attachments: [{ content: 'not base64!', filename: 'x' }] }],
    });
    expect([bad.status, bad.body.name]).toEqual([422, 'invalid_attachment']);
  });
});

describe('idempotency', () => {
  test('replay returns the original answer and sends nothing; a different body → 409', async () => {
    const body = { from: 'hello@example.test', to: 'idem@dest.test', subject: 'once', text: 't' };
    const first = await p.resend.emails.send(body, { idempotencyKey: 'welcome-user/123' });
    const again = await p.resend.emails.send(
      { text: 't', subject: 'once', to: 'idem@dest.test', from: 'hello@example.test' },
      { idempotencyKey: 'welcome-user/123' },
    );
    expect(again.data!.id).toBe(first.data!.id);
    const other = await p.resend.emails.send({ ...body, subject: 'twice' }, { idempotencyKey: 'welcome-user/123' });
    expect(other.error).toMatchObject({ statusCode: 409, name: 'invalid_idempotent_request' });
    // Same key on the batch endpoint is unrelated.
    const batch = await p.resend.batch.send([body], { idempotencyKey: 'welcome-user/123' });
    expect(batch.error).toBeNull();
    await p.svc.backOffice.idle('incoming');
    const count = (await storedEmails(p.svc, p.creds.team_id)).filter((e) => e.subject === 'once').length;
    expect(count).toBe(2);
    // A 4xx outcome is replayed as well.
    const bad = await p.api('POST', '/emails', { body: { from: 'x' }, headers: { 'idempotency-key': 'k-bad' } });
    const badAgain = await p.api('POST', '/emails', { body: { from: 'x' }, headers: { 'idempotency-key': 'k-bad' } });
    expect([badAgain.status, badAgain.body]).toEqual([bad.status, bad.body]);
  });

  test('concurrent requests with one key: one wins, the other gets 409 concurrent_idempotent_requests', async () => {
    const body = { from: 'hello@example.test', to: 'race@dest.test', subject: 'race', text: 't' };
    const rs = await Promise.all([0, 1, 2].map(() => p.api('POST', '/emails', { body, headers: { 'idempotency-key': 'race-1' } })));
    const ok = rs.filter((r) => r.status === 200);
    const busy = rs.filter((r) => r.status === 409);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(new Set(ok.map((r) => r.body.id)).size).toBe(1);
    for (const r of busy) expect(r.body.name).toBe('concurrent_idempotent_requests');
  });

  test('malformed key → 400 invalid_idempotency_key', async () => {
    const r = await p.api('POST', '/emails', { body: {}, headers: { 'idempotency-key': 'x'.repeat(257) } });
    expect([r.status, r.body.name]).toEqual([400, 'invalid_idempotency_key']);
  });
});

describe('scheduling', () => {
  test('scheduled, rescheduled to now, then delivered; cancel of a sent email → 422', async () => {
    const { data } = await p.resend.emails.send({ from: 'hello@example.test', to: 'later@dest.test', subject: 'later', text: 't', scheduledAt: 'in 1 hour' });
    const got = await p.resend.emails.get(data!.id);
    expect(got.data!.last_event).toBe('scheduled');
    const at = Date.parse(got.data!.scheduled_at!);
    expect(Math.abs(at - (Date.now() + 3_600_000))).toBeLessThan(60_000);
    const upd = await p.resend.emails.update({ id: data!.id, scheduledAt: new Date(Date.now() + 1500).toISOString() });
    expect(upd.data).toEqual({ object: 'email', id: data!.id } as never);
    await until(async () => (await lastEvent(data!.id)) === 'delivered', 'scheduled delivery');
    const cancel = await p.resend.emails.cancel(data!.id);
    expect(cancel.error).toMatchObject({ statusCode: 422, message: 'Only scheduled or queued emails can be canceled.' });
  });

  test('cancel keeps it from ever being sent', async () => {
    // Two emails for the same time, an hour ahead (the running scheduler never reaches it): one is
    // cancelled, the other is the control. The due work is then driven here, as if that time had come.
    const team = p.creds.team_id;
    const at = Date.now() + 3_600_000;
    const scheduledAt = new Date(at).toISOString();
    const send = (to: string) => p.resend.emails.send({ from: 'hello@example.test', to, subject: to, text: 't', scheduledAt });
    const control = (await send('control@dest.test')).data!.id;
    const never = (await send('never@dest.test')).data!.id;
    const c = await p.resend.emails.cancel(never);
    expect(c.data).toEqual({ object: 'email', id: never } as never);
    const scheduled = async () => (await p.svc.store.schedule.due(at + 365 * 86_400_000)).map((d) => d.id);
    expect(await scheduled()).toContain(control);
    expect(await scheduled()).not.toContain(never);

    // The scheduler's work at the send time: the control is released to the queue, the cancelled one is not.
    expect(await releaseDue(p.svc, at + 1)).toBeGreaterThanOrEqual(1);
    expect(await lastEvent(control)).toBe('queued');
    expect(await p.svc.store.queue.entriesOf(team, control)).toHaveLength(1);
    expect(await lastEvent(never)).toBe('canceled');
    expect(await p.svc.store.queue.entriesOf(team, never)).toEqual([]);
    const left = await scheduled();
    expect(left).not.toContain(control);
    expect(left).not.toContain(never);

    // Released at the driven time, the entries are due an hour from now: make every entry of both
    // emails due now. The control is delivered; the cancelled email never reaches the sink.
    await p.svc.store.write(async (tx) => {
      for (const id of [control, never]) for (const e of await tx.queue.entriesOf(team, id)) tx.queue.put(e, Date.now());
    });
    await waitForEmail(p.svc, { team_id: team, id: control }, (e) => e.last_event === 'delivered');
    expect(sink.to('control@dest.test')).toHaveLength(1);
    await p.svc.backOffice.idle('delivery');
    expect(sink.to('never@dest.test')).toHaveLength(0);
    expect(await lastEvent(never)).toBe('canceled');
    const types = await eventTypes(p.svc, { team_id: team, id: never });
    expect(types.at(-1)).toBe('email.canceled');
    expect(types).not.toContain('email.queued');
    expect(types).not.toContain('email.sent');
  });
});
