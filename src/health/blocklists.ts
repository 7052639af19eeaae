// DNS blocklists (docs/deliverability.md §3): each sending address asked of the IP zones
// (RFC 5782 §2.1, §2.4) and each sending domain of the domain zones (RFC 5782 §2.2), through
// Posthorn's resolver. An A answer in 127.0.0.0/8 is a listing (its TXT the reason and delisting
// link), except the codes lists answer when they refuse to answer — Spamhaus's 127.255.255.x
// (public resolver, over quota, typo) and 127.0.1.255, URIBL's and SURBL's 127.0.0.1 — which,
// like a timeout or SERVFAIL, leave the status unknown: never "listed", never "clean".
import ipaddr from 'ipaddr.js';
import type { Config } from '../config';
import type { Resolver } from '../dns/resolver';
import { blocklistName } from '../dns/reverse';
import { type CheckResult, fail, pass, warn } from './check';

export type ZoneVerdict =
  | { zone: string; status: 'listed'; codes: string[]; reason: string | null }
  | { zone: string; status: 'clean' }
  | { zone: string; status: 'unknown'; why: string };

/** Is this answer a list refusing the query (rather than a listing)? */
export function isRefusal(zone: string, code: string): boolean {
  const z = zone.toLowerCase();
  if (code.startsWith('127.255.255.')) return true; // Spamhaus: 252 typo, 254 public resolver, 255 excessive queries
  if (code === '127.0.1.255' && /(^|\.)dbl\.(dq\.)?spamhaus\./.test(z)) return true; // DBL asked about an IP
  if (code === '127.0.0.1' && /(^|\.)(uribl\.com|surbl\.org)$/.test(z)) return true; // URIBL/SURBL: blocked querier
  return false;
}

/**
 * The zones as queried: with a Spamhaus DQS key, Spamhaus's public mirrors become the key's
 * (`<key>.zen.dq.spamhaus.net`), which answer any resolver.
 */
export function queriedZones(zones: string[], dqsKey: string | null): { zone: string; query: string }[] {
  return zones.map((zone) => {
    const m = /^(zen|dbl|sbl|xbl|pbl|sbl-xbl|zrd)\.spamhaus\.org$/i.exec(zone);
    return { zone, query: dqsKey && m ? `${dqsKey}.${m[1].toLowerCase()}.dq.spamhaus.net` : zone };
  });
}

export async function askZone(dns: Resolver, name: string, zone: string): Promise<ZoneVerdict> {
  let codes: string[];
  try {
    codes = await dns.a(name);
  } catch (e) {
    return { zone, status: 'unknown', why: (e as Error).message };
  }
  if (codes.length === 0) return { zone, status: 'clean' };
  const inLoopback = codes.filter((c) => ipaddr.isValid(c) && ipaddr.parse(c).kind() === 'ipv4' && c.startsWith('127.'));
  if (inLoopback.length !== codes.length)
    return { zone, status: 'unknown', why: `answered ${codes.join(', ')}, not a blocklist code (a resolver rewriting NXDOMAIN?)` };
  if (codes.every((c) => isRefusal(zone, c)))
    return { zone, status: 'unknown', why: `refused the query (${codes.join(', ')}): use your own resolver or a DQS key` };
  const reason = await dns
    .txt(name)
    .then((t) => t.join(' ').slice(0, 300) || null)
    .catch(() => null);
  return { zone, status: 'listed', codes: codes.filter((c) => !isRefusal(zone, c)), reason };
}

function verdict(name: string, subject: string, verdicts: ZoneVerdict[], fix: string): CheckResult {
  if (verdicts.length === 0) return pass(name, `no blocklist zones configured for ${subject}`);
  const listed = verdicts.filter((v) => v.status === 'listed');
  const unknown = verdicts.filter((v) => v.status === 'unknown');
  if (listed.length)
    return fail(name, `${subject} is listed on ${listed.map((v) => `${v.zone} (${v.codes.join(', ')}${v.reason ? `: ${v.reason}` : ''})`).join('; ')}`, fix);
  const clean = verdicts.filter((v) => v.status === 'clean').map((v) => v.zone);
  if (unknown.length)
    return warn(
      name,
      `${subject}: not listed on ${clean.join(', ') || 'any zone that answered'}; unknown on ${unknown.map((v) => `${v.zone} (${v.why})`).join('; ')}`,
      'Make sure dns.servers is a resolver of your own (public resolvers are refused by several lists), or configure a Spamhaus DQS key.',
    );
  return pass(name, `${subject} is listed on none of ${clean.join(', ')}`);
}

/** One zone's verdict on one sending address or domain: what the listings act on (delivery/listings.ts). */
export type TargetVerdict = ZoneVerdict & { target: string; target_type: 'ip' | 'domain' };

/** The check of one sending address, and each zone's verdict on it. */
export async function ipBlocklist(
  ip: string,
  config: Pick<Config, 'deliverability'>,
  dns: Resolver,
): Promise<{ check: CheckResult; verdicts: TargetVerdict[] }> {
  const { ip_zones, spamhaus_dqs_key } = config.deliverability.dnsbl;
  const verdicts = await Promise.all(queriedZones(ip_zones, spamhaus_dqs_key).map(({ zone, query }) => askZone(dns, blocklistName(ip, query), zone)));
  const check = verdict(
    `dnsbl:${ip}`,
    ip,
    verdicts,
    'Find and stop what got the address listed (an open relay, a compromised account, a bad list), then ask each list to delist it through the link in its reason.',
  );
  return { check, verdicts: verdicts.map((v) => ({ ...v, target: ip, target_type: 'ip' as const })) };
}

export async function ipBlocklistCheck(ip: string, config: Pick<Config, 'deliverability'>, dns: Resolver): Promise<CheckResult> {
  return (await ipBlocklist(ip, config, dns)).check;
}

/** The check of one sending domain, and each zone's verdict on it. */
export async function domainBlocklist(
  domain: string,
  config: Pick<Config, 'deliverability'>,
  dns: Resolver,
): Promise<{ check: CheckResult; verdicts: TargetVerdict[] }> {
  const { domain_zones, spamhaus_dqs_key } = config.deliverability.dnsbl;
  const verdicts = await Promise.all(queriedZones(domain_zones, spamhaus_dqs_key).map(({ zone, query }) => askZone(dns, `${domain}.${query}`, zone)));
  const check = verdict(
    `dbl:${domain}`,
    domain,
    verdicts,
    "Stop the mail that got the domain listed (links to it in spam count too), then request removal through each list's lookup page.",
  );
  return { check, verdicts: verdicts.map((v) => ({ ...v, target: domain, target_type: 'domain' as const })) };
}

export async function domainBlocklistCheck(domain: string, config: Pick<Config, 'deliverability'>, dns: Resolver): Promise<CheckResult> {
  return (await domainBlocklist(domain, config, dns)).check;
}
