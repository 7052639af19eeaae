// Direct delivery to the recipients' MX hosts (docs/mail.md, RFC 5321 §5.1): MX lookup through the
// test DNS, STARTTLS, DKIM (verified with mailauth against the same DNS), VERP envelope sender,
// implicit and null MX, MX preference order, per-recipient outcomes, connection reuse.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { authenticateReceived } from '../helpers/world';
import { startPosthorn, type Running } from '../helpers/posthorn';
import { startDnsServer, type TestDns } from '../helpers/dns';
import { startSink, type Sink } from '../helpers/sink';
import { verifiedDomain, queueEmail, waitForEmail, settled, eventsOf, eventTypes } from '../helpers/emails';
import type { DomainRec } from '../../src/store';
import { resolveVerp } from '../../src/feedback';
import { Verp } from '../../src/mail/verp';
import { DEFAULT_POOL } from '../../src/delivery/pool';

let dns: TestDns;
let sink: Sink;
let p: Running;
let sender: DomainRec;

beforeAll(async () => {
  dns = await startDnsServer();
  sink = await startSink();
  // The sink is on loopback: private networks allowed (below, a server that refuses them).
  p = await startPosthorn({ 'dns.servers': [dns.address], 'delivery.mx_port': sink.port, 'security.allow_private_networks': true });
  sender = await verifiedDomain(p, 'example.test', { dns });
});

afterAll(async () => {
  await p.stop();
  await sink.close();
  await dns.close();
});

describe('MX delivery', () => {
  // Issue 34: the private-network guard of webhooks and attachment URLs holds for MX hosts too,
  // which whoever runs the recipient domain's DNS chooses.
  test('without security.allow_private_networks an MX host on a private or loopback address is not connected to', async () => {
    const strict = await startPosthorn({ 'dns.servers': [dns.address], 'delivery.mx_port': sink.port, 'security.allow_private_networks': false });
    try {
      const domain = await verifiedDomain(strict, 'strict.test', { dns });
      dns.zone.set('inside.test', 'MX', [{ exchange: 'mx.inside.test', priority: 10 }]);
      dns.zone.set('mx.inside.test', 'A', ['127.0.0.1']);
      dns.zone.set('mx.inside.test', 'AAAA', ['::ffff:7f00:1']);
      const before = sink.to('x@inside.test').length;
      const email = await queueEmail(strict.svc, domain, { to: ['x@inside.test'] });
      await waitForEmail(strict.svc, email, (e) => e.recipients['x@inside.test'] === 'delayed');
      const [entry] = await strict.svc.store.queue.entriesOf(email.team_id, email.id);
      expect(entry!.last_error).toBe(
        '451 4.4.4 mx.inside.test: the MX host resolves to a private or loopback address (127.0.0.1); security.allow_private_networks is off',
      );
      expect(sink.to('x@inside.test').length).toBe(before);
      await strict.svc.store.write(async (tx) => tx.queue.remove(entry!));
    } finally {
      await strict.stop();
    }
  });

  test('delivers to the MX host of the recipient domain, signed with DKIM, from a VERP address, over STARTTLS', async () => {
    dns.zone.set('dest.test', 'MX', [{ exchange: 'mx.dest.test', priority: 10 }]);
    dns.zone.set('mx.dest.test', 'A', ['127.0.0.1']);
    dns.zone.set('_dmarc.example.test', 'TXT', ['v=DMARC1; p=reject']);
    const email = await queueEmail(p.svc, sender, { to: ['bob@dest.test'], subject: 'Hello Bob' });
    const done = await waitForEmail(p.svc, email, settled);
    expect(done.recipients).toEqual({ 'bob@dest.test': 'delivered' });
    expect(done.last_event).toBe('delivered');
    expect(await eventTypes(p.svc, email)).toEqual(['email.queued', 'email.sent', 'email.delivered']);

    const msg = sink.to('bob@dest.test').at(-1)!;
    expect(msg.rcptTo).toEqual(['bob@dest.test']);
    expect(msg.secure).toBe(true);
    expect(msg.helo).toBe('mx.posthorn.test');
    // VERP: bounces+<token>@<return path>.<domain>, decodable to this email.
    expect(msg.mailFrom).toMatch(/^bounces\+[0-9a-f]{32}-[0-9a-f]{10}@send\.example\.test$/);
    expect(await resolveVerp(p.svc.store, new Verp(p.svc.store.secret('verp')), msg.mailFrom)).toEqual({
      team_id: email.team_id,
      email_id: email.id,
      domain_id: sender.id,
      recipient_domain: 'dest.test',
    });

    const raw = msg.raw.toString('latin1');
    expect(raw.startsWith('DKIM-Signature: ')).toBe(true);
    expect(raw).toContain('Subject: Hello Bob');
    const res = await authenticateReceived(dns, msg);
    const sig = res.dkim.results[0]!;
    expect(sig.status.result).toBe('pass');
    expect(sig.signingDomain).toBe('example.test');
    expect(sig.selector).toBe(sender.dkim.selector);
    expect(sig.algo).toBe('rsa-sha256');
    expect(sig.format).toBe('relaxed/relaxed');
    // mailauth answers false for a check it could not run.
    expect(res.spf).toMatchObject({ status: { result: 'pass' } });
    expect(res.dmarc).toMatchObject({ status: { result: 'pass' } });
  });
});

