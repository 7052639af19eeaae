// An address written as a name under a zone: its octets (IPv4) or nibbles (IPv6) in reverse order.
// That is the PTR name (RFC 1035 §3.5 `in-addr.arpa`, RFC 3596 §2.5 `ip6.arpa`) and the name a
// DNS blocklist is asked about (RFC 5782 §2.1 IPv4, §2.4 IPv6). ipaddr.js reads every spelling of
// an address (IPv4-mapped IPv6 included) so no spelling escapes the reversal.
import ipaddr from 'ipaddr.js';

/** `1.0.0.127` for 127.0.0.1; the 32 nibbles of an IPv6 address. Throws on anything but an address. */
export function reversedLabels(ip: string): string {
  const addr = ipaddr.parse(ip);
  const bytes = addr.toByteArray();
  if (addr.kind() === 'ipv4') return bytes.reverse().join('.');
  return bytes
    .flatMap((b) => [b >> 4, b & 15])
    .reverse()
    .map((n) => n.toString(16))
    .join('.');
}

/** The PTR name of an address. */
export function reverseName(ip: string): string {
  return `${reversedLabels(ip)}.${ipaddr.parse(ip).kind() === 'ipv4' ? 'in-addr.arpa' : 'ip6.arpa'}`;
}

/** The name a DNS blocklist zone is asked about for an address (RFC 5782 §2.1, §2.4). */
export function blocklistName(ip: string, zone: string): string {
  return `${reversedLabels(ip)}.${zone.replace(/\.$/, '')}`;
}
