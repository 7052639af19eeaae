// The resolver's cache (src/dns/cache.ts, Resolver#withCache) against the test DNS server, whose
// `queries` log shows what reached the wire: answers kept for their TTL (capped at an hour), TTL 0
// never kept, negative answers kept for the SOA's TTL or MINIMUM, whichever is less (RFC 2308 §5),
// errors never kept, identical lookups in flight asked once, and the cache bounded (LRU). The clock
// is the test's, so expiry needs no waiting. Also: one socket for every query, and answers that do
// not match their query (another source, id or question) are ignored in favour of the real one.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { createSocket } from 'node:dgram';
import packet from 'dns-packet';
import { startDnsServer, type TestDns } from '../helpers/dns';
import { Resolver } from '../../src/dns/resolver';
import { DnsCache, MAX_TTL_S } from '../../src/dns/cache';

let dns: TestDns;
let n = 0;
const uniq = (label: string) => `${label}${++n}.cache.test`;
const asked = (name: string, type?: string) => dns.queries.filter((q) => q.name === name && (!type || q.type === type)).length;

beforeAll(async () => {
  dns = await startDnsServer();
});
afterAll(() => dns.close());

/** A caching resolver on a clock the test moves (seconds). */
function clocked(limits?: { entries: number; bytes: number }) {
  const clock = { s: 1_000 };
  const r = new Resolver([dns.address], 1000, 1).withCache(() => clock.s * 1000, limits);
  return { r, clock };
}

describe('positive answers', () => {
  test('kept for their TTL: repeated lookups ask once, after expiry the server is asked again and its change seen', async () => {
    const name = uniq('ttl');
    dns.zone.set(name, 'TXT', ['v=spf1 -all'], { ttl: 300 });
    const { r, clock } = clocked();
    expect(await r.txt(name)).toEqual(['v=spf1 -all']);
    dns.zone.set(name, 'TXT', ['v=spf1 +all'], { ttl: 300 });
    for (let i = 0; i < 5; i++) expect(await r.txt(name)).toEqual(['v=spf1 -all']);
    expect(asked(name)).toBe(1);
    clock.s += 299;
    expect(await r.txt(name)).toEqual(['v=spf1 -all']);
    clock.s += 1;
    expect(await r.txt(name)).toEqual(['v=spf1 +all']);
    expect(asked(name)).toBe(2);
  });

  test('every type is kept apart (MX, A, AAAA, CNAME); names are case-insensitive', async () => {
    const name = uniq('types');
    dns.zone.set(name, 'MX', [{ exchange: `mx.${name}`, priority: 10 }], { ttl: 60 });
    dns.zone.set(`mx.${name}`, 'A', ['127.0.0.9'], { ttl: 60 });
    dns.zone.set(`mx.${name}`, 'AAAA', ['::9'], { ttl: 60 });
    dns.zone.set(`alias.${name}`, 'CNAME', [`mx.${name}`], { ttl: 60 });
    const { r } = clocked();
    for (let i = 0; i < 2; i++) {
      expect(await r.mx(name.toUpperCase())).toEqual([{ exchange: `mx.${name}`, priority: 10 }]);
      expect(await r.a(`mx.${name}`)).toEqual(['127.0.0.9']);
      expect(await r.aaaa(`mx.${name}`)).toEqual(['::9']);
      expect(await r.cname(`alias.${name}`)).toEqual([`mx.${name}`]);
      expect(await r.a(`alias.${name}`)).toEqual(['127.0.0.9']);
    }
    expect([asked(name, 'MX'), asked(`mx.${name}`, 'A'), asked(`mx.${name}`, 'AAAA'), asked(`alias.${name}`, 'CNAME'), asked(`alias.${name}`, 'A')]).toEqual([
      1, 1, 1, 1, 1,
    ]);
  });

  test('TTL 0 is never kept (the test zone default): every lookup asks, and sees every change', async () => {
    const name = uniq('zero');
    dns.zone.set(name, 'A', ['127.0.0.1']);
    const { r } = clocked();
    expect(await r.a(name)).toEqual(['127.0.0.1']);
    dns.zone.set(name, 'A', ['127.0.0.2']);
    expect(await r.a(name)).toEqual(['127.0.0.2']);
    expect(asked(name)).toBe(2);
  });

  test('a CNAME chain is kept for the least TTL along it', async () => {
    const name = uniq('chain');
    dns.zone.set(`target.${name}`, 'A', ['127.0.0.3'], { ttl: 3000 });
    dns.zone.set(name, 'CNAME', [`target.${name}`], { ttl: 30 });
    const { r, clock } = clocked();
    await r.a(name);
    clock.s += 29;
    await r.a(name);
    expect(asked(name)).toBe(1);
    clock.s += 1;
    await r.a(name);
    expect(asked(name)).toBe(2);
  });

  test(`a TTL longer than ${MAX_TTL_S} s is kept for ${MAX_TTL_S} s`, async () => {
    const name = uniq('long');
    dns.zone.set(name, 'TXT', ['x'], { ttl: 7 * 86400 });
    const { r, clock } = clocked();
    await r.txt(name);
    clock.s += MAX_TTL_S - 1;
    await r.txt(name);
    expect(asked(name)).toBe(1);
    clock.s += 1;
    await r.txt(name);
    expect(asked(name)).toBe(2);
  });
});

