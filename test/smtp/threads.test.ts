// SMTP listeners on more than one thread (src/smtp/threads.ts): every port is served by the main
// thread and by a listener thread bound with SO_REUSEPORT. Both threads accept sessions; inbound
// mail a listener thread spools wakes the back office; submission and AUTH are answered as on the
// main thread; `smtp.max_connections` counts the sessions of both; a certificate swap reaches the
// listener thread; stop closes every listener.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { connect } from 'node:net';
import { X509Certificate } from 'node:crypto';
import { startPosthorn, type Running } from '../helpers/posthorn';
import { sinkCertificate } from '../helpers/sink';
import { SmtpDialog, mta, submitter, acceptedId, inboundProcessed, plainAuth } from '../helpers/smtp';
import { startSmtp, listenerThreads, type SmtpListeners } from '../../src/smtp';
import { until } from '../helpers/wait';
import { verifiedDomain } from '../helpers/emails';

async function running(overrides: Record<string, unknown> = {}): Promise<{ p: Running; smtp: SmtpListeners; stop(): Promise<void> }> {
  const p = await startPosthorn({ 'smtp.starttls_ports': [0], 'smtp.tls_ports': [0], ...overrides });
  const smtp = await startSmtp(p.svc, { threads: 2, wake: p.svc });
  return {
    p,
    smtp,
    async stop() {
      await smtp.stop();
      await p.stop();
    },
  };
}

/** Which thread accepted the sessions `work` opened (its count of accepted sessions grew). */
async function servedBy(smtp: SmtpListeners, work: () => Promise<void>): Promise<number[]> {
  const before = smtp.accepted();
  await work();
  const after = smtp.accepted();
  return after.flatMap((n, i) => (n > before[i]! ? [i] : []));
}

/** Run `work` on new connections until each thread has served at least once (bounded). */
async function onEveryThread(smtp: SmtpListeners, work: () => Promise<void>): Promise<void> {
  const seen = new Set<number>();
  for (let i = 0; i < 200 && seen.size < 2; i++) for (const t of await servedBy(smtp, work)) seen.add(t);
  expect([...seen].sort()).toEqual([0, 1]);
}

/** The certificate an implicit-TLS listener presents (read once the session has begun: its greeting). */
async function presented(port: number): Promise<string> {
  const { connect: tlsConnect } = await import('node:tls');
  return await new Promise((resolve, reject) => {
    const s = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false });
    s.once('data', () => {
      const raw = s.getPeerX509Certificate();
      s.destroy();
      raw ? resolve(raw.toString()) : reject(new Error('no certificate'));
    });
    s.on('error', reject);
  });
}

test('the number of threads: one per spare core up to four; one on one or two cores and in cluster mode', () => {
  expect(listenerThreads({ database: { url: null } } as never, 1)).toBe(1);
  expect(listenerThreads({ database: { url: null } } as never, 2)).toBe(1);
  expect(listenerThreads({ database: { url: null } } as never, 4)).toBe(3);
  expect(listenerThreads({ database: { url: null } } as never, 16)).toBe(4);
  expect(listenerThreads({ database: { url: 'postgres://db/posthorn' } } as never, 16)).toBe(1);
});

describe('two listener threads', () => {
  let s: Awaited<ReturnType<typeof running>>;
  beforeAll(async () => {
    s = await running();
    await s.p.api('POST', '/domains', { body: { name: 'inbound.test', capabilities: { receiving: 'enabled' } } });
    await verifiedDomain(s.p, 'example.test');
  });
  afterAll(() => s.stop());

  test('both threads accept sessions on both ports', async () => {
    for (const port of [s.smtp.port('starttls'), s.smtp.port('tls')])
      await onEveryThread(s.smtp, async () => {
        const c = await SmtpDialog.open(port, { implicitTls: port === s.smtp.port('tls') });
        expect((await c.command('EHLO client.test')).lines[0]).toStartWith('mx.posthorn.test');
        expect((await c.command('QUIT')).code).toBe(221);
        await c.closedByServer();
      });
    await until(() => s.smtp.sessions() === 0, 'the sessions to be counted out');
  });

  test('inbound mail spooled by either thread is stored (the back office is woken)', async () => {
    let n = 0;
    await onEveryThread(s.smtp, async () => {
      const info = await mta(s.smtp.port('starttls')).sendMail({ from: 'a@sender.test', to: `box${++n}@inbound.test`, subject: `hello ${n}`, text: 'hi' });
      expect(info.response).toBe('250 2.0.0 OK');
    });
    await inboundProcessed(s.p);
    const { data } = (await s.p.api('GET', '/emails/receiving?limit=100')).body as { data: { subject: string }[] };
    expect(data.map((e) => e.subject).sort()).toEqual(Array.from({ length: n }, (_, i) => `hello ${i + 1}`).sort());
    expect(s.smtp.bufferedBytes()).toBe(0);
  });

  test('submission and AUTH on either thread answer as on the main thread', async () => {
    await onEveryThread(s.smtp, async () => {
      const info = await submitter(s.smtp.port('tls'), s.p.apiKey, { secure: true }).sendMail({
        from: 'hello@example.test',
        to: 'ann@dest.test',
        subject: 'hi',
        text: 'hi',
      });
      const id = acceptedId(info.response);
      expect((await s.p.api('GET', `/emails/${id}`)).status).toBe(200);
    });
    // The kernel may hand several connections in a row to one thread, and five failures from one
    // address lock it out (limits.ts AUTH_POLICY): the first failure is a 535, the later ones the
    // main thread's AuthGuard answers — 535, or once locked 421 (closing) and 454 (refused).
    const replies: string[] = [];
    await onEveryThread(s.smtp, async () => {
      const c = await SmtpDialog.open(s.smtp.port('tls'), { implicitTls: true });
      await c.command('EHLO client.test');
      replies.push((await c.command(`AUTH PLAIN ${plainAuth('resend', 're_wrong')}`)).text);
      c.close();
    });
    expect(replies[0]).toBe('535 5.7.8 Authentication credentials invalid');
    for (const r of replies)
      expect(
        r === '535 5.7.8 Authentication credentials invalid' ||
          r === '421 4.7.0 Too many authentication failures; closing connection' ||
          r.startsWith('454 4.7.0 Too many authentication failures from '),
      ).toBe(true);
  });

  test('a certificate swap reaches the listener thread', async () => {
    const next = await sinkCertificate();
    const expected = new X509Certificate(next.cert).toString();
    expect(await presented(s.smtp.port('tls'))).not.toBe(expected);
    s.smtp.useCertificate(next);
    await s.smtp.settled();
    await onEveryThread(s.smtp, async () => {
      expect(await presented(s.smtp.port('tls'))).toBe(expected);
    });
  });
});

