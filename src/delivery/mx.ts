// Where mail for a domain goes (RFC 5321 §5.1), looked up through the configured resolver
// (`dns.servers`), never the system's: MX hosts by preference, equal preferences in random order;
// no MX → the domain itself is the implicit MX (its A/AAAA); a null MX (RFC 7505) → the domain
// accepts no mail. Host addresses are resolved lazily, as each host is tried.
import type { Resolver } from '../dns/resolver';

export type MxRoute =
  /** RFC 7505 §3: a single MX "." of preference 0 — bounce with 5.1.10 without trying. */
  | { kind: 'null' }
  /** Neither MX nor address records: there is nowhere to deliver. */
  | { kind: 'none' }
  | { kind: 'hosts'; hosts: string[]; implicit: boolean };

const isRoot = (exchange: string) => exchange === '' || exchange === '.';

export async function resolveMx(dns: Resolver, domain: string): Promise<MxRoute> {
  const records = await dns.mx(domain);
  const usable = records.filter((r) => !isRoot(r.exchange));
  // RFC 7505 §3: a null MX is the only MX of its domain; one mixed with real MX records is ignored.
  if (records.length > 0 && usable.length === 0) return { kind: 'null' };
  if (usable.length > 0) return { kind: 'hosts', hosts: byPreference(usable), implicit: false };
  // RFC 5321 §5.1: no MX → the domain is its own MX, with preference 0, if it has an address.
  const addrs = await hostAddresses(dns, domain);
  return addrs.length ? { kind: 'hosts', hosts: [domain], implicit: true } : { kind: 'none' };
}

/** RFC 5321 §5.1: lowest preference first; "randomize" among hosts of equal preference. */
export function byPreference(records: { exchange: string; priority: number }[]): string[] {
  const groups = new Map<number, string[]>();
  for (const r of records) {
    const host = r.exchange.replace(/\.$/, '').toLowerCase();
    const g = groups.get(r.priority) ?? [];
    if (!g.includes(host)) g.push(host);
    groups.set(r.priority, g);
  }
  const out: string[] = [];
  for (const pref of [...groups.keys()].sort((a, b) => a - b)) out.push(...shuffle(groups.get(pref)!));
  return out;
}

/**
 * The addresses of one host, IPv4 first (an IPv6 route is often missing on small servers, and a
 * failed address costs a connect attempt). A literal IP is returned as is.
 */
export async function hostAddresses(dns: Resolver, host: string): Promise<string[]> {
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(host)) return [host];
  // One family failing (a SERVFAIL on AAAA is common) must not hide the other's addresses; but
  // with nothing found, a failed lookup means "unknown", not "no address" (a temporary error,
  // never a permanent bounce).
  const [v4, v6] = await Promise.allSettled([dns.a(host), dns.aaaa(host)]);
  const found = [...(v4.status === 'fulfilled' ? v4.value : []), ...(v6.status === 'fulfilled' ? v6.value : [])];
  if (found.length === 0) for (const r of [v4, v6]) if (r.status === 'rejected') throw r.reason;
  return found;
}

function shuffle<T>(items: T[]): T[] {
  const a = [...items];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}
