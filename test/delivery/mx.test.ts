// Direct delivery to the recipients' MX hosts (SPEC.md §3, RFC 5321 §5.1): MX lookup through the
// test DNS, STARTTLS, DKIM (verified with mailauth against the same DNS), VERP envelope sender,
// implicit and null MX, MX preference order, per-recipient outcomes, connection reuse.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { authenticate } from 'mailauth';
import { startPosthorn, type Running } from '../helpers/posthorn';
import { startDnsServer, type TestDns } from '../helpers/dns';
import { startSink, type Sink } from '../helpers/sink';
import { verifiedDomain, queueEmail, waitForEmail, settled, eventsOf, eventTypes } from '../helpers/emails';
import { Resolver } from '../../src/dns/resolver';
import type { DomainRec } from '../../src/store';

let dns: TestDns;
let sink: Sink;
let p: Running;
let sender: DomainRec;

beforeAll(async () => {
  dns = await startDnsServer();
  sink = await startSink();
  p = await startPosthorn({ 'dns.servers': [dns.address], 'delivery.mx_port': sink.port });
  sender = await verifiedDomain(p, 'example.test', { dns });
});

afterAll(async () => {
  await p.stop();
  await sink.close();
  await dns.close();
});

/** A mailauth resolver reading the test DNS (through Posthorn's resolver: TXT strings stay per record). */
function testResolver() {
  const r = new Resolver([dns.address], 2000, 1);
  const notFound = () => Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
  return async (name: string, type: string): Promise<any> => {
    const rows = type === 'TXT' ? await r.txtStrings(name) : type === 'MX' ? await r.mx(name) : type === 'A' ? await r.a(name) : type === 'AAAA' ? await r.aaaa(name) : [];
    if (!rows.length) throw notFound();
    return rows;
  };
}

describe('MX delivery', () => {
  test('delivers to the MX host of the recipient domain, signed with DKIM, from a VERP address, over STARTTLS', async () => {
    dns.zone.set('dest.test', 'MX', [{ exchange: 'mx.dest.test', priority: 10 }]);
    dns.zone.set('mx.dest.test', 'A', ['127.0.0.1']);
    dns.zone.set('_dmarc.example.test', 'TXT', ['v=DMARC1; p=reject']);
    const email = await queueEmail(p.svc, sender, { to: ['bob@dest.test'], subject: 'Hello Bob' });
    const done = await waitForEmail(p.svc, email, settled);
    expect(done.recipients).toEqual({ 'bob@dest.test': 'delivered' });
    expect(done.last_event).toBe('delivered');
    expect(eventTypes(p.svc, email)).toEqual(['email.queued', 'email.sent', 'email.delivered']);

    const msg = sink.to('bob@dest.test').at(-1)!;
    expect(msg.rcptTo).toEqual(['bob@dest.test']);
    expect(msg.secure).toBe(true);
    expect(msg.helo).toBe('mx.posthorn.test');
    // VERP: bounces+<token>@<return path>.<domain>, decodable to this email.
    expect(msg.mailFrom).toMatch(/^bounces\+[0-9a-f]{32}-[0-9a-f]{10}@send\.example\.test$/);
    expect(p.svc.delivery.verp.resolve(msg.mailFrom)).toEqual({ team_id: email.team_id, email_id: email.id, domain_id: sender.id });

    const raw = msg.raw.toString('latin1');
    expect(raw.startsWith('DKIM-Signature: ')).toBe(true);
    expect(raw).toContain('Subject: Hello Bob');
    const res = await authenticate(msg.raw, {
      ip: '127.0.0.1',
      helo: msg.helo,
      sender: msg.mailFrom,
      mta: 'sink.test',
      resolver: testResolver(),
    });
    const sig = res.dkim.results[0]!;
    expect(sig.status.result).toBe('pass');
    expect(sig.signingDomain).toBe('example.test');
    expect(sig.selector).toBe(sender.dkim.selector);
    expect(sig.algo).toBe('rsa-sha256');
    expect(sig.format).toBe('relaxed/relaxed');
    expect(res.spf && res.spf.status.result).toBe('pass');
    expect(res.dmarc && res.dmarc.status.result).toBe('pass');
  });
});