describe('routes (RFC 5321 §5.1, RFC 7505)', () => {
  test('no MX: the domain itself is the implicit MX (its A record)', async () => {
    dns.zone.set('implicit.test', 'A', ['127.0.0.1']);
    const email = await queueEmail(p.svc, sender, { to: ['ann@implicit.test'] });
    const done = await waitForEmail(p.svc, email, settled);
    expect(done.recipients).toEqual({ 'ann@implicit.test': 'delivered' });
    expect(sink.to('ann@implicit.test')).toHaveLength(1);
    expect(dns.queries.some((q) => q.name === 'implicit.test' && q.type === 'MX')).toBe(true);
  });

  test('null MX: bounced (Permanent, 5.1.10) without a connection, and suppressed', async () => {
    dns.zone.set('nomail.test', 'MX', [{ exchange: '.', priority: 0 }]);
    dns.zone.set('nomail.test', 'A', ['127.0.0.1']); // must not be used as an implicit MX
    const before = sink.connections();
    const email = await queueEmail(p.svc, sender, { to: ['ann@nomail.test'] });
    const done = await waitForEmail(p.svc, email, settled);
    expect(done.recipients).toEqual({ 'ann@nomail.test': 'bounced' });
    expect(sink.connections()).toBe(before);
    const bounced = (await eventsOf(p.svc, email)).find((e) => e.type === 'email.bounced')!;
    expect(bounced.data.to).toEqual(['ann@nomail.test']);
    expect(bounced.data.bounce).toMatchObject({ type: 'Permanent', subType: 'NoEmail' });
    expect((bounced.data.bounce as { diagnosticCode: string[] }).diagnosticCode[0]).toStartWith('smtp; 556 5.1.10 ');
    const s = await p.api('GET', `/suppressions/${encodeURIComponent('ann@nomail.test')}`);
    expect(s.status).toBe(200);
    expect(s.body).toMatchObject({ email: 'ann@nomail.test', origin: 'bounce', source_id: email.id });
  });

  test('neither MX nor address records: bounced Permanent (5.1.2)', async () => {
    const email = await queueEmail(p.svc, sender, { to: ['ann@nowhere.test'] });
    await waitForEmail(p.svc, email, settled);
    const bounced = (await eventsOf(p.svc, email)).find((e) => e.type === 'email.bounced')!;
    expect(bounced.data.bounce).toMatchObject({ type: 'Permanent', subType: 'NoEmail' });
    expect((bounced.data.bounce as { diagnosticCode: string[] }).diagnosticCode[0]).toStartWith('smtp; 550 5.1.2 ');
  });

  test('MX hosts in preference order: the preferred host refuses connections, the next one takes the mail', async () => {
    // 127.0.0.2 is loopback too, but the sink listens on 127.0.0.1 only: connections are refused.
    dns.zone.set('pref.test', 'MX', [
      { exchange: 'backup.pref.test', priority: 20 },
      { exchange: 'primary.pref.test', priority: 10 },
    ]);
    dns.zone.set('primary.pref.test', 'A', ['127.0.0.2']);
    dns.zone.set('backup.pref.test', 'A', ['127.0.0.1']);
    const email = await queueEmail(p.svc, sender, { to: ['ann@pref.test'] });
    const done = await waitForEmail(p.svc, email, settled);
    expect(done.recipients).toEqual({ 'ann@pref.test': 'delivered' });
    const asked = dns.queries.filter((q) => q.name.endsWith('pref.test') && q.type === 'A').map((q) => q.name);
    expect(asked.indexOf('primary.pref.test')).toBeGreaterThanOrEqual(0);
    expect(asked.indexOf('primary.pref.test')).toBeLessThan(asked.indexOf('backup.pref.test'));
  });
});

