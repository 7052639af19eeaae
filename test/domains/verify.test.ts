// Domain verification against a real authoritative DNS server on loopback (test/helpers/dns.ts):
// the records Posthorn asks for, published (or not, or wrongly) in the zone, and the statuses of
// docs/api.md §9.8 that follow. Everything goes through the official SDK except the re-checks the
// scheduler would run (`svc.domains.check` + `idle()`).
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { promises as nodeDns } from 'node:dns';
import { startDnsServer, splitTxt, type TestDns } from '../helpers/dns';
import { startPosthorn, type Running } from '../helpers/posthorn';
import { until } from '../helpers/wait';
import { Resolver, DnsError } from '../../src/dns/resolver';
import { DomainVerifier, VERIFY_WINDOW_MS } from '../../src/domains/verify';

const SMTP_HOST = 'mx.posthorn.test';

let dns: TestDns;
let p: Running;
let seq = 0;
const uniq = (label: string) => `${label}-${process.pid}-${seq++}.test`;

type DnsRecord = { record: string; name: string; type: string; value: string; status: string; priority?: number };
type Domain = { id: string; name: string; status: string; records: DnsRecord[]; recommended_records: DnsRecord[] };

/** Every record a domain lists: the required ones, then the recommended DMARC (docs/api.md §9.7). */
const all = (d: Domain) => [...d.records, ...d.recommended_records];

beforeAll(async () => {
  dns = await startDnsServer();
  p = await startPosthorn({ 'dns.servers': [dns.address], public_url: 'https://track.posthorn.test' });
});

afterAll(async () => {
  await p?.stop();
  await dns?.close();
});

async function create(opts: Record<string, unknown> = {}): Promise<Domain> {
  const { data, error } = await p.resend.domains.create({ name: uniq('verify'), ...opts } as never);
  expect(error).toBeNull();
  return data as unknown as Domain;
}

async function get(id: string): Promise<Domain> {
  const { data, error } = await p.resend.domains.get(id);
  expect(error).toBeNull();
  return data as unknown as Domain;
}

/** POST /domains/{id}/verify, then poll GET until the status is no longer `pending` (bounded). */
async function verifyAndSettle(id: string): Promise<Domain> {
  const { data, error } = await p.resend.domains.verify(id);
  expect(error).toBeNull();
  expect(data).toEqual({ object: 'domain', id });
  return until(
    async () => {
      const d = await get(id);
      return d.status !== 'pending' && d;
    },
    `domain ${id} to leave pending`,
    10_000,
  );
}

/** POST verify and wait for the background check to finish (for outcomes that stay pending). */
async function verifyAndWait(id: string): Promise<Domain> {
  const { error } = await p.resend.domains.verify(id);
  expect(error).toBeNull();
  await p.svc.domains.idle();
  return get(id);
}

/** What the scheduler does: re-check now. */
async function recheck(id: string): Promise<Domain> {
  await p.svc.domains.check(p.creds.team_id, id);
  await p.svc.domains.idle();
  return get(id);
}

const rec = (d: Domain, record: string, type?: string) => {
  const r = all(d).find((x) => x.record === record && (!type || x.type === type));
  if (!r) throw new Error(`no ${record} ${type ?? ''} record`);
  return r;
};
const statuses = (d: Domain) => Object.fromEntries(all(d).map((r) => [`${r.record}:${r.type}`, r.status]));

