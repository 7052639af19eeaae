// Sandbox addresses (docs/api.md §7.11) end to end with the official SDK: mail to Resend's test
// addresses delivered@, bounced@, complained@ and suppressed@resend.dev (and their +label forms, in
// any case) goes through the whole pipeline — accepted, queued, claimed, a simulated attempt on the
// email, events, signed webhooks, metric counters — and never leaves the machine: the test DNS
// server is asked nothing about resend.dev and no MTA receives anything for it. Nobody lands on the
// suppression list. Mixed with real recipients, each recipient takes its own path. With
// `delivery.sandbox = false` they are ordinary addresses, delivered through resend.dev's MX (here a
// loopback sink).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Running } from '../helpers/posthorn';
import { type Hook, type Receiver, startReceiver } from '../helpers/receiver';
import { until } from '../helpers/wait';
import { type MailWorld, startMailWorld } from '../helpers/world';

const FROM = 'Acme <hello@example.test>';
const EVENTS = ['email.sent', 'email.delivered', 'email.delivery_delayed', 'email.bounced', 'email.complained', 'email.suppressed'];

/** A world with a webhook subscribed to every email kind, its deliveries verified with the SDK. */
async function sandboxWorld(overrides: Record<string, unknown>) {
  const world = await startMailWorld({ 'security.allow_private_networks': true, 'webhooks.retry_schedule': ['200ms'], ...overrides });
  const receiver = await startReceiver();
  const { data, error } = await world.p.resend.webhooks.create({ endpoint: receiver.url, events: EVENTS as never });
  expect(error).toBeNull();
  return { world, receiver, secret: data!.signing_secret };
}

const send = async (p: Running, to: string | string[], extra: Record<string, unknown> = {}) => {
  const { data, error } = await p.resend.emails.send({ from: FROM, to, subject: 'Sandbox', html: '<p>Hello</p>', ...extra });
  expect(error).toBeNull();
  return data!.id;
};

const emailOf = async (p: Running, id: string) => {
  const r = await p.resend.emails.get(id);
  expect(r.error).toBeNull();
  // biome-ignore lint/suspicious/noExplicitAny: Posthorn's `attempts` extension is not in the SDK's type.
  return r.data as any;
};

/** The email's event log, oldest first (GET /emails/{id}/events lists newest first). */
const eventLog = async (p: Running, id: string): Promise<string[]> =>
  ((await p.api('GET', `/emails/${id}/events`)).body.data as { type: string }[]).map((e) => e.type).reverse();

const totals = async (p: Running, id: string) => {
  const m = await p.resend.emails.metrics({ emailId: [id] } as never);
  expect(m.error).toBeNull();
  return m.data!.totals as unknown as Record<string, number>;
};