describe('the AUTH failure lockout across threads', () => {
  let s: Awaited<ReturnType<typeof running>>;
  beforeAll(async () => {
    s = await running();
  });
  afterAll(() => s.stop());

  test('failures on either thread count for the address; once locked, AUTH is refused on both', async () => {
    const from = '127.0.0.7';
    const auth = async () => {
      const c = await SmtpDialog.open(s.smtp.port('tls'), { implicitTls: true, from });
      await c.command('EHLO client.test');
      const reply = (await c.command(`AUTH PLAIN ${plainAuth('resend', 're_wrong')}`)).text;
      c.close();
      return reply;
    };
    // Five failures (one a connection, on whichever thread) lock the address out (limits.ts AUTH_POLICY).
    for (let i = 0; i < 5; i++) await auth();
    await onEveryThread(s.smtp, async () => {
      expect(await auth()).toStartWith('454 4.7.0 Too many authentication failures from 127.0.0.7');
    });
  });
});

describe('smtp.max_connections across threads', () => {
  let s: Awaited<ReturnType<typeof running>>;
  beforeAll(async () => {
    s = await running({ 'smtp.max_connections': 3 });
  });
  afterAll(() => s.stop());

  test('the sessions of both threads count; past the limit every session gets 421', async () => {
    const open: SmtpDialog[] = [];
    // Sessions until the limit is reached with at least one on each thread (a refused one is closed).
    for (let i = 0; i < 200 && (open.length < 3 || s.smtp.accepted().some((n) => n === 0)); i++) {
      if (open.length === 3) open.shift()!.close();
      await until(() => s.smtp.sessions() === open.length, 'the sessions to be counted');
      open.push(await SmtpDialog.open(s.smtp.port('starttls')));
    }
    expect(s.smtp.accepted().every((n) => n > 0)).toBe(true);
    expect(s.smtp.sessions()).toBe(3);
    // Refused on whichever thread the kernel gives the connection to.
    for (let i = 0; i < 20; i++) {
      const over = await SmtpDialog.connect(s.smtp.port('starttls'));
      expect((await over.read()).text).toBe('421 4.7.0 mx.posthorn.test Too many connections, try again later');
      expect(await over.closedByServer()).toBe(true);
    }
    expect(s.smtp.sessions()).toBe(3);
    open.shift()!.close();
    await until(() => s.smtp.sessions() === 2, 'the closed session to be counted out');
    const again = await SmtpDialog.open(s.smtp.port('starttls'));
    expect((await again.command('EHLO client.test')).code).toBe(250);
    for (const c of [...open, again]) c.close();
  });
});

test('stop closes the listeners of every thread', async () => {
  const s = await running();
  const port = s.smtp.port('starttls');
  await onEveryThread(s.smtp, async () => {
    const c = await SmtpDialog.open(port);
    c.close();
  });
  await s.smtp.stop();
  for (let i = 0; i < 20; i++) {
    const refused = await new Promise<boolean>((resolve) => {
      const c = connect({ host: '127.0.0.1', port });
      c.once('connect', () => {
        c.destroy();
        resolve(false);
      });
      c.once('error', () => resolve(true));
    });
    expect(refused).toBe(true);
  }
  await s.p.stop();
});
