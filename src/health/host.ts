// The names the world sees (docs/deliverability.md §1.1): `smtp.hostname` is what EHLO says, the MX
// and SPF target every domain publishes, and must be a fully-qualified name that resolves
// (RFC 5321 §4.1.1.1: the EHLO argument is the client's FQDN); `public_url` is the base of every
// tracking, unsubscribe and invitation link, so it must be reachable from the recipients' side.
import { isIP } from 'node:net';
import type { Config } from '../config';
import type { Resolver } from '../dns/resolver';
import { type CheckResult, fail, pass, warn } from './check';

const LOCAL = /^(localhost|localhost\.localdomain|.*\.localhost|.*\.local|.*\.internal|.*\.lan)$/i;

/** Why a name cannot be a public mail host name, or null when it can. */
export function unusableHostname(name: string): string | null {
  const host = name.replace(/\.$/, '');
  if (isIP(host.replace(/^\[|\]$/g, ''))) return 'is an IP address, not a host name';
  if (LOCAL.test(host)) return 'is a local name nobody else can resolve';
  if (!host.includes('.')) return 'is a bare name, not a fully-qualified domain name';
  return null;
}

export async function hostnameCheck(config: Pick<Config, 'smtp'>, dns: Resolver): Promise<CheckResult> {
  const name = 'smtp_hostname';
  const host = config.smtp.hostname;
  const why = unusableHostname(host);
  if (why)
    return fail(
      name,
      `smtp.hostname = "${host}" ${why}; every domain would publish MX and SPF records pointing at it, and receivers refuse an EHLO like it`,
      "Set smtp.hostname (POSTHORN_SMTP_HOSTNAME) to this server's public name, e.g. mail.example.com, with an A record to its address and a PTR record back.",
    );
  let addresses: string[];
  try {
    addresses = [...(await dns.a(host)), ...(await dns.aaaa(host))];
  } catch (e) {
    return warn(name, `${host}: its address could not be looked up (${(e as Error).message})`, 'Check that dns.servers answer, then run the doctor again.');
  }
  if (addresses.length === 0)
    return fail(name, `${host} has no A or AAAA record`, `Publish an A (and AAAA) record for ${host} with this server's public address.`);
  return pass(name, `${host} resolves to ${addresses.join(', ')}`);
}

export function publicUrlCheck(config: Pick<Config, 'public_url'>, domains: number): CheckResult {
  const name = 'public_url';
  const u = new URL(config.public_url);
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const local = LOCAL.test(host) || /^127\./.test(host) || host === '::1';
  if (local && domains > 0)
    return fail(
      name,
      `public_url = ${config.public_url}: the tracking, unsubscribe and download links in mail to your recipients point at this machine's own loopback`,
      'Set public_url (POSTHORN_PUBLIC_URL) to the https:// address this server is reached at from the Internet.',
    );
  if (local)
    return warn(
      name,
      `public_url = ${config.public_url}: fine for a first try on this machine, not for mail to others`,
      'Set public_url (POSTHORN_PUBLIC_URL) to the https:// address this server is reached at before adding a domain.',
    );
  if (u.protocol !== 'https:')
    return warn(
      name,
      `public_url = ${config.public_url} is plain http: links in mail are sent in clear and browsers mark them unsafe`,
      'Serve Posthorn over HTTPS (http.tls_cert or a reverse proxy) and set public_url to its https:// address.',
    );
  return pass(name, `public_url = ${config.public_url}`);
}
