// Address fields of a send request (docs/api.md §1.4, §7.1): parsed by mail/address.ts, refused
// with Resend's message naming the field.
import { errors } from '../errors';
import { parseAddress, type Address } from '../mail/address';

/** Resend's message for a malformed address in `field`. */
export const invalidAddressMessage = (field: string): string => errors.invalidAddress(field).message;

/** One address field (e.g. `from`); throws 422 naming the field. */
export function addressField(field: string, value: string): Address {
  const a = parseAddress(value);
  if (!a) throw errors.invalidAddress(field);
  return a;
}

/** A field taking a string or an array of strings (`to`, `cc`, `bcc`, `reply_to`); throws 422 naming the field. */
export function addressList(field: string, value: string | string[]): Address[] {
  return (Array.isArray(value) ? value : [value]).map((v) => addressField(field, v));
}
