// Relay mode (`delivery.mode = relay`, docs/mail.md): every message goes to the smarthost of
// `delivery.relay_url` — smtp:// with STARTTLS when offered, smtps:// implicit TLS, AUTH with the
// URL's user:pass — without MX lookups, with the same per-recipient handling as direct delivery.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { startPosthorn, type Running } from '../helpers/posthorn';
import { startDnsServer, type TestDns } from '../helpers/dns';
import { startSink, type Sink } from '../helpers/sink';
import { verifiedDomain, queueEmail, waitForEmail, settled, eventsOf } from '../helpers/emails';

let dns: TestDns;
beforeAll(async () => {
  dns = await startDnsServer();
});
afterAll(() => dns.close());

describe('smtp:// relay with STARTTLS and AUTH', () => {
  let relay: Sink;
  let p: Running;
  beforeAll(async () => {
    relay = await startSink({ tls: 'starttls', auth: { user: 'posthorn', pass: 'p@ss:word' } });
    p = await startPosthorn({
      'dns.servers': [dns.address],
      'delivery.mode': 'relay',
      'delivery.relay_url': `smtp://posthorn:${encodeURIComponent('p@ss:word')}@127.0.0.1:${relay.port}`,
    });
  });
  afterAll(async () => {
    await p.stop();
    await relay.close();
  });

  test('mail for any domain goes to the relay, authenticated over TLS, with no MX lookup', async () => {
    const sender = await verifiedDomain(p, 'example.test');
    const email = await queueEmail(p.svc, sender, { to: ['ann@far.test', 'bob@away.test'] });
    const done = await waitForEmail(p.svc, email, settled);
    expect(done.recipients).toEqual({ 'ann@far.test': 'delivered', 'bob@away.test': 'delivered' });
    for (const rcpt of ['ann@far.test', 'bob@away.test']) {
      const [msg] = relay.to(rcpt);
      expect(msg).toMatchObject({ user: 'posthorn', secure: true, rcptTo: [rcpt] });
      expect(msg!.mailFrom).toEndWith('@send.example.test');
      expect(msg!.raw.toString('latin1')).toStartWith('DKIM-Signature: ');
    }
    expect(dns.queries.filter((q) => q.name.endsWith('far.test') || q.name.endsWith('away.test'))).toEqual([]);
  });

  test('lines that begin with a dot arrive as written (RFC 5321 §4.5.2), sent in one write or streamed in slices', async () => {
    const sender = await verifiedDomain(p, 'dots.test');
    const dots = '.hidden\n.\n..two dots\nend\n';
    // 64 KB and more is streamed in slices (delivery/smtp-client.ts); less goes in one write with the end of data.
    for (const [rcpt, text] of [
      ['small@far.test', dots],
      ['large@far.test', `${'a line of padding\n'.repeat(5000)}${dots}`],
    ] as const) {
      const email = await queueEmail(p.svc, sender, { to: [rcpt], text });
      expect((await waitForEmail(p.svc, email, settled)).recipients).toEqual({ [rcpt]: 'delivered' });
      const raw = relay.to(rcpt)[0]!.raw.toString('latin1');
      expect(raw).toEndWith('\r\n.hidden\r\n.\r\n..two dots\r\nend\r\n');
      expect(raw.length > 64 * 1024).toBe(rcpt === 'large@far.test');
    }
  });

  test('the relay refusing a recipient: bounced Permanent and suppressed, like direct delivery', async () => {
    const sender = await verifiedDomain(p, 'other.test');
    relay.respond('nobody@far.test', { code: 550, message: '5.1.1 no such user here' });
    const email = await queueEmail(p.svc, sender, { to: ['nobody@far.test'] });
    await waitForEmail(p.svc, email, settled);
    const bounced = (await eventsOf(p.svc, email)).find((e) => e.type === 'email.bounced')!;
    expect(bounced.data.bounce).toMatchObject({ type: 'Permanent', subType: 'NoEmail', diagnosticCode: ['smtp; 550 5.1.1 no such user here'] });
    expect((await p.api('GET', `/suppressions/${encodeURIComponent('nobody@far.test')}`)).status).toBe(200);
  });
});

describe('smtps:// relay (implicit TLS)', () => {
  test('delivers over TLS from the first byte', async () => {
    const relay = await startSink({ tls: 'implicit', auth: { user: 'u', pass: 'p' } });
    const p = await startPosthorn({ 'delivery.mode': 'relay', 'delivery.relay_url': `smtps://u:p@127.0.0.1:${relay.port}` });
    try {
      const sender = await verifiedDomain(p, 'example.test');
      const email = await queueEmail(p.svc, sender, { to: ['ann@far.test'] });
      expect((await waitForEmail(p.svc, email, settled)).recipients).toEqual({ 'ann@far.test': 'delivered' });
      expect(relay.to('ann@far.test')[0]).toMatchObject({ user: 'u', secure: true });
    } finally {
      await p.stop();
      await relay.close();
    }
  });
});

describe('relay credentials refused', () => {
  test('a failed AUTH is temporary: delayed, nothing bounced', async () => {
    const relay = await startSink({ tls: 'starttls', auth: { user: 'u', pass: 'right' } });
    const p = await startPosthorn({ 'delivery.mode': 'relay', 'delivery.relay_url': `smtp://u:wrong@127.0.0.1:${relay.port}` });
    try {
      const sender = await verifiedDomain(p, 'example.test');
      const email = await queueEmail(p.svc, sender, { to: ['ann@far.test'] });
      await waitForEmail(p.svc, email, (e) => e.recipients['ann@far.test'] === 'delayed');
      expect((await p.svc.store.queue.entriesOf(email.team_id, email.id))[0]!.last_error).toMatch(
        /^451 4\.7\.0 127\.0\.0\.1\[127\.0\.0\.1\]:\d+: authentication failed \(535 5\.7\.8/,
      );
      expect(relay.messages).toEqual([]);
    } finally {
      await p.stop();
      await relay.close();
    }
  });
});
