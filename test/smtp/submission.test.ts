// SMTP submission end to end (docs/api.md §17): nodemailer and swaks submit over STARTTLS and
// implicit TLS with an API key; the message goes through the sending core, shows up in
// GET /emails, and reaches a loopback MTA DKIM-signed with the same events as a REST send.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { simpleParser } from 'mailparser';
import type { TestDns } from '../helpers/dns';
import type { Sink } from '../helpers/sink';
import { startMailWorld, authenticateReceived, type MailWorld } from '../helpers/world';
import { verifiedDomain, waitForEmail, settled, eventTypes, eventsOf, storedEmails } from '../helpers/emails';
import { submitter, acceptedId, SmtpDialog, plainAuth, type RunningSmtp } from '../helpers/smtp';
import { MAX_MESSAGE_BYTES } from '../../src/smtp/server';
import { TestClock } from '../helpers/clock';

let world: MailWorld;
let s: RunningSmtp;
/** The services' clock: the rate limit's windows turn over when a test moves it. */
const clock = new TestClock();
let dns: TestDns;
let sink: Sink;

beforeAll(async () => {
  world = await startMailWorld({ 'delivery.retry_schedule': ['1s'] }, { smtp: true, now: clock.now });
  ({ dns, sink } = world);
  s = world.smtp!;
});
afterAll(() => world.stop());

const ref = (id: string) => ({ team_id: s.p.creds.team_id, id });
const email = async (id: string) => (await s.p.svc.store.emails.get(s.p.creds.team_id, id))!;
const delivered = (id: string) => waitForEmail(s.p.svc, ref(id), settled);
const sinkMessage = (id: string, rcpt?: string) =>
  sink.messages.find((m) => m.raw.toString().includes(`<${id}@example.test>`) && (!rcpt || m.rcptTo.includes(rcpt)));

/** The error nodemailer reports for a refused command, as `NNN x.y.z text`. */
async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return String((e as { response?: string }).response ?? e);
  }
  throw new Error('expected the server to refuse');
}

