// The addresses this machine sends from (docs/deliverability.md §1.2): the public addresses of its
// network interfaces. No outside service is asked "what is my IP": behind NAT the doctor says so
// instead of guessing.
import { networkInterfaces, type NetworkInterfaceInfo } from 'node:os';
import ipaddr from 'ipaddr.js';
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

export function addressesCheck(found: { public: string[]; private: string[] }): CheckResult {
  const name = 'sending_addresses';
  if (found.public.length) return pass(name, `this machine sends from ${found.public.join(', ')}`);
  return warn(
    name,
    `no public address on this machine's interfaces${found.private.length ? ` (only ${found.private.join(', ')})` : ''}: behind NAT, receivers see the router's address, whose reverse DNS and blocklist status the doctor cannot check`,
    'Run Posthorn on a host with a public address, or check the reverse DNS and blocklists of the NAT address yourself.',
  );
}
