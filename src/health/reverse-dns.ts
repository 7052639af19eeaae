// Reverse DNS of a sending address (docs/deliverability.md §1.3). Gmail, Outlook and Yahoo refuse
// or junk mail from an address without a PTR record, and want forward-confirmed reverse DNS
// (FCrDNS): the PTR name resolves back to the address. Posthorn's EHLO name is smtp.hostname, or a
// sending IP's own `ehlo` (delivery.ips), so the PTR should name exactly that (RFC 5321 §4.1.4
// allows a mismatch; receivers score it).
import type { Config } from '../config';
import type { Resolver } from '../dns/resolver';
import { type CheckResult, fail, pass, warn } from './check';

const same = (a: string, b: string) => a.replace(/\.$/, '').toLowerCase() === b.replace(/\.$/, '').toLowerCase();

export async function reverseDnsCheck(ip: string, config: Pick<Config, 'smtp'>, dns: Resolver, ehlo?: string): Promise<CheckResult> {
  const name = `ptr:${ip}`;
  const host = ehlo ?? config.smtp.hostname;
  let names: string[];
  try {
    names = await dns.ptr(ip);
  } catch (e) {
    return warn(name, `the PTR record of ${ip} could not be looked up (${(e as Error).message})`, 'Check that dns.servers answer, then run the doctor again.');
  }
  if (names.length === 0) return fail(name, `${ip} has no PTR record`, `Ask the provider of ${ip} (your VPS panel's "reverse DNS") to set its PTR to ${host}.`);
  const confirmed: string[] = [];
  for (const n of names) {
    const forward = ip.includes(':') ? await dns.aaaa(n).catch(() => []) : await dns.a(n).catch(() => []);
    if (forward.includes(ip)) confirmed.push(n);
  }
  if (confirmed.length === 0)
    return fail(
      name,
      `${ip} → ${names.join(', ')}, which does not resolve back to ${ip} (not forward-confirmed)`,
      `Set the PTR of ${ip} to ${host} and publish an ${ip.includes(':') ? 'AAAA' : 'A'} record for ${host} with ${ip}.`,
    );
  if (!confirmed.some((n) => same(n, host)))
    return warn(
      name,
      `${ip} → ${confirmed.join(', ')} (forward-confirmed) but EHLO says ${host}`,
      ehlo
        ? `Set the PTR of ${ip} to ${host}, or its ehlo in delivery.ips to ${confirmed[0]}.`
        : `Set the PTR of ${ip} to ${host}, or smtp.hostname to ${confirmed[0]}.`,
    );
  return pass(name, `${ip} → ${host} → ${ip}`);
}
