// The names Posthorn's ACME certificate covers (docs/mail.md §4, "Certificates by ACME"): the `public_url` host (the
// API, dashboard, tracking links) and `smtp.hostname` (EHLO, the MX target, what MTA-STS senders
// and submission clients verify). A name a public CA cannot certify — an IP literal, `localhost`,
// a bare name — is left out; with none left there is nothing to ask for.
import { isIP } from 'node:net';
import type { Config } from '../config';

/** A host name a CA can validate: a dotted DNS name, not an IP literal, not localhost. */
export function certifiable(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  if (isIP(h.replace(/^\[|\]$/g, ''))) return false;
  if (h === 'localhost' || h.endsWith('.localhost')) return false;
  return /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/.test(h);
}

/** The names of the certificate, sorted and without duplicates (its store id is made from them). */
export function certificateNames(config: Pick<Config, 'public_url' | 'smtp'>): string[] {
  const hosts = [new URL(config.public_url).hostname, config.smtp.hostname].map((h) => h.toLowerCase().replace(/\.$/, ''));
  return [...new Set(hosts.filter(certifiable))].sort();
}

/** The store id of the certificate for these names (store/acme-records.ts). */
export const certificateId = (names: string[]) => `cert ${names.join(',')}`;

/** The store id of the HTTP-01 answer for `token` (RFC 8555 §8.3). */
export const challengeId = (token: string) => `challenge ${token}`;
