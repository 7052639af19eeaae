// Who an unauthenticated session may send to (docs/mail.md §4, docs/api.md §17): Posthorn is never
// an open relay. Without AUTH a recipient must be
//   - at a domain with receiving enabled (any local part, docs/api.md §8), or
//   - at a return-path host `<custom_return_path>.<domain>` of any registered domain, where
//     asynchronous bounces (RFC 3464) and complaints (RFC 5965) to VERP addresses arrive.
// Anything else is refused at RCPT (550 5.7.1, RFC 5321 §3.6.2 / RFC 3463 §3.8).
import type { StoreReader, DomainRec } from '../store';

export type Destination = { kind: 'inbound'; domain: DomainRec } | { kind: 'return-path'; domain: DomainRec };

/** The domain part of an address, lowercase, without a trailing dot. */
export function domainOf(address: string): string {
  return address
    .slice(address.lastIndexOf('@') + 1)
    .toLowerCase()
    .replace(/\.$/, '');
}

/** Where a recipient address lands at Posthorn, or null when it is not Posthorn's to accept. */
export async function destinationOf(store: StoreReader, address: string): Promise<Destination | null> {
  if (address.lastIndexOf('@') < 1) return null;
  const host = domainOf(address);
  // A return-path host is one label (domains/validate.ts checkReturnPath) above a registered
  // domain. Checked first: bounces for a domain belong to its team, whoever else claims the host.
  const dot = host.indexOf('.');
  if (dot > 0) {
    const parent = await store.domains.find('name', host.slice(dot + 1));
    if (parent && parent.custom_return_path === host.slice(0, dot)) return { kind: 'return-path', domain: parent };
  }
  const own = await store.domains.find('name', host);
  if (own?.capabilities.receiving === 'enabled') return { kind: 'inbound', domain: own };
  return null;
}
