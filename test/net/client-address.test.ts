// The client's address behind reverse proxies (src/net/client-address.ts; README "Security"):
// forwarded headers are believed only from `http.trusted_proxies`, read from the right.
import { describe, expect, test } from 'bun:test';
import { TrustedProxies, canonicalAddress, parseRange } from '../../src/net/client-address';

describe('TrustedProxies.clientAddress', () => {
  test('no proxies configured: the connection, whatever X-Forwarded-For says', () => {
    const none = new TrustedProxies([]);
    expect(none.clientAddress('127.0.0.1', '203.0.113.7')).toBe('127.0.0.1');
    expect(none.clientAddress('10.0.0.5', '203.0.113.7, 198.51.100.1')).toBe('10.0.0.5');
    expect(none.clientAddress('::ffff:127.0.0.1', null)).toBe('127.0.0.1');
  });

  test('from a trusted proxy: the right-most address that is not a proxy; what the client wrote is ignored', () => {
    const proxies = new TrustedProxies(['127.0.0.1', '10.0.0.0/8', 'fd00::/8']);
    // nginx's $proxy_add_x_forwarded_for appends the real address after whatever the client sent.
    expect(proxies.clientAddress('127.0.0.1', 'forged, 1.1.1.1, 203.0.113.7')).toBe('203.0.113.7');
    expect(proxies.clientAddress('10.1.2.3', '203.0.113.7, 10.0.0.9')).toBe('203.0.113.7');
    expect(proxies.clientAddress('::ffff:127.0.0.1', '2001:DB8:0:0:0:0:0:1')).toBe('2001:db8::1');
    expect(proxies.clientAddress('fd00::2', '::ffff:203.0.113.7')).toBe('203.0.113.7');
    // Every hop a proxy: the left-most one; a hop that is no address: the proxy that passed it on.
    expect(proxies.clientAddress('127.0.0.1', '10.0.0.1, 10.0.0.2')).toBe('10.0.0.1');
    expect(proxies.clientAddress('127.0.0.1', 'unknown, 10.0.0.2')).toBe('10.0.0.2');
    expect(proxies.clientAddress('127.0.0.1', '')).toBe('127.0.0.1');
    // Not a proxy: its header is the client's own writing.
    expect(proxies.clientAddress('198.51.100.4', '10.0.0.1')).toBe('198.51.100.4');
  });

  test('ranges: addresses and CIDR, strict spellings only', () => {
    expect(parseRange('10.0.0.0/8')?.[1]).toBe(8);
    expect(parseRange('::1')?.[1]).toBe(128);
    expect(parseRange('::ffff:10.0.0.0/104')?.map(String)).toEqual(['10.0.0.0', '8']);
    for (const bad of ['0x7f.1', '10.0.0.0/33', 'fd00::/129', 'localhost', '10.0.0.0/', '10.0.0.0/8/8', ''])
      expect([bad, parseRange(bad)]).toEqual([bad, null]);
    expect(canonicalAddress('0:0:0:0:0:ffff:7f00:1')).toBe('127.0.0.1');
  });
});
