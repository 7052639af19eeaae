// What keeps one SMTP client from hurting the others (docs/mail.md §4, "Limits that protect the
// other clients"): AUTH failure limits per client address, the session cap of
// `smtp.max_connections`, and the refusal of bare CR/LF line endings (RFC 5321 §2.3.8) in commands
// and in DATA. Another client is another loopback address.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { startPosthornSmtp, inboundProcessed, SmtpDialog, plainAuth, type RunningSmtp } from '../helpers/smtp';
import { LineEndingCheck } from '../../src/smtp/line-endings';
import { AuthGuard, AUTH_POLICY } from '../../src/smtp/limits';
import { SmtpReply } from '../../src/smtp/replies';
import { clientKey } from '../../src/limits/failures';
import { captureLog } from '../helpers/log';
import { until } from '../helpers/wait';

describe('AUTH failure limits per client address', () => {
  let s: RunningSmtp;
  beforeAll(async () => {
    s = await startPosthornSmtp();
  });
  afterAll(() => s.stop());

  const tryAuth = async (c: SmtpDialog, key: string) => {
    await c.command('EHLO client.test');
    return c.command(`AUTH PLAIN ${plainAuth('resend', key)}`);
  };

  test('a connection is closed after three failures; five from one address lock AUTH for it, not for others', async () => {
    const lines = await captureLog(async () => {
      // Three wrong keys on one connection: two 535s, then 421 and the connection is closed.
      const a = await SmtpDialog.open(s.tls, { implicitTls: true });
      expect((await tryAuth(a, 're_wrong_1')).text).toBe('535 5.7.8 Authentication credentials invalid');
      expect((await a.command(`AUTH PLAIN ${plainAuth('resend', 're_wrong_2')}`)).text).toBe('535 5.7.8 Authentication credentials invalid');
      expect((await a.command(`AUTH PLAIN ${plainAuth('resend', 're_wrong_3')}`)).text).toBe('421 4.7.0 Too many authentication failures; closing connection');
      expect(await a.closedByServer()).toBe(true);

      // A fourth failure waits before its answer; the fifth locks the address out and closes.
      const b = await SmtpDialog.open(s.tls, { implicitTls: true });
      const started = Date.now();
      expect((await tryAuth(b, 're_wrong_4')).code).toBe(535);
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
      expect((await b.command(`AUTH PLAIN ${plainAuth('resend', 're_wrong_5')}`)).text).toBe('421 4.7.0 Too many authentication failures; closing connection');
      expect(await b.closedByServer()).toBe(true);

      // Locked: even the right key is not looked at (454, RFC 4954 §6); mail without AUTH still flows.
      const c = await SmtpDialog.open(s.tls, { implicitTls: true });
      expect((await tryAuth(c, s.p.apiKey)).text).toMatch(/^454 4\.7\.0 Too many authentication failures from 127\.0\.0\.1; try again in \d+ seconds$/);
      expect((await c.command('MAIL FROM:<someone@sender.test>')).code).toBe(250);
      c.close();

      // Another client is not slowed or locked.
      const d = await SmtpDialog.open(s.tls, { implicitTls: true, from: '127.0.0.2' });
      expect((await tryAuth(d, s.p.apiKey)).text).toBe('235 2.7.0 Authentication successful');
      d.close();
    });
    const failed = lines.filter((l) => l.event === 'smtp.auth_failed');
    expect(failed.map((l) => l.failures)).toEqual([1, 2, 3, 4, 5]);
    expect(failed.every((l) => l.ip === '127.0.0.1')).toBe(true);
    expect(failed[4]!.locked_ms).toBe(AUTH_POLICY.lockout);
    expect(lines.some((l) => l.event === 'smtp.auth_refused' && l.ip === '127.0.0.1')).toBe(true);
  }, 30_000);

  test('the lockout ends, and doubles with the next failure (clock of the guard)', () => {
    let now = 1_000_000;
    const guard = new AuthGuard(() => now);
    const refused = new SmtpReply(535, '5.7.8', 'Authentication credentials invalid');
    for (let i = 1; i <= 5; i++) guard.failed('192.0.2.7', `s${i}`, refused);
    expect(guard.admit('192.0.2.7', 'x').ok).toBe(false);
    // Another address, and the same address's IPv4-mapped IPv6 form, are told apart correctly.
    expect(guard.admit('192.0.2.8', 'x').ok).toBe(true);
    expect(guard.admit('::ffff:192.0.2.7', 'y').ok).toBe(false);
    now += AUTH_POLICY.lockout;
    expect(guard.admit('192.0.2.7', 'z').ok).toBe(true);
    const again = guard.failed('192.0.2.7', 'z', refused);
    expect(again.reply.responseCode).toBe(421);
    now += AUTH_POLICY.lockout;
    expect(guard.admit('192.0.2.7', 'w').ok).toBe(false);
    now += AUTH_POLICY.lockout;
    expect(guard.admit('192.0.2.7', 'w2').ok).toBe(true);
  });

  test('IPv6 clients are counted by their /64', () => {
    expect(clientKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8:1:2:bbbb:cccc:dddd:eeee')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientKey('::1')).toBe('0:0:0:0::/64');
    expect(clientKey('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(clientKey('203.0.113.9')).toBe('203.0.113.9');
  });
});

describe('smtp.max_connections', () => {
  let s: RunningSmtp;
  beforeAll(async () => {
    s = await startPosthornSmtp({ 'smtp.max_connections': 3 });
  });
  afterAll(() => s.stop());

  test('past the limit a session gets 421 4.7.0 at once and is closed; a freed place is taken again', async () => {
    // The limit counts across listeners: two STARTTLS sessions and one implicit-TLS session.
    const open = [await SmtpDialog.open(s.starttls), await SmtpDialog.open(s.starttls), await SmtpDialog.open(s.tls, { implicitTls: true })];
    expect(s.smtp.sessions()).toBe(3);
    for (const port of [s.starttls, s.tls]) {
      const over = await SmtpDialog.connect(port, { implicitTls: port === s.tls });
      const started = Date.now();
      expect((await over.read()).text).toBe('421 4.7.0 mx.posthorn.test Too many connections, try again later');
      // At once: not after smtp-server's early-talker pause or any timeout.
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(await over.closedByServer()).toBe(true);
    }
    open[0]!.close();
    await until(() => s.smtp.sessions() <= 2, 'the closed session to be counted out', 1_000);
    const again = await SmtpDialog.open(s.starttls);
    expect((await again.command('EHLO client.test')).code).toBe(250);
    for (const c of [...open, again]) c.close();
  });
});

describe('bare CR and LF (RFC 5321 §2.3.8)', () => {
  let s: RunningSmtp;
  let lenient: RunningSmtp;
  beforeAll(async () => {
    s = await startPosthornSmtp();
    lenient = await startPosthornSmtp({ 'smtp.allow_bare_newlines': true });
    for (const p of [s.p, lenient.p]) await p.api('POST', '/domains', { body: { name: 'inbound.test', capabilities: { receiving: 'enabled' } } });
  });
  afterAll(async () => {
    await s.stop();
    await lenient.stop();
  });

  const received = async (r: RunningSmtp) => {
    await inboundProcessed(r.p);
    return (await r.p.api('GET', '/emails/receiving')).body.data as { subject: string }[];
  };

  async function inData(r: RunningSmtp, body: string) {
    const c = await SmtpDialog.open(r.starttls);
    await c.command('EHLO mta.sender.test');
    await c.command('MAIL FROM:<zoe@sender.test>');
    await c.command('RCPT TO:<support@inbound.test>');
    expect((await c.command('DATA')).code).toBe(354);
    return { c, reply: await c.data(body) };
  }

  const BARE = '521 5.5.2 Bare <LF> received: lines must end with <CR><LF> (RFC 5321 §2.3.8)';

  test('a bare LF in a command: 521 5.5.2 and the connection closed; the command after it never runs', async () => {
    const c = await SmtpDialog.open(s.starttls);
    expect((await c.data('EHLO client.test\nMAIL FROM:<a@sender.test>\r\n')).text).toBe(BARE);
    expect(await c.closedByServer()).toBe(true);
  });

  test('a bare CR in a command is refused the same way', async () => {
    const c = await SmtpDialog.open(s.starttls);
    expect((await c.data('EHLO client\r.test\r\n')).text).toBe('521 5.5.2 Bare <CR> received: lines must end with <CR><LF> (RFC 5321 §2.3.8)');
    expect(await c.closedByServer()).toBe(true);
  });

  test('smuggling in DATA (`\\n.\\n` and friends): refused, nothing stored, no second message', async () => {
    const smuggled = [
      'Subject: first\r\n\r\nhello\n.\nMAIL FROM:<x@sender.test>\r\nRCPT TO:<support@inbound.test>\r\nDATA\r\nSubject: smuggled\r\n\r\nx\r\n.\r\n',
      'Subject: first\r\n\r\nhello\r\n.\nMAIL FROM:<x@sender.test>\r\n.\r\n',
      'Subject: first\r\n\r\nhello\n.\r\nMAIL FROM:<x@sender.test>\r\n.\r\n',
      'Subject: first\r\n\r\nhello\r.\r\nMAIL FROM:<x@sender.test>\r\n.\r\n',
    ];
    for (const body of smuggled) {
      const { c, reply } = await inData(s, body);
      expect(reply.text).toMatch(/^521 5\.5\.2 Bare <(LF|CR)> received/);
      expect(await c.closedByServer()).toBe(true);
    }
    expect(await received(s)).toEqual([]);
    expect(await s.p.svc.store.inboundSpool.counts()).toEqual({ waiting: 0, failed: 0 });
    // The bytes of the refused messages were given back to the shared budget.
    expect(s.smtp.bufferedBytes()).toBe(0);
  });

  test('a client gone mid-DATA leaves no bytes counted against the shared budget', async () => {
    const c = await SmtpDialog.open(s.starttls);
    await c.command('EHLO mta.sender.test');
    await c.command('MAIL FROM:<zoe@sender.test>');
    await c.command('RCPT TO:<support@inbound.test>');
    expect((await c.command('DATA')).code).toBe(354);
    c.write(`Subject: gone\r\n\r\n${'x'.repeat(70)}\r\n`.repeat(2000));
    await until(() => s.smtp.bufferedBytes() > 0, 'the bytes to be counted', 1_000);
    expect(s.smtp.bufferedBytes()).toBeGreaterThan(0);
    c.close();
    await until(() => s.smtp.bufferedBytes() === 0, 'the bytes to be given back', 1_000);
    expect(s.smtp.bufferedBytes()).toBe(0);
  });

  test('CRLF split across packets anywhere is fine: the message is received', async () => {
    const c = await SmtpDialog.open(s.starttls);
    await c.command('EHLO mta.sender.test');
    await c.command('MAIL FROM:<zoe@sender.test>');
    await c.command('RCPT TO:<support@inbound.test>');
    expect((await c.command('DATA')).code).toBe(354);
    const body = 'Subject: split\r\n\r\nline one\r\nline two\r\n.\r\n';
    for (const part of body.split(/(?<=\r)/)) {
      c.write(part);
      await new Promise((r) => setTimeout(r, 5));
    }
    expect((await c.read()).code).toBe(250);
    c.close();
    expect((await received(s)).map((e) => e.subject)).toEqual(['split']);
  });

  test('with smtp.allow_bare_newlines a legacy sender is served: one message, nothing smuggled', async () => {
    const { c, reply } = await inData(lenient, 'Subject: legacy\n\nhello\n.\nMAIL FROM:<x@sender.test>\r\n.\r\n');
    expect(reply.code).toBe(250);
    c.close();
    expect((await received(lenient)).map((e) => e.subject)).toEqual(['legacy']);
  });

  test('the check sees a byte stream, however it is cut', () => {
    const clean = Buffer.from('EHLO a\r\nMAIL FROM:<b>\r\n\r\n');
    for (let cut = 0; cut <= clean.length; cut++) {
      const check = new LineEndingCheck();
      expect([check.scan(clean.subarray(0, cut)), check.scan(clean.subarray(cut))]).toEqual([null, null]);
    }
    const scan = (...parts: string[]) => {
      const check = new LineEndingCheck();
      for (const p of parts) {
        const r = check.scan(Buffer.from(p));
        if (r) return r;
      }
      return null;
    };
    expect(scan('a\n')).toBe('LF');
    expect(scan('\n')).toBe('LF');
    expect(scan('a\r', 'b')).toBe('CR');
    expect(scan('a\r', '\n')).toBe(null);
    expect(scan('a\r\r\n')).toBe('CR');
    expect(scan('a\r\n', '\nb')).toBe('LF');
    expect(scan('')).toBe(null);
  });
});
