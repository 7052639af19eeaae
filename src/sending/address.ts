// Address fields of a send request (docs/api.md §1.4, §7.1): parsed by mail/address.ts, refused
// with Resend's message naming the field.
import { ApiError, errors } from '../errors';
import { parseAddress, type Address } from '../mail/address';

/** Resend's message for a malformed address in `field`. */
export function invalidAddressMessage(field: string): string {
  return `Invalid \`${field}\` field. The email address needs to follow the \`email@example.com\` or \`Name <email@example.com>\` format.`;
}

export function invalidAddress(field: string): ApiError {
  return errors.validation(invalidAddressMessage(field));
}

/** One address field (e.g. `from`); throws 422 naming the field. */
export function addressField(field: string, value: string): Address {
  const a = parseAddress(value);
  if (!a) throw invalidAddress(field);
  return a;
}

/** A field taking a string or an array of strings (`to`, `cc`, `bcc`, `reply_to`); throws 422 naming the field. */
export function addressList(field: string, value: string | string[]): Address[] {
  return (Array.isArray(value) ? value : [value]).map((v) => addressField(field, v));
}