describe('sandbox on (the default)', () => {
  let world: MailWorld;
  let p: Running;
  let receiver: Receiver;
  let secret: string;
  beforeAll(async () => {
    ({ world, receiver, secret } = await sandboxWorld({}));
    p = world.p;
  });
  afterAll(async () => {
    await world.stop();
    await receiver.close();
  });

  /** The webhook deliveries of one email once `n` arrived, each verified by the SDK, in the order of their events. */
  async function hooks(id: string, n: number): Promise<Hook['payload'][]> {
    const mine = () => receiver.delivered().filter((h) => h.payload.data.email_id === id);
    await until(
      () => mine().length >= n,
      () => `${n} webhooks for ${id} (${mine().length} so far)`,
    );
    const verified = mine().map((h) => {
      // Throws unless signed with the webhook's secret.
      p.resend.webhooks.verify({ payload: h.body, headers: { id: h.id, timestamp: h.timestamp, signature: h.signature }, webhookSecret: secret });
      return h.payload;
    });
    return verified.sort((a, b) => a.created_at.localeCompare(b.created_at));
  }

  const lastEventIs = (id: string, status: string) =>
    until(async () => (await emailOf(p, id)).last_event === status, `${id} ${status}`).then(() => emailOf(p, id));

  /** Emails whose every recipient was suppressed: no webhook may ever name them. */
  const quiet: string[] = [];

  const suppressions = async () => ((await p.api('GET', '/suppressions?limit=100')).body.data as { email: string }[]).map((s) => s.email);

  test('delivered@: sent, then delivered; the attempt on the email is simulated', async () => {
    const id = await send(p, 'delivered@resend.dev');
    const email = await lastEventIs(id, 'delivered');
    expect(email.attempts).toHaveLength(1);
    expect(email.attempts[0]).toMatchObject({
      domain: 'resend.dev',
      host: 'sandbox',
      ip: null,
      tls: null,
      simulated: true,
      results: [{ recipient: 'delivered@resend.dev', code: 250, enhanced_code: '2.0.0' }],
    });
    expect(await eventLog(p, id)).toEqual(['email.queued', 'email.sent', 'email.delivered']);
    const h = await hooks(id, 2);
    expect(h.map((x) => x.type)).toEqual(['email.sent', 'email.delivered']);
    expect(h[1]!.data).toMatchObject({ email_id: id, to: ['delivered@resend.dev'], from: FROM, subject: 'Sandbox' });
    expect(await totals(p, id)).toMatchObject({ sent: 1, delivered: 1, bounced: 0, complained: 0, suppressed: 0 });
  });

  test('bounced@: sent, then bounced Permanent with its 550 5.1.1; nobody is suppressed, so it bounces again', async () => {
    for (let round = 0; round < 2; round++) {
      const id = await send(p, 'bounced@resend.dev');
      const email = await lastEventIs(id, 'bounced');
      expect(email.attempts[0]).toMatchObject({
        host: 'sandbox',
        simulated: true,
        results: [{ recipient: 'bounced@resend.dev', code: 550, enhanced_code: '5.1.1' }],
      });
      expect(await eventLog(p, id)).toEqual(['email.queued', 'email.sent', 'email.bounced']);
      const h = await hooks(id, 2);
      expect(h.map((x) => x.type)).toEqual(['email.sent', 'email.bounced']);
      expect(h[1]!.data).toMatchObject({ to: ['bounced@resend.dev'] });
      expect(h[1]!.data.bounce).toEqual({
        type: 'Permanent',
        subType: 'NoEmail',
        message: "The recipient's mailbox does not exist.",
        diagnosticCode: ['smtp; 550 5.1.1 <bounced@resend.dev>: Unknown User (simulated bounce of a sandbox address)'],
      });
      expect(await totals(p, id)).toMatchObject({ sent: 1, delivered: 0, bounced: 1, bounced_permanent: 1 });
    }
    expect(await suppressions()).not.toContain('bounced@resend.dev');
  });

  test('complained@: sent, delivered, then complained; nobody is suppressed', async () => {
    const id = await send(p, 'complained@resend.dev');
    const email = await lastEventIs(id, 'complained');
    expect(email.attempts[0]).toMatchObject({ host: 'sandbox', simulated: true, results: [{ recipient: 'complained@resend.dev', code: 250 }] });
    expect(await eventLog(p, id)).toEqual(['email.queued', 'email.sent', 'email.delivered', 'email.complained']);
    const h = await hooks(id, 3);
    expect(new Set(h.map((x) => x.type))).toEqual(new Set(['email.sent', 'email.delivered', 'email.complained']));
    expect(h.find((x) => x.type === 'email.complained')!.data).toMatchObject({ email_id: id, to: ['complained@resend.dev'] });
    expect(await totals(p, id)).toMatchObject({ sent: 1, delivered: 1, complained: 1 });
    expect(await suppressions()).not.toContain('complained@resend.dev');
    // Sendable again: a second complaint, not a suppression.
    await lastEventIs(await send(p, 'complained@resend.dev'), 'complained');
  });

  test('suppressed@: suppressed at once — no attempt, no webhook, no entry on the suppression list', async () => {
    const id = await send(p, 'suppressed@resend.dev');
    quiet.push(id);
    const email = await emailOf(p, id);
    expect(email.last_event).toBe('suppressed');
    expect(email.attempts).toEqual([]);
    expect(email.queue).toBeNull();
    expect(await eventLog(p, id)).toEqual(['email.suppressed']);
    expect(await totals(p, id)).toMatchObject({ suppressed: 1, sent: 0 });
    expect(await suppressions()).not.toContain('suppressed@resend.dev');
    expect((await p.api('GET', '/suppressions/suppressed@resend.dev')).status).toBe(404);
  });

  test('+label forms, in any case, are the same sandbox addresses', async () => {
    const delivered = await send(p, 'Delivered+signup@Resend.Dev');
    const bounced = await send(p, 'BOUNCED+ci-42@resend.dev');
    const complained = await send(p, 'complained+x.y@RESEND.DEV');
    const suppressed = await send(p, 'Suppressed+label@resend.dev');
    quiet.push(suppressed);
    expect((await lastEventIs(delivered, 'delivered')).attempts[0].simulated).toBe(true);
    expect((await lastEventIs(bounced, 'bounced')).attempts[0].results[0].code).toBe(550);
    await lastEventIs(complained, 'complained');
    expect((await emailOf(p, suppressed)).last_event).toBe('suppressed');
    expect((await hooks(bounced, 2))[1]!.data.to).toEqual(['BOUNCED+ci-42@resend.dev']);
    expect(await suppressions()).toEqual([]);
  });

  test('mixed with real recipients, in one email and in a batch: each recipient takes its own path', async () => {
    // One email: a real recipient (delivered by the sink), three sandbox ones (simulated), one suppressed.
    const id = await send(p, ['ann@dest.test', 'delivered+mix@resend.dev'], {
      cc: ['bounced+mix@resend.dev', 'complained+mix@resend.dev'],
      bcc: ['suppressed+mix@resend.dev'],
    });
    await until(async () => {
      const e = await emailOf(p, id);
      return e.attempts.length === 2 && e.queue === null && (await eventLog(p, id)).includes('email.complained');
    }, 'both attempts and the complaint');
    const email = await emailOf(p, id);
    const simulated = email.attempts.find((a: { simulated?: boolean }) => a.simulated);
    const real = email.attempts.find((a: { simulated?: boolean }) => !a.simulated);
    expect(simulated).toMatchObject({ domain: 'resend.dev', host: 'sandbox' });
    expect(simulated.results.map((r: { recipient: string; code: number }) => [r.recipient, r.code])).toEqual([
      ['delivered+mix@resend.dev', 250],
      ['bounced+mix@resend.dev', 550],
      ['complained+mix@resend.dev', 250],
    ]);
    expect(real).toMatchObject({ domain: 'dest.test', host: 'mx.dest.test', ip: '127.0.0.1' });
    expect('simulated' in real).toBe(false);
    const msg = await until(() => world.sink.messages.find((m) => m.raw.toString().includes(`<${id}@example.test>`)), 'the real recipient’s message');
    expect(msg.rcptTo).toEqual(['ann@dest.test']);
    const log = await eventLog(p, id);
    expect(log.filter((t) => t === 'email.delivered')).toHaveLength(3);
    expect(log.filter((t) => t === 'email.bounced')).toHaveLength(1);
    expect(log.filter((t) => t === 'email.complained')).toHaveLength(1);
    expect(log.indexOf('email.complained')).toBeGreaterThan(log.indexOf('email.delivered'));
    const hooked = await hooks(id, 6);
    expect(hooked.map((h) => h.type).sort()).toEqual([
      'email.bounced',
      'email.complained',
      'email.delivered',
      'email.delivered',
      'email.delivered',
      'email.sent',
    ]);
    expect(await totals(p, id)).toMatchObject({ sent: 1, delivered: 1, bounced: 1, complained: 1 });

    // A batch: every item on its own path.
    const batch = await p.resend.batch.send([
      { from: FROM, to: 'delivered+batch@resend.dev', subject: 'Batch 0', html: '<p>0</p>' },
      { from: FROM, to: 'bob@dest.test', subject: 'Batch 1', html: '<p>1</p>' },
      { from: FROM, to: 'suppressed+batch@resend.dev', subject: 'Batch 2', html: '<p>2</p>' },
      { from: FROM, to: 'bounced+batch@resend.dev', subject: 'Batch 3', html: '<p>3</p>' },
    ]);
    expect(batch.error).toBeNull();
    const [b0, b1, b2, b3] = batch.data!.data.map((d) => d.id);
    expect((await lastEventIs(b0!, 'delivered')).attempts[0].simulated).toBe(true);
    expect((await lastEventIs(b1!, 'delivered')).attempts[0].host).toBe('mx.dest.test');
    expect((await emailOf(p, b2!)).last_event).toBe('suppressed');
    quiet.push(b2!);
    expect((await lastEventIs(b3!, 'bounced')).attempts[0].simulated).toBe(true);
    expect(await suppressions()).toEqual([]);
  });

  test('nothing reached the network: no DNS query about resend.dev, nothing for it at any MTA', async () => {
    await p.svc.backOffice.idle('delivery');
    await p.svc.backOffice.idle('webhooks');
    expect(quiet).toHaveLength(3);
    expect(receiver.requests.filter((h) => quiet.includes(h.payload.data.email_id as string))).toEqual([]);
    expect(world.dns.queries.filter((q) => /(^|\.)resend\.dev$/i.test(q.name))).toEqual([]);
    expect(world.sink.messages.flatMap((m) => m.rcptTo).filter((r) => /@resend\.dev$/i.test(r))).toEqual([]);
    // The real recipients did go out, through the same DNS and MTA.
    expect(world.dns.queries.some((q) => q.name === 'dest.test' && q.type === 'MX')).toBe(true);
    expect(world.sink.messages.length).toBe(2);
  });
});