describe('submission through the sending core', () => {
  test('STARTTLS: accepted with the email id, delivered DKIM-signed, same events and GET view as a REST send', async () => {
    const t = submitter(s.starttls, s.p.apiKey);
    const info = await t.sendMail({
      from: 'Acme <hello@example.test>',
      to: 'ann@dest.test',
      subject: 'Hello over SMTP',
      html: '<p>Hi <strong>Ann</strong></p>',
      text: 'Hi Ann',
      headers: { 'X-Entity-Ref-ID': 'smtp-123' },
    });
    t.close();
    const id = acceptedId(info.response);
    await delivered(id);
    const msg = sinkMessage(id)!;
    expect(msg.mailFrom).toMatch(/^bounces\+[0-9a-f]{32}-[0-9a-f]{10}@send\.example\.test$/);

    const auth = await authenticateReceived(dns, msg);
    expect(auth.dkim.results[0].status.result).toBe('pass');
    expect(auth.dkim.results[0].signingDomain).toBe('example.test');

    const parsed = await simpleParser(msg.raw);
    expect(parsed.subject).toBe('Hello over SMTP');
    expect(parsed.messageId).toBe(`<${id}@example.test>`);
    expect(parsed.headers.get('x-entity-ref-id')).toBe('smtp-123');
    expect(parsed.text?.trim()).toBe('Hi Ann');

    // Visible like API mail, with the events of a REST send.
    const got = await s.p.api('GET', `/emails/${id}`);
    expect(got.body).toMatchObject({
      object: 'email',
      id,
      message_id: `<${id}@example.test>`,
      from: 'Acme <hello@example.test>',
      to: ['ann@dest.test'],
      subject: 'Hello over SMTP',
      html: '<p>Hi <strong>Ann</strong></p>',
      text: 'Hi Ann',
      bcc: [],
      cc: [],
      last_event: 'delivered',
    });
    const list = await s.p.api('GET', '/emails');
    expect(list.body.data.map((e: { id: string }) => e.id)).toContain(id);
    expect(await eventTypes(s.p.svc, ref(id))).toEqual(['email.queued', 'email.sent', 'email.delivered']);
    const sent = (await eventsOf(s.p.svc, ref(id))).find((e) => e.type === 'email.sent')!;
    expect(sent.data.headers).toEqual([{ name: 'X-Entity-Ref-ID', value: 'smtp-123' }]);

    // The same send through REST gives the same event sequence.
    const rest = await s.p.api('POST', '/emails', {
      body: { from: 'Acme <hello@example.test>', to: 'ann@dest.test', subject: 'Hello over REST', text: 'Hi Ann' },
    });
    await delivered(rest.body.id);
    expect(await eventTypes(s.p.svc, ref(rest.body.id))).toEqual(await eventTypes(s.p.svc, ref(id)));
  });

  test('implicit TLS: AUTH LOGIN, attachments (one inline) survive, Bcc header stripped but the bcc recipient gets it', async () => {
    const t = submitter(s.tls, s.p.apiKey, { secure: true });
    (t as unknown as { options: { authMethod: string } }).options.authMethod = 'LOGIN';
    const pdf = Buffer.from('%PDF-1.4 smtp invoice');
    const png = Buffer.from('89504e470d0a1a0a', 'hex');
    const info = await t.sendMail({
      from: 'hello@example.test',
      to: 'bob@dest.test',
      cc: 'Carol <carol@dest.test>',
      bcc: 'secret@dest.test',
      subject: 'Files',
      html: '<p>Logo: <img src="cid:logo@x"></p>',
      attachments: [
        { filename: 'invoice.pdf', content: pdf },
        { filename: 'logo.png', content: png, cid: 'logo@x' },
      ],
    });
    t.close();
    expect(info.response).toStartWith('250 2.0.0 OK ');
    const id = acceptedId(info.response);
    await delivered(id);
    const e = await email(id);
    expect(e.to).toEqual(['bob@dest.test']);
    expect(e.cc).toEqual(['Carol <carol@dest.test>']);
    expect(e.bcc).toEqual(['secret@dest.test']);
    expect(Object.keys(e.recipients).sort()).toEqual(['bob@dest.test', 'carol@dest.test', 'secret@dest.test']);

    const secret = sinkMessage(id, 'secret@dest.test')!;
    expect(secret).toBeDefined();
    for (const m of sink.messages.filter((x) => x.raw.toString().includes(`<${id}@example.test>`))) expect(m.raw.toString()).not.toMatch(/^bcc:/im);
    const parsed = await simpleParser(secret.raw, { keepCidLinks: true });
    expect(parsed.html).toContain('cid:logo@x');
    const byName = Object.fromEntries(parsed.attachments.map((a) => [a.filename, a]));
    expect(byName['invoice.pdf'].content).toEqual(pdf);
    expect(byName['logo.png'].cid).toBe('logo@x');

    const atts = await s.p.api('GET', `/emails/${id}/attachments`);
    expect(atts.body.data.map((a: { filename: string; content_disposition: string }) => [a.filename, a.content_disposition]).sort()).toEqual([
      ['invoice.pdf', 'attachment'],
      ['logo.png', 'inline'],
    ]);
  });

  test('swaks over STARTTLS with AUTH PLAIN', async () => {
    const proc = Bun.spawn(
      [
        'swaks',
        '--server',
        '127.0.0.1',
        '--port',
        String(s.starttls),
        '--tls',
        '--auth',
        'PLAIN',
        '--auth-user',
        'resend',
        '--auth-password',
        s.p.apiKey,
        '--ehlo',
        'client.test',
        '--from',
        'hello@example.test',
        '--to',
        'swaks@dest.test',
        '--header',
        'Subject: From swaks',
        '--header',
        'X-Tool: swaks',
        '--body',
        'Sent by swaks.',
      ],
      { stdout: 'pipe', stderr: 'pipe' },
    );
    const out = await new Response(proc.stdout).text();
    if ((await proc.exited) !== 0) throw new Error(`swaks failed:\n${out}\n${await new Response(proc.stderr).text()}`);
    const m = /<~\s+250 2\.0\.0 OK ([0-9a-f-]{36})/.exec(out);
    expect(m).not.toBeNull();
    const id = m![1];
    await delivered(id);
    expect(await email(id)).toMatchObject({ subject: 'From swaks', to: ['swaks@dest.test'], headers: { 'X-Tool': 'swaks' } });
    const parsed = await simpleParser(sinkMessage(id)!.raw);
    expect(parsed.text?.trim()).toBe('Sent by swaks.');
  });

  test('Resend-Idempotency-Key: replay answers the original id and sends nothing; another message with it → 554 5.7.0', async () => {
    const t = submitter(s.starttls, s.p.apiKey);
    const mail = {
      from: 'hello@example.test',
      to: 'idem@dest.test',
      subject: 'Once',
      text: 'only once',
      headers: { 'Resend-Idempotency-Key': 'smtp-welcome/1' },
    };
    const first = acceptedId((await t.sendMail(mail)).response);
    // nodemailer makes a new Message-ID and Date each time: they are not part of the message's identity.
    const again = await t.sendMail(mail);
    expect(acceptedId(again.response)).toBe(first);
    const other = await refusal(t.sendMail({ ...mail, subject: 'Twice' }));
    expect(other).toMatch(/^554 5\.7\.0 Same idempotency key used with a different request payload/);
    // The key is not passed on, and has its own scope: the same key on POST /emails is unrelated.
    await delivered(first);
    expect(sinkMessage(first)!.raw.toString()).not.toMatch(/resend-idempotency-key/i);
    expect((await email(first)).headers).toEqual({});
    const rest = await s.p.api('POST', '/emails', {
      body: { from: 'hello@example.test', to: 'idem@dest.test', subject: 'Twice', text: 'x' },
      headers: { 'idempotency-key': 'smtp-welcome/1' },
    });
    expect(rest.status).toBe(200);
    expect(rest.body.id).not.toBe(first);
    const sent = (await s.p.api('GET', '/emails?limit=100')).body.data.filter((e: { subject: string }) => e.subject === 'Once');
    expect(sent).toHaveLength(1);
    t.close();
  });

  test('sending domain and validation failures get the API messages', async () => {
    const t = submitter(s.starttls, s.p.apiKey);
    expect(await refusal(t.sendMail({ from: 'x@unverified.test', to: 'a@dest.test', subject: 's', text: 't' }))).toBe(
      '550 5.7.1 The `unverified.test` domain is not verified. Please, add and verify your domain.',
    );
    expect(await refusal(t.sendMail({ from: 'hello@example.test', to: 'a@dest.test', text: 't' }))).toBe('554 5.6.0 Missing `subject` field.');
    expect(
      await refusal(
        t.sendMail({ from: 'hello@example.test', to: 'a@dest.test', subject: 's', text: 't', headers: { 'Resend-Idempotency-Key': 'k'.repeat(257) } }),
      ),
    ).toMatch(/^554 5\.6\.0 The `Resend-Idempotency-Key` header must be between 1 and 256 characters\.$/);
    t.close();

    // A sending_access key bound to another domain.
    const other = await verifiedDomain(s.p, 'other.test');
    const key = await s.p.api('POST', '/api-keys', { body: { name: 'smtp only other', permission: 'sending_access', domain_id: other.id } });
    const bound = submitter(s.starttls, key.body.token);
    expect(await refusal(bound.sendMail({ from: 'hello@example.test', to: 'a@dest.test', subject: 's', text: 't' }))).toBe(
      '550 5.7.1 This API key is not authorized to send emails from `example.test`.',
    );
    const ok = await bound.sendMail({ from: 'hello@other.test', to: 'a@dest.test', subject: 's', text: 't' });
    expect(ok.response).toStartWith('250 2.0.0 OK ');
    bound.close();
  });

  test('the team rate limit is shared with the API: over it → 451 4.7.1', async () => {
    // A team of its own; its window is used up through the limiter the HTTP API uses, then one
    // message arrives. The clock stands still: the window cannot turn over in between.
    const team = await s.p.newTeam();
    const limit = s.p.svc.config.limits.requests_per_second;
    const c = await SmtpDialog.open(s.tls, { implicitTls: true });
    await c.command('EHLO client.test');
    expect((await c.command(`AUTH PLAIN ${plainAuth('resend', team.api_key)}`)).code).toBe(235);
    clock.stop();
    try {
      await c.command('MAIL FROM:<a@example.test>');
      await c.command('RCPT TO:<b@dest.test>');
      expect((await c.command('DATA')).code).toBe(354);
      while (s.p.svc.limiter.take(team.team_id).allowed);
      const reply = (await c.data('From: a@example.test\r\nTo: b@dest.test\r\nSubject: s\r\n\r\nbody\r\n.\r\n')).text;
      expect(reply).toBe(`451 4.7.1 Too many requests. You can only make ${limit} requests per second. Try again later.`);

      // One message counts as one API request: between two API calls in one window, `remaining`
      // drops by two (the second call and the message). The clock moves to a window not used up.
      clock.advance(1000);
      const before = Number((await s.p.api('GET', '/domains', { key: team.api_key })).headers.get('ratelimit-remaining'));
      await c.command('MAIL FROM:<a@example.test>');
      await c.command('RCPT TO:<b@dest.test>');
      await c.command('DATA');
      const r = await c.data('From: a@example.test\r\nTo: b@dest.test\r\nSubject: s\r\n\r\nbody\r\n.\r\n');
      const after = Number((await s.p.api('GET', '/domains', { key: team.api_key })).headers.get('ratelimit-remaining'));
      expect(after).toBe(before - 2);
      expect(r.text).toStartWith('550 5.7.1 The `example.test` domain is not verified.');
    } finally {
      clock.release();
    }
    c.close();
  });
});

