// Asynchronous bounces and complaints (docs/mail.md): an email is sent and delivered to a loopback
// MTA; a report about it then arrives, without AUTH and from the null sender, at the VERP address
// it was sent from. DSNs (RFC 3464) in Postfix, Exim and Gmail shapes become email.bounced with the
// Status and Diagnostic-Code; ARF reports (RFC 5965) become email.complained; both suppress the
// address as documented. Notices, auto-replies, malformed reports and forged tags change nothing.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Sink } from '../helpers/sink';
import { waitForEmail, settled, eventsOf } from '../helpers/emails';
import { mta, inboundProcessed, type RunningSmtp } from '../helpers/smtp';
import { startMailWorld, type MailWorld } from '../helpers/world';
import type { EmailRec } from '../../src/store';

const FIXTURES = join(import.meta.dir, '..', 'fixtures', 'reports');

let world: MailWorld;
let s: RunningSmtp;
let sink: Sink;
let seq = 0;

beforeAll(async () => {
  world = await startMailWorld({ 'delivery.retry_schedule': ['1s'] }, { smtp: true });
  ({ sink } = world);
  s = world.smtp!;
});
afterAll(() => world.stop());

interface Sent {
  email: EmailRec;
  rcpt: string;
  verp: string;
}

/** Send one email through the API and wait until the sink has it; its VERP sender comes from there. */
async function sent(to: string[] = [`user${++seq}@dest.test`]): Promise<Sent> {
  const r = await s.p.api('POST', '/emails', { body: { from: 'Acme <hello@example.test>', to, subject: 'Report test', text: 'Hello.' } });
  expect(r.status).toBe(200);
  const email = await waitForEmail(s.p.svc, { team_id: s.p.creds.team_id, id: r.body.id }, settled);
  expect(email.last_event).toBe('delivered');
  const msg = sink.messages.find((m) => m.raw.toString().includes(`<${email.id}@example.test>`))!;
  return { email, rcpt: to[0], verp: msg.mailFrom };
}

function fixture(name: string, x: Sent, edit: (text: string) => string = (t) => t): Buffer {
  const text = readFileSync(join(FIXTURES, name), 'utf8')
    .replaceAll('{{VERP}}', x.verp)
    .replaceAll('{{RCPT}}', x.rcpt)
    .replaceAll('{{MESSAGE_ID}}', x.email.message_id)
    .replaceAll('{{FROM}}', x.email.from);
  return Buffer.from(edit(text).replace(/\r?\n/g, '\r\n'));
}

/** Deliver a report as the reporting MTA does: null sender, to the VERP address; wait until it is processed. */
async function report(raw: Buffer, to: string): Promise<string> {
  const t = mta(s.starttls);
  try {
    const reply = (await t.sendMail({ envelope: { from: '', to: [to] }, raw } as never)).response;
    await inboundProcessed(s.p);
    return reply;
  } finally {
    t.close();
  }
}

const current = async (x: Sent) => (await s.p.svc.store.emails.get(x.email.team_id, x.email.id))!;
const suppression = async (address: string) => {
  const r = await s.p.api('GET', `/suppressions/${encodeURIComponent(address)}`);
  return r.status === 200 ? r.body : null;
};
const bounced = async (x: Sent) => (await eventsOf(s.p.svc, x.email)).filter((e) => e.type === 'email.bounced');

/** A report that must change nothing: accepted (250), the email and the suppression list as they were. */
async function ignored(x: Sent, raw: Buffer, to = x.verp) {
  expect(await report(raw, to)).toBe('250 2.0.0 OK');
  const e = await current(x);
  expect(e.last_event).toBe('delivered');
  expect(e.recipients[x.rcpt]).toBe('delivered');
  expect((await eventsOf(s.p.svc, x.email)).map((ev) => ev.type)).toEqual(['email.queued', 'email.sent', 'email.delivered']);
  expect(await suppression(x.rcpt)).toBeNull();
}