describe('sandbox off: ordinary addresses', () => {
  let world: MailWorld;
  let p: Running;
  let receiver: Receiver;
  beforeAll(async () => {
    ({ world, receiver } = await sandboxWorld({ 'delivery.sandbox': false }));
    p = world.p;
    world.dns.zone.set('resend.dev', 'MX', [{ exchange: 'mx.resend.dev', priority: 10 }]);
    world.dns.zone.set('mx.resend.dev', 'A', ['127.0.0.1']);
    world.sink.respond('bounced@resend.dev', { code: 550, message: '5.1.1 no such user' });
  });
  afterAll(async () => {
    await world.stop();
    await receiver.close();
  });

  test('delivered through resend.dev’s MX like any address; a real bounce suppresses, suppressed@ is delivered', async () => {
    const id = await send(p, ['delivered@resend.dev', 'bounced@resend.dev', 'complained@resend.dev', 'suppressed@resend.dev']);
    await until(async () => (await emailOf(p, id)).queue === null && (await emailOf(p, id)).attempts.length === 1, 'the attempt');
    const email = await emailOf(p, id);
    expect(email.attempts[0]).toMatchObject({ domain: 'resend.dev', host: 'mx.resend.dev', ip: '127.0.0.1' });
    expect('simulated' in email.attempts[0]).toBe(false);
    const msg = await until(() => world.sink.messages.find((m) => m.raw.toString().includes(`<${id}@example.test>`)), 'the message at resend.dev’s MX');
    expect(msg.rcptTo).toEqual(['delivered@resend.dev', 'complained@resend.dev', 'suppressed@resend.dev']);
    expect(world.dns.queries.some((q) => q.name === 'resend.dev' && q.type === 'MX')).toBe(true);
    const log = await eventLog(p, id);
    expect(log.filter((t) => t === 'email.delivered')).toHaveLength(3);
    expect(log).toContain('email.bounced');
    expect(log).not.toContain('email.complained');
    const s = await p.api('GET', '/suppressions/bounced@resend.dev');
    expect(s.body).toMatchObject({ email: 'bounced@resend.dev', origin: 'bounce', source_id: id });
  });
});