describe('per-recipient outcomes', () => {
  test('one email, recipients at two domains: delivered, bounced with the right sub-type, delayed', async () => {
    dns.zone.set('two.test', 'MX', [{ exchange: 'mx.dest.test', priority: 5 }]);
    sink.respond('gone@dest.test', { code: 550, message: '5.1.1 <gone@dest.test>: user unknown' });
    sink.respond('full@dest.test', { code: 552, message: '5.2.2 mailbox full' });
    sink.respond('spam@two.test', { code: 550, message: '5.7.1 message refused by policy' });
    sink.respond('odd@two.test', { code: 554, message: 'rejected' });
    sink.respond('later@two.test', { code: 451, message: '4.3.0 try again later' });
    const email = await queueEmail(p.svc, sender, {
      to: ['ok@dest.test', 'gone@dest.test', 'ok@two.test'],
      cc: ['full@dest.test', 'spam@two.test'],
      bcc: ['odd@two.test', 'later@two.test'],
    });
    const done = await waitForEmail(p.svc, email, (e) => Object.values(e.recipients).every((s) => s !== 'pending'));
    expect(done.recipients).toEqual({
      'ok@dest.test': 'delivered',
      'gone@dest.test': 'bounced',
      'ok@two.test': 'delivered',
      'full@dest.test': 'bounced',
      'spam@two.test': 'bounced',
      'odd@two.test': 'bounced',
      'later@two.test': 'delayed',
    });
    // One transaction per domain; refused recipients are not in it.
    expect(sink.to('ok@dest.test').at(-1)!.rcptTo).toEqual(['ok@dest.test']);
    expect(sink.to('ok@two.test').at(-1)!.rcptTo).toEqual(['ok@two.test']);

    const evs = await eventsOf(p.svc, email);
    const bounce = (rcpt: string) => evs.find((e) => e.type === 'email.bounced' && (e.data.to as string[])[0] === rcpt)!.data.bounce;
    expect(bounce('gone@dest.test')).toEqual({
      type: 'Permanent',
      subType: 'NoEmail',
      message: "The recipient's mailbox does not exist.",
      diagnosticCode: ['smtp; 550 5.1.1 <gone@dest.test>: user unknown'],
    });
    expect(bounce('full@dest.test')).toMatchObject({ type: 'Permanent', subType: 'MailboxFull', diagnosticCode: ['smtp; 552 5.2.2 mailbox full'] });
    expect(bounce('spam@two.test')).toMatchObject({ type: 'Permanent', subType: 'ContentRejected' });
    expect(bounce('odd@two.test')).toMatchObject({ type: 'Permanent', subType: 'General', diagnosticCode: ['smtp; 554 rejected'] });
    // Per recipient: one delivered event each, one delivery_delayed for the deferred one.
    expect(evs.filter((e) => e.type === 'email.delivered').map((e) => e.data.to)).toEqual(expect.arrayContaining([['ok@dest.test'], ['ok@two.test']]));
    expect(evs.filter((e) => e.type === 'email.delivery_delayed').map((e) => e.data.to)).toEqual([['later@two.test']]);
    expect(evs.filter((e) => e.type === 'email.sent')).toHaveLength(1);

    // A permanent bounce suppresses the address only when its class says the address is at fault
    // (README.md, "Bounce classes and incidents"): the unknown user at once, with the class and the
    // reply; a full mailbox (once), a policy refusal and an unclassified 554 do not. The deferred
    // recipient stays queued.
    const gone = await p.api('GET', `/suppressions/${encodeURIComponent('gone@dest.test')}`);
    expect({ status: gone.status, origin: gone.body.origin, source_id: gone.body.source_id, class: gone.body.class, reply: gone.body.reply }).toEqual({
      status: 200,
      origin: 'bounce',
      source_id: email.id,
      class: 'recipient',
      reply: '550 5.1.1 <gone@dest.test>: user unknown',
    });
    for (const addr of ['full@dest.test', 'spam@two.test', 'odd@two.test', 'later@two.test'])
      expect({ addr, status: (await p.api('GET', `/suppressions/${encodeURIComponent(addr)}`)).status }).toEqual({ addr, status: 404 });
    // Each reply's class is on the attempt (docs/api.md §7.3).
    const classes = Object.fromEntries(
      ((await p.api('GET', `/emails/${email.id}`)).body.attempts as { results: { recipient: string; class: string | null }[] }[]).flatMap((a) =>
        a.results.map((r) => [r.recipient, r.class]),
      ),
    );
    expect(classes).toEqual({
      'ok@dest.test': null,
      'gone@dest.test': 'recipient',
      'full@dest.test': 'mailbox_full',
      'ok@two.test': null,
      'spam@two.test': 'policy',
      'odd@two.test': 'unknown',
      'later@two.test': 'rate',
    });
    const left = await p.svc.store.queue.entriesOf(email.team_id, email.id);
    expect(left.map((q) => ({ domain: q.domain, recipients: q.recipients, attempts: q.attempts }))).toEqual([
      { domain: 'two.test', recipients: ['later@two.test'], attempts: 1 },
    ]);
    expect(left[0]!.last_error).toBe('451 4.3.0 try again later');
    // Leave nothing queued for the next tests.
    await p.svc.store.write(async (tx) => tx.queue.remove(left[0]!));
  });

  test('a message refused after DATA bounces every recipient the server had accepted', async () => {
    sink.respondData({ code: 554, message: '5.7.1 message content rejected' }, { times: 1 });
    const email = await queueEmail(p.svc, sender, { to: ['one@dest.test', 'two@dest.test'] });
    const done = await waitForEmail(p.svc, email, settled);
    expect(done.recipients).toEqual({ 'one@dest.test': 'bounced', 'two@dest.test': 'bounced' });
    const bounces = (await eventsOf(p.svc, email)).filter((e) => e.type === 'email.bounced');
    expect(bounces.map((e) => e.data.bounce)).toEqual([
      expect.objectContaining({ type: 'Permanent', subType: 'ContentRejected', diagnosticCode: ['smtp; 554 5.7.1 message content rejected'] }),
      expect.objectContaining({ type: 'Permanent', subType: 'ContentRejected' }),
    ]);
  });
});