describe('session rules', () => {
  test('EHLO: SIZE 40 MB, STARTTLS, AUTH PLAIN LOGIN only once TLS is up; AUTH before TLS → 530 5.7.0', async () => {
    const c = await SmtpDialog.open(s.starttls);
    const ehlo = await c.command('EHLO client.test');
    expect(ehlo.lines[0]).toStartWith('mx.posthorn.test');
    expect(ehlo.lines).toContain(`SIZE ${MAX_MESSAGE_BYTES}`);
    expect(ehlo.lines).toContain('STARTTLS');
    expect(ehlo.lines).toContain('ENHANCEDSTATUSCODES');
    expect(ehlo.lines.some((l) => l.startsWith('AUTH'))).toBe(false);
    expect((await c.command(`AUTH PLAIN ${plainAuth('resend', s.p.apiKey)}`)).text).toBe('530 5.7.0 Must issue a STARTTLS command first');
    expect((await c.command('AUTH LOGIN')).text).toBe('530 5.7.0 Must issue a STARTTLS command first');
    await c.startTls();
    const secured = await c.command('EHLO client.test');
    expect(secured.lines).toContain('AUTH PLAIN LOGIN');
    expect(secured.lines).not.toContain('STARTTLS');
    expect((await c.command(`AUTH PLAIN ${plainAuth('resend', s.p.apiKey)}`)).text).toBe('235 2.7.0 Authentication successful');
    c.close();
    // nodemailer told to skip STARTTLS sees no AUTH offered, so never sends the key in the clear;
    // unauthenticated, its message is inbound mail for a domain Posthorn does not receive for.
    const plain = submitter(s.starttls, s.p.apiKey, { ignoreTLS: true });
    expect(await refusal(plain.sendMail({ from: 'hello@example.test', to: 'a@dest.test', subject: 's', text: 't' }))).toBe('550 5.7.1 Relaying denied');
  });

  test('wrong username, unknown or revoked key → 535 5.7.8', async () => {
    const key = await s.p.api('POST', '/api-keys', { body: { name: 'to revoke' } });
    await s.p.api('DELETE', `/api-keys/${key.body.id}`);
    for (const [user, pass] of [
      ['resend', 're_AAAAAAAA_BBBBBBBBBBBBBBBBBBBBBBBB'],
      ['resend', 'not-a-key'],
      ['someone', s.p.apiKey],
      ['resend', key.body.token],
    ]) {
      const t = submitter(s.tls, pass, { secure: true, user });
      expect(await refusal(t.sendMail({ from: 'hello@example.test', to: 'a@dest.test', subject: 's', text: 't' }))).toBe(
        '535 5.7.8 Authentication credentials invalid',
      );
    }
  });

  test('without AUTH, relaying is refused: 550 5.7.1', async () => {
    const c = await SmtpDialog.open(s.starttls);
    await c.command('EHLO mta.sender.test');
    await c.startTls();
    await c.command('EHLO mta.sender.test');
    expect((await c.command('MAIL FROM:<spammer@elsewhere.test>')).code).toBe(250);
    expect((await c.command('RCPT TO:<victim@dest.test>')).text).toBe('550 5.7.1 Relaying denied');
    // Not even to a domain Posthorn sends for but does not receive for.
    expect((await c.command('RCPT TO:<hello@example.test>')).text).toBe('550 5.7.1 Relaying denied');
    expect((await c.command('DATA')).code).toBe(503);
    c.close();
  });

  test('a key revoked between AUTH and the end of DATA → 554 5.7.8, nothing stored', async () => {
    const { data } = await s.p.resend.apiKeys.create({ name: 'short-lived' });
    const c = await SmtpDialog.open(s.tls, { implicitTls: true });
    await c.command('EHLO client.test');
    expect((await c.command(`AUTH PLAIN ${plainAuth('resend', data!.token)}`)).code).toBe(235);
    await c.command('MAIL FROM:<a@example.test>');
    await c.command('RCPT TO:<b@dest.test>');
    expect((await c.command('DATA')).code).toBe(354);
    await s.p.resend.apiKeys.remove(data!.id);
    const before = (await storedEmails(s.p.svc, s.p.creds.team_id)).length;
    const reply = await c.data('From: a@example.test\r\nTo: b@dest.test\r\nSubject: s\r\n\r\nbody\r\n.\r\n');
    expect(reply.text).toBe('554 5.7.8 The API key used to authenticate is no longer valid');
    expect((await storedEmails(s.p.svc, s.p.creds.team_id)).length).toBe(before);
    c.close();
  });

  test('a message over 40 MB → 552 5.3.4, by the SIZE parameter and by the bytes sent', async () => {
    const c = await SmtpDialog.open(s.tls, { implicitTls: true });
    await c.command('EHLO client.test');
    await c.command(`AUTH PLAIN ${plainAuth('resend', s.p.apiKey)}`);
    expect((await c.command(`MAIL FROM:<hello@example.test> SIZE=${MAX_MESSAGE_BYTES + 1}`)).text).toMatch(/^552 5\.3\.4 /);
    // No SIZE given: the bytes themselves are counted.
    expect((await c.command('MAIL FROM:<hello@example.test>')).code).toBe(250);
    expect((await c.command('RCPT TO:<big@dest.test>')).code).toBe(250);
    expect((await c.command('DATA')).code).toBe(354);
    const line = `${'x'.repeat(998)}\r\n`;
    const body = `From: hello@example.test\r\nTo: big@dest.test\r\nSubject: big\r\n\r\n${line.repeat(Math.ceil(MAX_MESSAGE_BYTES / line.length) + 1)}.\r\n`;
    expect((await c.data(body)).text).toMatch(/^552 5\.3\.4 /);
    // The session goes on.
    expect((await c.command('NOOP')).code).toBe(250);
    c.close();

    const t = submitter(s.tls, s.p.apiKey, { secure: true });
    const big = Buffer.alloc(MAX_MESSAGE_BYTES, 'a');
    const before = (await s.p.api('GET', '/emails?limit=100')).body.data.length;
    const r = await refusal(
      t.sendMail({ from: 'hello@example.test', to: 'big@dest.test', subject: 'big', text: 'x', attachments: [{ filename: 'big.bin', content: big }] }),
    );
    expect(r).toMatch(/^552 5\.3\.4 /);
    expect((await s.p.api('GET', '/emails?limit=100')).body.data.length).toBe(before);
    t.close();
  });
});
