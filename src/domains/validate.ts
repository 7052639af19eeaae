// Domain names and options as accepted by POST/PATCH /domains (docs/api.md §9.1, §9.4), once their
// types are checked (src/schemas/domains.ts): what needs their meaning, worded as Resend does.
import { errors } from '../errors';
import { asciiDomain, isLabel } from '../mail/address';

/** Normalise a domain name (IDNA to ASCII, lowercase) or throw 422 naming the field. */
export function normaliseDomainName(name: string): string {
  const ascii = asciiDomain(name.trim().replace(/\.$/, ''));
  if (!ascii) throw errors.invalidField('name', 'must be a domain name such as `example.com`.');
  return ascii;
}

export function checkReturnPath(v: string): string {
  if (v.length > 63 || !/^[a-z]([a-z0-9-]*[a-z0-9])?$/i.test(v))
    throw errors.invalidField('custom_return_path', 'must be at most 63 letters, digits or hyphens, start with a letter and end with a letter or digit.');
  return v.toLowerCase();
}

/** The tracking CNAME cannot share a name with the return-path's MX and SPF records (RFC 1034 §3.6.2). */
export const trackingClash = () => errors.invalidField('tracking_subdomain', 'must differ from `custom_return_path`, whose name holds the MX and SPF records.');

export function checkTrackingSubdomain(v: string, returnPath?: string): string {
  if (!isLabel(v.toLowerCase())) throw errors.invalidField('tracking_subdomain', 'must be a single DNS label such as `links`.');
  if (returnPath !== undefined && v.toLowerCase() === returnPath) throw trackingClash();
  return v.toLowerCase();
}