describe('test DNS server and Posthorn resolver', () => {
  test('long multi-string TXT records keep their record boundaries', async () => {
    const key = `v=DKIM1; k=rsa; p=${'A'.repeat(392)}B`;
    const name = `posthorn._domainkey.${uniq('txt')}`;
    dns.zone.set(name, 'TXT', [key, ['abc', 'def'], 'short']);
    const r = new Resolver([dns.address]);
    expect(await r.txtStrings(name)).toEqual([splitTxt(key), ['abc', 'def'], ['short']]);
    expect(splitTxt(key).map((s) => s.length)).toEqual([255, key.length - 255]);
    expect(await r.txt(name)).toEqual([key, 'abcdef', 'short']);
    // Bun's own node:dns resolveTxt flattens the strings (oven-sh/bun#21370) — which is why the
    // Resolver queries TXT itself — but the bytes arrive, in order.
    const raw = new nodeDns.Resolver();
    raw.setServers([dns.address]);
    expect((await raw.resolveTxt(name)).flat().join('')).toBe(`${key}abcdefshort`);
  });

  test('answers too large for UDP are retried over TCP', async () => {
    const name = uniq('big');
    const records = Array.from({ length: 8 }, (_, i) => `record-${i}-${'x'.repeat(300)}`);
    dns.zone.set(name, 'TXT', records);
    const before = dns.queries.length;
    expect(await new Resolver([dns.address]).txt(name)).toEqual(records);
    const seen = dns.queries.slice(before).filter((q) => q.name === name);
    expect(seen.map((q) => q.transport)).toEqual(['udp', 'tcp']);
  });

  test('a server without EDNS (FORMERR) is asked again without it', async () => {
    const name = uniq('noedns');
    const key = `v=DKIM1; k=rsa; p=${'K'.repeat(392)}`;
    dns.zone.set(name, 'TXT', [key, 'x'.repeat(200)]); // > 512 bytes: truncated without EDNS
    dns.zone.set(name, 'MX', [{ exchange: 'mx.example.test', priority: 10 }]);
    dns.setEdns(false);
    try {
      const before = dns.queries.length;
      const r = new Resolver([dns.address], 1000, 1);
      expect(await r.txt(name)).toEqual([key, 'x'.repeat(200)]);
      expect(dns.queries.slice(before).map((q) => q.transport)).toEqual(['udp', 'udp', 'tcp']);
      expect(await r.mx(name)).toEqual([{ exchange: 'mx.example.test', priority: 10 }]);
    } finally {
      dns.setEdns(true);
    }
  });

  test('MX, A, AAAA, CNAME through node:dns; NXDOMAIN and NODATA are "no records"', async () => {
    const base = uniq('types');
    dns.zone.set(base, 'MX', [
      { exchange: 'mx2.example.test', priority: 20 },
      { exchange: 'mx1.example.test', priority: 10 },
    ]);
    dns.zone.set(`a.${base}`, 'A', ['127.0.0.7']);
    dns.zone.set(`a.${base}`, 'AAAA', ['::1']);
    dns.zone.set(`c.${base}`, 'CNAME', [`a.${base}`]);
    dns.zone.set(`deep.under.${base}`, 'TXT', ['x']);
    const r = new Resolver([dns.address]);
    expect((await r.mx(base)).sort((x, y) => x.priority - y.priority)).toEqual([
      { exchange: 'mx1.example.test', priority: 10 },
      { exchange: 'mx2.example.test', priority: 20 },
    ]);
    expect(await r.a(`a.${base}`)).toEqual(['127.0.0.7']);
    expect(await r.aaaa(`a.${base}`)).toEqual(['::1']);
    expect(await r.cname(`c.${base}`)).toEqual([`a.${base}`]);
    expect(await r.a(`c.${base}`)).toEqual(['127.0.0.7']); // chased inside the zone
    expect(await r.mx(`a.${base}`)).toEqual([]); // NODATA
    expect(await r.txt(`under.${base}`)).toEqual([]); // empty non-terminal: NODATA
    expect(await r.txt(`nope.${base}`)).toEqual([]); // NXDOMAIN
    expect(await r.mx(`nope.${base}`)).toEqual([]);
    // Changes are visible at once (TTL 0, nothing cached).
    dns.zone.set(`a.${base}`, 'A', ['127.0.0.8']);
    expect(await r.a(`a.${base}`)).toEqual(['127.0.0.8']);
    dns.zone.clear(`a.${base}`, 'A');
    expect(await r.a(`a.${base}`)).toEqual([]);
  });

  test('server failures are errors, not "no records"', async () => {
    const name = uniq('fail');
    dns.zone.set(name, 'TXT', ['v=spf1 -all']);
    dns.zone.set(name, 'MX', [{ exchange: 'mx.example.test', priority: 10 }]);
    const r = new Resolver([dns.address], 200, 1);
    dns.zone.fail(name, 'SERVFAIL');
    await expect(r.txt(name)).rejects.toMatchObject({ code: 'ESERVFAIL' });
    await expect(r.mx(name)).rejects.toBeInstanceOf(DnsError);
    dns.zone.fail(name, 'REFUSED');
    await expect(r.txt(name)).rejects.toMatchObject({ code: 'EREFUSED' });
    dns.zone.fail(name, 'DROP');
    await expect(r.txt(name)).rejects.toMatchObject({ code: 'ETIMEOUT' });
    await expect(r.mx(name)).rejects.toBeInstanceOf(DnsError);
    dns.zone.fail(name, null);
    expect(await r.txt(name)).toEqual(['v=spf1 -all']);
    // A server that is not there at all.
    const gone = await startDnsServer();
    await gone.close();
    const r2 = new Resolver([gone.address], 200, 1);
    await expect(r2.txt(name)).rejects.toBeInstanceOf(DnsError);
    await expect(r2.mx(name)).rejects.toBeInstanceOf(DnsError);
  });
});

