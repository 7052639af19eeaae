// Posthorn's resolver in the shape mailauth takes (node:dns `resolve`): inbound SPF, DKIM and
// DMARC checks (inbound/authentication.ts) and the DMARC insight of sent mail (insights/) look names
// up through `dns.servers` this way. TXT goes through `txtStrings`, which keeps record boundaries
// that Bun's resolveTxt loses (a DKIM key is always several strings of one record).
import type { DNSResolver } from 'mailauth';
import type { Resolver } from './resolver';

/** The node:dns-shaped resolver mailauth takes; "no records" is an ENOTFOUND error there. */
export function mailauthResolver(dns: Resolver): DNSResolver {
  const none = (name: string) => Object.assign(new Error(`no ${name} records`), { code: 'ENOTFOUND' });
  const nonEmpty = <T>(name: string, list: T[]): T[] => {
    if (list.length === 0) throw none(name);
    return list;
  };
  return (async (name: string, rrtype: string) => {
    switch (rrtype) {
      case 'TXT':
        return nonEmpty(name, await dns.txtStrings(name));
      case 'MX':
        return nonEmpty(name, await dns.mx(name));
      case 'A':
        return nonEmpty(name, await dns.a(name));
      case 'AAAA':
        return nonEmpty(name, await dns.aaaa(name));
      case 'CNAME':
        return nonEmpty(name, await dns.cname(name));
      default:
        // PTR (SPF's deprecated `ptr` mechanism, RFC 7208 §5.5) and others: not looked up.
        throw none(name);
    }
  }) as DNSResolver;
}