describe('delivery status notifications (RFC 3464)', () => {
  test('Postfix, 5.1.1: Permanent NoEmail with the Diagnostic-Code; bounced and suppressed (origin bounce)', async () => {
    const x = await sent();
    expect(x.verp).toMatch(/^bounces\+[0-9a-f]{32}-[0-9a-f]{10}@send\.example\.test$/);
    expect(await report(fixture('postfix-bounce.eml', x), x.verp)).toBe('250 2.0.0 OK');
    const e = await current(x);
    expect(e.last_event).toBe('bounced');
    expect(e.recipients[x.rcpt]).toBe('bounced');
    const [ev] = await bounced(x);
    expect(ev.webhook).toBe(true);
    expect(ev.data).toMatchObject({
      email_id: x.email.id,
      to: [x.rcpt],
      from: 'Acme <hello@example.test>',
      subject: 'Report test',
      bounce: {
        type: 'Permanent',
        subType: 'NoEmail',
        message: "The recipient's mailbox does not exist.",
        diagnosticCode: [`smtp; 550 5.1.1 <${x.rcpt}>: Recipient address rejected: User unknown in local recipient table`],
      },
    });
    expect(await suppression(x.rcpt)).toMatchObject({
      object: 'suppression',
      email: x.rcpt,
      origin: 'bounce',
      source_id: x.email.id,
      // The DSN's class and Diagnostic-Code (README.md, "Bounce classes and incidents").
      class: 'recipient',
      reply: `550 5.1.1 <${x.rcpt}>: Recipient address rejected: User unknown in local recipient table`,
    });
    expect((await s.p.api('GET', `/emails/${x.email.id}`)).body.last_event).toBe('bounced');

    // The same DSN again (MTAs do resend): no second event.
    expect(await report(fixture('postfix-bounce.eml', x), x.verp)).toBe('250 2.0.0 OK');
    expect(await bounced(x)).toHaveLength(1);
  });

  test('Exim, Status 5.0.0: the sub-type comes from the Diagnostic-Code (5.1.1)', async () => {
    const x = await sent();
    await report(fixture('exim-bounce.eml', x), x.verp);
    expect((await bounced(x))[0].data.bounce).toEqual({
      type: 'Permanent',
      subType: 'NoEmail',
      message: "The recipient's mailbox does not exist.",
      diagnosticCode: [`smtp; 550 5.1.1 <${x.rcpt}>... User unknown`],
    });
    expect(await suppression(x.rcpt)).toMatchObject({ origin: 'bounce' });
  });

  test('Gmail, 5.2.2 with a multi-line diagnostic: MailboxFull', async () => {
    const x = await sent();
    await report(fixture('gmail-bounce.eml', x), x.verp);
    const b = (await bounced(x))[0].data.bounce as { type: string; subType: string; diagnosticCode: string[] };
    expect(b.type).toBe('Permanent');
    expect(b.subType).toBe('MailboxFull');
    expect(b.diagnosticCode[0]).toStartWith(
      "smtp; 552-5.2.2 The recipient's inbox is out of storage space. Please direct the recipient to 552 5.2.2 https://support.google.com/",
    );
  });

  // Found by test/mail/reports-fuzz.test.ts: mailparser gives `false` as the content type of a part
  // whose Content-Type is empty, and reading the report threw — the bounce was dropped as malformed.
  test('a part with an empty Content-Type beside the delivery-status part: still a bounce', async () => {
    const x = await sent();
    await report(
      fixture('postfix-bounce.eml', x, (t) => t.replace('Content-Type: text/plain; charset=utf-8', 'Content-Type:')),
      x.verp,
    );
    expect((await current(x)).recipients[x.rcpt]).toBe('bounced');
    expect((await bounced(x))[0].data.bounce).toMatchObject({ type: 'Permanent', subType: 'NoEmail' });
  });

  test('a Permanent DSN of the sender’s class (a block list): bounced as ever, nobody suppressed', async () => {
    const x = await sent();
    await report(
      fixture('postfix-bounce.eml', x, (t) =>
        t
          .replace('Status: 5.1.1', 'Status: 5.7.1')
          .replace(
            /Diagnostic-Code: smtp; 550 5\.1\.1 [^\n]*\n[^\n]*/,
            'Diagnostic-Code: smtp; 554 5.7.1 Service unavailable; Client host [192.0.2.81]\n    blocked using zen.spamhaus.org; https://www.spamhaus.org/query/ip/192.0.2.81',
          ),
      ),
      x.verp,
    );
    expect((await current(x)).recipients[x.rcpt]).toBe('bounced');
    expect((await bounced(x))[0].data.bounce).toMatchObject({ type: 'Permanent', subType: 'ContentRejected' });
    expect(await suppression(x.rcpt)).toBeNull();
  });

  test('a full mailbox reported once: bounced, not suppressed yet (the third within 30 days is)', async () => {
    const x = await sent();
    await report(fixture('gmail-bounce.eml', x), x.verp);
    expect((await bounced(x))[0].data.bounce).toMatchObject({ type: 'Permanent', subType: 'MailboxFull' });
    expect(await suppression(x.rcpt)).toBeNull();
  });

  test('Action: failed after 4.x.x (gave up retrying): Transient, not suppressed', async () => {
    const x = await sent();
    await report(fixture('postfix-expired.eml', x), x.verp);
    expect((await current(x)).last_event).toBe('bounced');
    expect((await bounced(x))[0].data.bounce).toMatchObject({ type: 'Transient', subType: 'General' });
    expect(await suppression(x.rcpt)).toBeNull();
  });

  test('an unclassifiable Status: Undetermined, not suppressed', async () => {
    const x = await sent();
    await report(
      fixture('postfix-bounce.eml', x, (t) => t.replace('Status: 5.1.1', 'Status: unknown')),
      x.verp,
    );
    expect((await bounced(x))[0].data.bounce).toMatchObject({ type: 'Undetermined', subType: 'Undetermined', message: 'The bounce could not be classified.' });
    expect(await suppression(x.rcpt)).toBeNull();
  });

  test('only the email recipient a DSN names: a second recipient stays delivered', async () => {
    const a = `pair${++seq}@dest.test`;
    const b = `pair${++seq}@dest.test`;
    const x = await sent([a, b]);
    await report(fixture('postfix-bounce.eml', x), x.verp);
    expect((await current(x)).recipients).toEqual({ [a]: 'bounced', [b]: 'delivered' });
    expect((await bounced(x)).map((e) => e.data.to)).toEqual([[a]]);
  });
});