describe('domain verification', () => {
  test('all records published → verified', async () => {
    const d = await create();
    expect(d.status).toBe('not_started');
    dns.zone.publish(d.name, all(d));
    const v = await verifyAndSettle(d.id);
    expect(v.status).toBe('verified');
    expect(statuses(v)).toEqual({ 'SPF:MX': 'verified', 'SPF:TXT': 'verified', 'DKIM:TXT': 'verified', 'DMARC:TXT': 'verified' });
    // The DKIM key (> 255 bytes) went out as several character-strings of one record.
    expect(splitTxt(rec(d, 'DKIM').value).length).toBeGreaterThan(1);
    // The list shows it too.
    const { data } = await p.resend.domains.list();
    expect(data!.data.find((x) => x.id === d.id)!.status).toBe('verified');
  });

  test('DKIM record split at arbitrary points, with v= k= h= tags and folding whitespace', async () => {
    const d = await create();
    const key = rec(d, 'DKIM').value.slice(2);
    // As opendkim-genkey writes it for a zone file: tags first, then the key in ~250-byte pieces.
    const pieces = ['v=DKIM1; h=sha256; k=rsa; ', `p=${key.slice(0, 200)}`, ` ${key.slice(200, 390)}`, key.slice(390)];
    dns.zone.publish(d.name, all(d), (r) => r.record !== 'DKIM');
    dns.zone.set(`posthorn._domainkey.${d.name}`, 'TXT', [pieces]);
    expect((await verifyAndSettle(d.id)).status).toBe('verified');
  });

  test('DKIM with another key, a revoked key or k=ed25519 → failed', async () => {
    const other = await create();
    for (const value of [other.records.find((r) => r.record === 'DKIM')!.value, 'v=DKIM1; p=', null]) {
      const d = await create();
      dns.zone.publish(d.name, all(d), (r) => r.record !== 'DKIM');
      const ours = rec(d, 'DKIM').value;
      dns.zone.set(`posthorn._domainkey.${d.name}`, 'TXT', [value ?? `v=DKIM1; k=ed25519; ${ours}`]);
      const v = await verifyAndSettle(d.id);
      expect(rec(v, 'DKIM').status).toBe('failed');
      expect(v.status).toBe('failed');
    }
  });

  test('missing DKIM → record and domain stay pending', async () => {
    const d = await create();
    dns.zone.publish(d.name, all(d), (r) => r.record !== 'DKIM');
    const v = await verifyAndWait(d.id);
    expect(v.status).toBe('pending');
    expect(statuses(v)).toEqual({ 'SPF:MX': 'verified', 'SPF:TXT': 'verified', 'DKIM:TXT': 'pending', 'DMARC:TXT': 'verified' });
    // Published later, the next check (the scheduler's) verifies it.
    dns.zone.publish(d.name, all(d), (r) => r.record === 'DKIM');
    expect((await recheck(d.id)).status).toBe('verified');
  });

  test('nothing published → pending; DMARC and Tracking never decide the status', async () => {
    const d = await create({ trackingSubdomain: 'links' });
    expect(rec(d, 'Tracking')).toMatchObject({ type: 'CNAME', name: 'links', value: 'track.posthorn.test' });
    let v = await verifyAndWait(d.id);
    expect(v.status).toBe('pending');
    expect(new Set(all(v).map((r) => r.status))).toEqual(new Set(['pending']));
    dns.zone.publish(d.name, all(d), (r) => r.record === 'SPF' || r.record === 'DKIM');
    v = await recheck(d.id);
    expect(v.status).toBe('verified');
    expect(rec(v, 'DMARC').status).toBe('pending');
    expect(rec(v, 'Tracking').status).toBe('pending');
    dns.zone.publish(d.name, all(d), (r) => r.record === 'Tracking');
    v = await recheck(d.id);
    expect(rec(v, 'Tracking').status).toBe('verified');
    dns.zone.set(`links.${d.name}`, 'CNAME', ['elsewhere.example.test']);
    v = await recheck(d.id);
    expect(v.status).toBe('verified');
  });

  test("SPF without Posthorn's host → SPF record failed, domain failed", async () => {
    const d = await create();
    dns.zone.publish(d.name, all(d), (r) => !(r.record === 'SPF' && r.type === 'TXT'));
    dns.zone.set(`send.${d.name}`, 'TXT', ['v=spf1 include:_spf.mail.example.test ~all']);
    const v = await verifyAndSettle(d.id);
    expect(rec(v, 'SPF', 'TXT').status).toBe('failed');
    expect(rec(v, 'SPF', 'MX').status).toBe('verified');
    expect(rec(v, 'DKIM').status).toBe('verified');
    expect(v.status).toBe('failed');
    // Fixed and verified again.
    dns.zone.clear(`send.${d.name}`, 'TXT');
    dns.zone.publish(d.name, all(d), (r) => r.record === 'SPF' && r.type === 'TXT');
    expect((await verifyAndSettle(d.id)).status).toBe('verified');
  });

  test('SPF MX pointing elsewhere → failed', async () => {
    const d = await create();
    dns.zone.publish(d.name, all(d), (r) => !(r.record === 'SPF' && r.type === 'MX'));
    dns.zone.set(`send.${d.name}`, 'MX', [{ exchange: 'feedback-smtp.example.test', priority: 10 }]);
    const v = await verifyAndSettle(d.id);
    expect(rec(v, 'SPF', 'MX').status).toBe('failed');
    expect(v.status).toBe('failed');
  });

  test('SPF matching follows RFC 7208: one v=spf1 record, terms left to right, qualifiers', async () => {
    dns.zone.set(SMTP_HOST, 'A', ['127.0.0.25']);
    dns.zone.set(SMTP_HOST, 'AAAA', ['::25']);
    const cases: [string[], 'verified' | 'failed'][] = [
      [['v=spf1 a:mx.posthorn.test ~all'], 'verified'],
      [['v=spf1 +a:MX.Posthorn.Test -all'], 'verified'],
      [['v=spf1 include:mx.posthorn.test -all'], 'verified'],
      [['v=spf1 mx -all'], 'verified'], // the return-path's MX is Posthorn
      [['v=spf1 ip4:127.0.0.0/24 -all'], 'verified'],
      [['v=spf1 ip6:::25 -all'], 'verified'],
      [['v=spf1 redirect=_spf.example.test', 'google-site-verification=abc'], 'failed'],
      [['v=spf1 a:mx.posthorn.test ~all', 'v=spf1 -all'], 'failed'], // two SPF records: permerror
      [['v=spf1 ~a:mx.posthorn.test -all'], 'failed'], // softfail is not an authorisation
      [['v=spf1 -all a:mx.posthorn.test'], 'failed'], // never reached
      [['v=spf1 +all'], 'failed'],
      [['v=spf1 ip4:10.0.0.0/8 -all'], 'failed'],
      [['v=spf10 a:mx.posthorn.test'], 'failed'], // not SPF records at all: see noSpf below
      [['spf1 a:mx.posthorn.test', 'some text'], 'failed'],
    ];
    try {
      for (const [txt, expected] of cases) {
        const d = await create();
        dns.zone.publish(d.name, all(d), (r) => !(r.record === 'SPF' && r.type === 'TXT'));
        dns.zone.set(`send.${d.name}`, 'TXT', txt);
        const v = await verifyAndWait(d.id);
        const spf = rec(v, 'SPF', 'TXT').status;
        // No record starting "v=spf1 " at all is "not published yet" (pending); a wrong one fails.
        const noSpf = !txt.some((t) => /^v=spf1( |$)/i.test(t));
        expect({ txt, spf }).toEqual({ txt, spf: noSpf ? 'pending' : expected });
      }
    } finally {
      dns.zone.clear(SMTP_HOST);
    }
  });

  test('a long SPF record split over character-strings', async () => {
    const d = await create();
    const long = `v=spf1 ${Array.from({ length: 20 }, (_, i) => `ip4:192.0.2.${i}`).join(' ')} a:mx.posthorn.test ~all`;
    expect(long.length).toBeGreaterThan(255);
    dns.zone.publish(d.name, all(d), (r) => !(r.record === 'SPF' && r.type === 'TXT'));
    dns.zone.set(`send.${d.name}`, 'TXT', [long]);
    expect((await verifyAndSettle(d.id)).status).toBe('verified');
  });

  test('custom_return_path: records under it are the ones checked', async () => {
    const d = await create({ customReturnPath: 'bounces' });
    expect(rec(d, 'SPF', 'MX').name).toBe('bounces');
    dns.zone.publish(d.name, all(d));
    expect(dns.zone.get(`bounces.${d.name}`, 'MX')).toHaveLength(1);
    expect((await verifyAndSettle(d.id)).status).toBe('verified');
  });

  test('receiving enabled with only sending records → partially_verified', async () => {
    const d = await create({ capabilities: { receiving: 'enabled' } });
    expect(rec(d, 'Receiving')).toMatchObject({ type: 'MX', name: '@', value: SMTP_HOST, priority: 10 });
    dns.zone.publish(d.name, all(d), (r) => r.record !== 'Receiving');
    const v = await verifyAndSettle(d.id);
    expect(v.status).toBe('partially_verified');
    expect(rec(v, 'Receiving').status).toBe('pending');
    dns.zone.publish(d.name, all(d), (r) => r.record === 'Receiving');
    expect((await recheck(d.id)).status).toBe('verified');
  });

  test('receiving verified, sending SPF wrong → partially_failed', async () => {
    const d = await create({ capabilities: { receiving: 'enabled' } });
    dns.zone.publish(d.name, all(d), (r) => !(r.record === 'SPF' && r.type === 'TXT'));
    dns.zone.set(`send.${d.name}`, 'TXT', ['v=spf1 a:other.example.test -all']);
    const v = await verifyAndSettle(d.id);
    expect(rec(v, 'Receiving').status).toBe('verified');
    expect(rec(v, 'SPF', 'TXT').status).toBe('failed');
    expect(v.status).toBe('partially_failed');
  });

  test('receiving-only domain verifies on its MX alone', async () => {
    const d = await create({ capabilities: { sending: 'disabled', receiving: 'enabled' } });
    expect(d.records.map((r) => r.record)).toEqual(['Receiving']);
    expect(d.recommended_records.map((r) => r.record)).toEqual(['DMARC']);
    dns.zone.publish(d.name, all(d), (r) => r.record === 'Receiving');
    expect((await verifyAndSettle(d.id)).status).toBe('verified');
  });

  test('verified domain loses its DKIM record → temporary_failure, back to verified when restored', async () => {
    const d = await create();
    dns.zone.publish(d.name, all(d));
    expect((await verifyAndSettle(d.id)).status).toBe('verified');
    const dkimName = `posthorn._domainkey.${d.name}`;
    const published = dns.zone.get(dkimName, 'TXT');
    dns.zone.clear(dkimName, 'TXT');
    let v = await recheck(d.id);
    expect(v.status).toBe('temporary_failure');
    expect(rec(v, 'DKIM').status).toBe('temporary_failure');
    expect(rec(v, 'SPF', 'TXT').status).toBe('verified');
    // Still degraded on the next check, then restored.
    expect((await recheck(d.id)).status).toBe('temporary_failure');
    dns.zone.set(dkimName, 'TXT', published);
    v = await recheck(d.id);
    expect(v.status).toBe('verified');
    expect(rec(v, 'DKIM').status).toBe('verified');
  });

  test('degraded for longer than 72 h → failed; pending for longer than 72 h → failed', async () => {
    const team = p.creds.team_id;
    const old = new Date(Date.now() - VERIFY_WINDOW_MS - 60_000).toISOString();
    // Verified, then lost its DKIM record 72 h ago.
    const a = await create();
    dns.zone.publish(a.name, all(a));
    expect((await verifyAndSettle(a.id)).status).toBe('verified');
    dns.zone.clear(`posthorn._domainkey.${a.name}`, 'TXT');
    expect((await recheck(a.id)).status).toBe('temporary_failure');
    await p.svc.store.write(async (tx) => {
      const recA = (await tx.domains.get(team, a.id))!;
      tx.domains.put({ ...recA, verification: { ...recA.verification, degraded_at: old } });
    });
    let v = await recheck(a.id);
    expect(v.status).toBe('failed');
    expect(rec(v, 'DKIM').status).toBe('failed');
    // Asked to verify 72 h ago, DKIM never published.
    const b = await create();
    dns.zone.publish(b.name, all(b), (r) => r.record !== 'DKIM');
    expect((await verifyAndWait(b.id)).status).toBe('pending');
    await p.svc.store.write(async (tx) => {
      const recB = (await tx.domains.get(team, b.id))!;
      tx.domains.put({ ...recB, verification: { ...recB.verification, requested_at: old } });
    });
    v = await recheck(b.id);
    expect(rec(v, 'DKIM').status).toBe('failed');
    expect(v.status).toBe('failed');
    // A new verify request opens a new window.
    v = await verifyAndWait(b.id);
    expect(rec(v, 'DKIM').status).toBe('pending');
    expect(v.status).toBe('pending');
  });

  test('receiving enabled later by PATCH: the new record waits for a match', async () => {
    const d = await create();
    dns.zone.publish(d.name, all(d));
    expect((await verifyAndSettle(d.id)).status).toBe('verified');
    expect((await p.resend.domains.update({ id: d.id, capabilities: { receiving: 'enabled' } })).error).toBeNull();
    let v = await get(d.id);
    expect(rec(v, 'Receiving').status).toBe('not_started');
    expect(v.status).toBe('partially_verified');
    v = await recheck(d.id); // not published: stays as it is (not failed)
    expect(rec(v, 'Receiving').status).toBe('not_started');
    dns.zone.publish(d.name, all(v), (r) => r.record === 'Receiving');
    v = await recheck(d.id);
    expect(rec(v, 'Receiving').status).toBe('verified');
    expect(v.status).toBe('verified');
  });

  test('DNS failing (SERVFAIL) → no crash, statuses stay', async () => {
    const verified = await create();
    dns.zone.publish(verified.name, all(verified));
    expect((await verifyAndSettle(verified.id)).status).toBe('verified');
    const pending = await create();
    expect((await verifyAndWait(pending.id)).status).toBe('pending');

    dns.failWith('SERVFAIL');
    try {
      const v = await recheck(verified.id);
      expect(v.status).toBe('verified');
      expect(new Set(all(v).map((r) => r.status))).toEqual(new Set(['verified']));
      expect((await verifyAndWait(pending.id)).status).toBe('pending');
      // A not_started domain asked to verify while DNS fails: pending, nothing failed.
      const fresh = await create();
      const f = await verifyAndWait(fresh.id);
      expect(f.status).toBe('pending');
      expect(new Set(all(f).map((r) => r.status))).toEqual(new Set(['pending']));
    } finally {
      dns.failWith(null);
    }
  });

  test('DNS timing out or unreachable → statuses stay (short-timeout verifiers on the same store)', async () => {
    const d = await create();
    dns.zone.publish(d.name, all(d));
    expect((await verifyAndSettle(d.id)).status).toBe('verified');
    const pending = await create();
    expect((await verifyAndWait(pending.id)).status).toBe('pending');
    const gone = await startDnsServer();
    await gone.close();
    const unreachable = new DomainVerifier(p.svc.store, new Resolver([gone.address], 150, 1), p.svc.config, p.svc.events);
    const slow = new DomainVerifier(p.svc.store, new Resolver([dns.address], 150, 1), p.svc.config, p.svc.events);
    dns.failWith('DROP');
    try {
      for (const verifier of [unreachable, slow]) {
        for (const id of [d.id, pending.id]) await verifier.check(p.creds.team_id, id);
        await verifier.idle();
      }
    } finally {
      dns.failWith(null);
    }
    const v = await get(d.id);
    expect(v.status).toBe('verified');
    expect(new Set(all(v).map((r) => r.status))).toEqual(new Set(['verified']));
    expect((await get(pending.id)).status).toBe('pending');
    // ...and the same verifier sees DNS again once it answers.
    dns.zone.clear(`posthorn._domainkey.${d.name}`);
    await slow.check(p.creds.team_id, d.id);
    expect((await get(d.id)).status).toBe('temporary_failure');
  });

  test('POST /domains/{id}/verify answers before the DNS lookups finish', async () => {
    const d = await create();
    dns.zone.publish(d.name, all(d));
    const dkimName = `posthorn._domainkey.${d.name}`;
    dns.zone.fail(dkimName, 'DROP'); // the DKIM lookup hangs until its timeout
    const before = dns.queries.length;
    const res = await p.api('POST', `/domains/${d.id}/verify`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ object: 'domain', id: d.id });
    expect((await get(d.id)).status).toBe('pending');
    // The lookup did go out (bounded wait), and is unanswered.
    await until(() => dns.queries.slice(before).some((q) => q.name === dkimName), 'the DKIM lookup', 4_000);
    expect(dns.queries.slice(before).some((q) => q.name === dkimName)).toBe(true);
    expect((await get(d.id)).status).toBe('pending');
    // Answered again: the retry succeeds.
    dns.zone.fail(dkimName, null);
    await p.svc.domains.idle();
    expect((await get(d.id)).status).toBe('verified');
  }, 60_000); // the hung lookup is retried after the resolver's 5 s timeout

  test('a check asked for while one runs is run again afterwards', async () => {
    const d = await create();
    dns.zone.publish(d.name, all(d), (r) => r.record !== 'DKIM');
    const team = p.creds.team_id;
    await p.svc.domains.request(team, d.id); // marks pending and starts a check
    dns.zone.publish(d.name, all(d), (r) => r.record === 'DKIM');
    await p.svc.domains.check(team, d.id); // the first check may have looked already: queued behind it
    await p.svc.domains.idle();
    expect((await get(d.id)).status).toBe('verified');
  });
});