describe('negative answers (RFC 2308)', () => {
  test('NXDOMAIN and NODATA are kept for min(SOA TTL, SOA MINIMUM)', async () => {
    const missing = uniq('nx');
    const nodata = uniq('nodata');
    dns.zone.set(nodata, 'A', ['127.0.0.1'], { ttl: 300 });
    dns.zone.setNegativeTtl(600, 120);
    try {
      const { r, clock } = clocked();
      expect(await r.txt(missing)).toEqual([]);
      expect(await r.txt(nodata)).toEqual([]);
      dns.zone.set(missing, 'TXT', ['now here']);
      dns.zone.set(nodata, 'TXT', ['now here']);
      clock.s += 119;
      expect(await r.txt(missing)).toEqual([]);
      expect(await r.txt(nodata)).toEqual([]);
      expect([asked(missing), asked(nodata, 'TXT')]).toEqual([1, 1]);
      clock.s += 1;
      expect(await r.txt(missing)).toEqual(['now here']);
      expect(await r.txt(nodata)).toEqual(['now here']);
      expect([asked(missing), asked(nodata, 'TXT')]).toEqual([2, 2]);

      // The SOA's own TTL when it is the lesser.
      const other = uniq('soa-ttl');
      dns.zone.setNegativeTtl(30, 900);
      await r.mx(other);
      clock.s += 30;
      await r.mx(other);
      expect(asked(other)).toBe(2);
    } finally {
      dns.zone.setNegativeTtl(0);
    }
  });

  test('the default test zone (SOA TTL and MINIMUM 0): a negative answer is not kept', async () => {
    const name = uniq('neg-zero');
    const { r } = clocked();
    expect(await r.txt(name)).toEqual([]);
    dns.zone.set(name, 'TXT', ['published']);
    expect(await r.txt(name)).toEqual(['published']);
  });

  test('failures are never kept', async () => {
    const name = uniq('servfail');
    dns.zone.set(name, 'TXT', ['ok'], { ttl: 300 });
    dns.zone.fail(name, 'SERVFAIL');
    const { r } = clocked();
    await expect(r.txt(name)).rejects.toMatchObject({ code: 'ESERVFAIL' });
    dns.zone.fail(name, null);
    expect(await r.txt(name)).toEqual(['ok']);
  });
});

describe('in flight, bounds, and the socket', () => {
  test('identical lookups in flight are asked once, even with TTL 0', async () => {
    const name = uniq('flight');
    dns.zone.set(name, 'TXT', ['one']);
    const { r } = clocked();
    const all = await Promise.all(Array.from({ length: 8 }, () => r.txt(name)));
    expect(all.every((a) => a[0] === 'one')).toBe(true);
    expect(asked(name)).toBe(1);
  });

  test('bounded: past the entry limit the least recently used answer goes first', async () => {
    const names = [uniq('lru'), uniq('lru'), uniq('lru')];
    for (const name of names) dns.zone.set(name, 'A', ['127.0.0.1'], { ttl: 300 });
    const { r } = clocked({ entries: 2, bytes: 1_000_000 });
    await r.a(names[0]);
    await r.a(names[1]);
    await r.a(names[0]); // names[0] is now the most recently used
    await r.a(names[2]); // evicts names[1]
    await r.a(names[0]);
    await r.a(names[1]);
    expect(names.map((x) => asked(x))).toEqual([1, 2, 1]);
  });

  test('bounded in bytes too', () => {
    const cache = new DnsCache<string>({ entries: 100, bytes: 1000 });
    for (let i = 0; i < 10; i++) cache.set(`k${i}`, 'v', 60, 300);
    expect(cache.size).toBe(3);
    expect(cache.get('k9')).toBe('v');
    expect(cache.get('k0')).toBeUndefined();
    cache.set('huge', 'v', 60, 5000); // larger than the whole budget: not kept
    expect(cache.get('huge')).toBeUndefined();
  });

  test('answers from another source, with another id or for another question are ignored; the real one is taken', async () => {
    const server = createSocket('udp4');
    const forger = createSocket('udp4');
    await new Promise<void>((resolve) => server.bind(0, '127.0.0.1', () => resolve()));
    await new Promise<void>((resolve) => forger.bind(0, '127.0.0.1', () => resolve()));
    const reply = (id: number, name: string, address: string) =>
      packet.encode({
        type: 'response',
        id,
        flags: packet.RECURSION_AVAILABLE,
        questions: [{ type: 'A', class: 'IN', name }],
        answers: [{ type: 'A', class: 'IN', name, ttl: 60, data: address }],
      });
    const sources = new Set<number>();
    server.on('message', (msg, from) => {
      const q = packet.decode(msg);
      const name = q.questions![0].name;
      sources.add(from.port);
      const send = (buf: Buffer, via = server) => via.send(buf, from.port, from.address);
      send(reply(q.id!, name, '10.6.6.6'), forger); // right id and question, wrong source port
      send(reply((q.id! + 1) & 0xffff, name, '10.6.6.7')); // another id
      send(reply(q.id!, `evil.${name}`, '10.6.6.8')); // another question
      setTimeout(() => send(reply(q.id!, name, '127.0.0.5')), 20);
    });
    try {
      const r = new Resolver([`127.0.0.1:${server.address().port}`], 2000, 1);
      expect(await r.a('real.spoof.test')).toEqual(['127.0.0.5']);
      expect(await Promise.all([r.a('one.spoof.test'), r.a('two.spoof.test'), r.withCache().a('three.spoof.test')])).toEqual([
        ['127.0.0.5'],
        ['127.0.0.5'],
        ['127.0.0.5'],
      ]);
      // Every query, cached view included, left from the one socket.
      expect(sources.size).toBe(1);
      r.close();
    } finally {
      server.close();
      forger.close();
    }
  });
});