describe('message size (RFC 1870)', () => {
  test('a message over the SIZE the host advertises bounces MessageTooLarge without being sent', async () => {
    const small = await startSink({ size: 200 });
    const q = await startPosthorn({ 'dns.servers': [dns.address], 'delivery.mx_port': small.port, 'security.allow_private_networks': true });
    try {
      const d = await verifiedDomain(q, 'example.test');
      const email = await queueEmail(q.svc, d, { to: ['ann@dest.test'], text: 'x'.repeat(1000) });
      await waitForEmail(q.svc, email, settled);
      const bounced = (await eventsOf(q.svc, email)).find((e) => e.type === 'email.bounced')!;
      expect(bounced.data.bounce).toMatchObject({ type: 'Permanent', subType: 'MessageTooLarge' });
      expect((bounced.data.bounce as { diagnosticCode: string[] }).diagnosticCode[0]).toStartWith('smtp; 552 5.3.4 ');
      expect(small.messages).toEqual([]);
    } finally {
      await q.stop();
      await small.close();
    }
  });
});

describe('connections', () => {
  test('a session is reused for the next message to the same host, without a new connection', async () => {
    const a = await queueEmail(p.svc, sender, { to: ['reuse1@dest.test'] });
    await waitForEmail(p.svc, a, settled);
    const b = await queueEmail(p.svc, sender, { to: ['reuse2@dest.test'] });
    await waitForEmail(p.svc, b, settled);
    expect(sink.to('reuse2@dest.test')[0]!.session).toBe(sink.to('reuse1@dest.test')[0]!.session);
  });

  test('at most DEFAULT_POOL.perDestination connections to one destination host, however many messages are due', async () => {
    await p.svc.backOffice.idle('delivery');
    const before = sink.connections();
    const emails = await Promise.all(
      Array.from({ length: DEFAULT_POOL.perDestination * 3 }, (_, i) => queueEmail(p.svc, sender, { to: [`many${i}@dest.test`] })),
    );
    for (const e of emails) await waitForEmail(p.svc, e, settled);
    expect((await Promise.all(emails.map((e) => p.svc.store.emails.get(e.team_id, e.id)))).map((e) => e!.last_event)).toEqual(emails.map(() => 'delivered'));
    expect(sink.connections() - before).toBeLessThanOrEqual(DEFAULT_POOL.perDestination);
  });
});

describe('emails that can no longer be sent', () => {
  test('sending domain deleted: failed (email.failed, a webhook event), queue entry removed, nothing sent', async () => {
    const d = await verifiedDomain(p, 'deleted.test');
    const r = await p.api('DELETE', `/domains/${d.id}`);
    expect(r.status).toBe(200);
    const email = await queueEmail(p.svc, d, { to: ['ann@dest.test', 'bob@two.test'] });
    const done = await waitForEmail(p.svc, email, (e) => e.last_event === 'failed');
    expect(done.sent_at).toBeNull();
    expect((await eventsOf(p.svc, email)).map((e) => [e.type, e.webhook])).toEqual([
      ['email.queued', false],
      ['email.failed', true],
    ]);
    expect(await p.svc.store.queue.entriesOf(email.team_id, email.id)).toEqual([]);
  });

  test('sending domain no longer verified: failed', async () => {
    const d = await verifiedDomain(p, 'lapsed.test');
    await p.svc.store.write(async (tx) => tx.domains.put({ ...d, status: 'failed', record_status: { ...d.record_status, DKIM: 'failed' } }));
    const email = await queueEmail(p.svc, d, { to: ['ann@dest.test'] });
    await waitForEmail(p.svc, email, (e) => e.last_event === 'failed');
    expect(await p.svc.store.queue.entriesOf(email.team_id, email.id)).toEqual([]);
    expect(sink.to('ann@dest.test').filter((m) => m.mailFrom.endsWith('@send.lapsed.test'))).toEqual([]);
  });
});