describe('not bounces: accepted and dropped', () => {
  test('Action: delayed, delivered or relayed', async () => {
    const x = await sent();
    await ignored(x, fixture('postfix-delayed.eml', x));
    await ignored(
      x,
      fixture('postfix-bounce.eml', x, (t) => t.replace('Action: failed', 'Action: delivered').replace('Status: 5.1.1', 'Status: 2.0.0')),
    );
    await ignored(
      x,
      fixture('postfix-bounce.eml', x, (t) => t.replace('Action: failed', 'Action: relayed').replace('Status: 5.1.1', 'Status: 2.0.0')),
    );
  });

  test('an out-of-office auto-reply (RFC 3834)', async () => {
    const x = await sent();
    await ignored(x, fixture('vacation-auto-reply.eml', x));
  });

  test('a multipart/report without its delivery-status part', async () => {
    const x = await sent();
    await ignored(x, fixture('malformed-report.eml', x));
  });

  test('a forged VERP tag, a VERP address of another domain, and a plain address at the return-path host', async () => {
    const x = await sent();
    const forged = x.verp.replace(/([0-9a-f])@/, (_m, c: string) => `${c === '0' ? '1' : '0'}@`);
    await ignored(x, fixture('postfix-bounce.eml', { ...x, verp: forged }), forged);
    await s.p.api('POST', '/domains', { body: { name: 'other-sender.test' } });
    const elsewhere = x.verp.replace('@send.example.test', '@send.other-sender.test');
    await ignored(x, fixture('postfix-bounce.eml', { ...x, verp: elsewhere }), elsewhere);
    await ignored(x, fixture('postfix-bounce.eml', x), 'postmaster@send.example.test');
  });

  test('a DSN about an address the email was never sent to', async () => {
    const x = await sent();
    await ignored(x, fixture('postfix-bounce.eml', { ...x, rcpt: 'someone-else@dest.test' }));
    expect(await suppression('someone-else@dest.test')).toBeNull();
  });
});

describe('complaints (ARF, RFC 5965)', () => {
  test('Yahoo feedback loop, abuse: email.complained and suppression (origin complaint)', async () => {
    const x = await sent();
    expect(await report(fixture('yahoo-arf.eml', x), x.verp)).toBe('250 2.0.0 OK');
    const e = await current(x);
    expect(e.last_event).toBe('complained');
    expect(e.recipients[x.rcpt]).toBe('complained');
    const ev = (await eventsOf(s.p.svc, x.email)).filter((v) => v.type === 'email.complained');
    expect(ev).toHaveLength(1);
    expect(ev[0].webhook).toBe(true);
    expect(ev[0].data).toMatchObject({ email_id: x.email.id, to: [x.rcpt], subject: 'Report test' });
    expect(ev[0].data.bounce).toBeUndefined();
    expect(await suppression(x.rcpt)).toMatchObject({ origin: 'complaint', source_id: x.email.id });
    // Reported twice: one event.
    await report(fixture('yahoo-arf.eml', x), x.verp);
    expect((await eventsOf(s.p.svc, x.email)).filter((v) => v.type === 'email.complained')).toHaveLength(1);
  });

  test("the RFC 5965 example without Original-Rcpt-To: the email's only recipient", async () => {
    const x = await sent();
    await report(fixture('rfc5965-arf.eml', x), x.verp);
    expect((await current(x)).last_event).toBe('complained');
    expect(await suppression(x.rcpt)).toMatchObject({ origin: 'complaint' });
  });

  test('Feedback-Type not-spam and DMARC auth-failure reports are not complaints', async () => {
    const x = await sent();
    await ignored(
      x,
      fixture('yahoo-arf.eml', x, (t) => t.replace('Feedback-Type: abuse', 'Feedback-Type: not-spam')),
    );
    await ignored(
      x,
      fixture('yahoo-arf.eml', x, (t) => t.replace('Feedback-Type: abuse', 'Feedback-Type: auth-failure')),
    );
  });

  test('later sends to a suppressed address are not attempted', async () => {
    const x = await sent();
    await report(fixture('yahoo-arf.eml', x), x.verp);
    const again = await s.p.api('POST', '/emails', { body: { from: 'hello@example.test', to: x.rcpt, subject: 'Again', text: 't' } });
    const e = await waitForEmail(s.p.svc, { team_id: s.p.creds.team_id, id: again.body.id }, (m) => m.last_event !== 'queued');
    expect(e.last_event).toBe('suppressed');
  });
});
