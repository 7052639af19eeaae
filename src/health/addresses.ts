// The addresses this machine sends from (docs/deliverability.md §1.2): the public addresses of its
// network interfaces. No outside service is asked "what is my IP": behind NAT the doctor says so
// instead of guessing.
import { networkInterfaces, type NetworkInterfaceInfo } from 'node:os';
import ipaddr from 'ipaddr.js';
import type { Config } from '../config';
import { type CheckResult, pass, warn } from './check';

export type Interfaces = NodeJS.Dict<NetworkInterfaceInfo[]>;

/** Public unicast addresses of the interfaces, and the private ones seen (for the evidence). */
export function discoverAddresses(interfaces: Interfaces = networkInterfaces()): { public: string[]; private: string[] } {
  const out = { public: [] as string[], private: [] as string[] };
  for (const list of Object.values(interfaces)) {
    for (const i of list ?? []) {
      if (i.internal) continue;
      let range: string;
      try {
        range = ipaddr.process(i.address.replace(/%.*$/, '')).range();
      } catch {
        continue;
      }
      (range === 'unicast' ? out.public : out.private).push(i.address);
    }
  }
  return out;
}

/**
 * The addresses mail leaves from, each with the EHLO name said from it (the name its PTR should
 * give): the sending IPs of `delivery.ips` when set (README "Sending IPs and warm-up"), else the
 * interfaces' public addresses, all saying `smtp.hostname`.
 */
export function sendingAddresses(
  config: Pick<Config, 'smtp' | 'delivery' | 'deliverability'>,
  interfaces?: Interfaces,
): { found: { public: string[]; private: string[] }; ehlo: Map<string, string> } {
  // The addresses outgoing connections bind to (`delivery.ips`), each with its own EHLO name; else
  // the addresses the operator names (`deliverability.sending_addresses`, e.g. behind NAT); else
  // what the interfaces show.
  if (config.delivery.ips.length)
    return { found: { public: config.delivery.ips.map((i) => i.address), private: [] }, ehlo: new Map(config.delivery.ips.map((i) => [i.address, i.ehlo])) };
  const configured = config.deliverability.sending_addresses;
  const found = configured.length ? { public: configured, private: [] } : discoverAddresses(interfaces);
  return { found, ehlo: new Map(found.public.map((a) => [a, config.smtp.hostname])) };
}

export function addressesCheck(found: { public: string[]; private: string[] }): CheckResult {
  const name = 'sending_addresses';
  if (found.public.length) return pass(name, `this machine sends from ${found.public.join(', ')}`);
  return warn(
    name,
    `no public address on this machine's interfaces${found.private.length ? ` (only ${found.private.join(', ')})` : ''}: behind NAT, receivers see the router's address, whose reverse DNS and blocklist status the doctor cannot check`,
    'Run Posthorn on a host with a public address, or check the reverse DNS and blocklists of the NAT address yourself.',
  );
}
