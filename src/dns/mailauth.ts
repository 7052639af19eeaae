// Posthorn's resolver in the shape mailauth takes (node:dns `resolve`): inbound SPF, DKIM and
// DMARC checks (inbound/authentication.ts), the DMARC insight of sent mail (insights/) and the
// doctor's SPF and DMARC checks (health/) look names up through `dns.servers` this way. TXT goes
// through `txtStrings`, which keeps record boundaries that Bun's resolveTxt loses (a DKIM key is
// always several strings of one record).
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
      case 'PTR': {
        // node:dns asks PTR with the reversed name; Posthorn's resolver takes the address.
        const m = /^(.*)\.(in-addr|ip6)\.arpa\.?$/i.exec(name);
        if (!m) throw none(name);
        const labels = m[1].split('.').reverse();
        const ip = m[2].toLowerCase() === 'in-addr' ? labels.join('.') : (labels.join('').match(/.{4}/g) ?? []).join(':');
        return nonEmpty(name, await dns.ptr(ip));
      }
      default:
        throw none(name);
    }
  }) as DNSResolver;
}
