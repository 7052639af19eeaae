// Types of the parts of mailauth's DKIM signer that mail/dkim.ts composes (mailauth ships types
// for its public entry points only). Just what dkim.ts uses; test/dependencies/mailauth.test.ts
// checks that the pinned mailauth still has them and that they behave so (docs/ARCHITECTURE.md §5).
declare module 'mailauth/lib/tools' {
  export interface ParsedHeader {
    key: string | null;
    casedKey: string;
    line: Buffer;
  }
  export function parseHeaders(buf: Buffer): { parsed: ParsedHeader[]; original: Buffer };
  export function getSigningHeaderLines(parsed: ParsedHeader[], fieldNames: string): { keys: string; headers: ParsedHeader[] };
  export function formatSignatureHeaderLine(type: 'DKIM', values: Record<string, unknown>, folded: boolean): string;
  export function toALabel(domain: string): string;
}

declare module 'mailauth/lib/dkim/body' {
  export function dkimBody(
    canonicalization: 'relaxed' | 'simple',
    algorithm: string,
    maxBodyLength: number | false,
  ): { update(chunk: Buffer): void; digest(encoding: 'base64'): string };
}

declare module 'mailauth/lib/dkim/header' {
  export function generateCanonicalizedHeader(
    type: 'DKIM',
    signingHeaderLines: { keys: string; headers: import('mailauth/lib/tools').ParsedHeader[] },
    options: { signingDomain: string; selector: string; algorithm: string; canonicalization: string; timestamp: number; expiration: false; bodyHash: string },
  ): { canonicalizedHeader: Buffer; dkimHeaderOpts: Record<string, unknown> };
}

// The DMARC record lookup (RFC 7489 §6.6.3 policy discovery) the doctor reads a domain's policy with
// (health/domain-auth.ts).
declare module 'mailauth/lib/dmarc/get-dmarc-record' {
  export interface DmarcRecord {
    v: string;
    p?: string;
    sp?: string;
    pct?: number;
    rua?: string;
    ruf?: string;
    adkim?: string;
    aspf?: string;
    isOrgRecord: boolean;
    recordDomain: string;
    orgDomain: string;
  }
  function getDmarcRecord(domain: string, resolver: import('mailauth').DNSResolver): Promise<DmarcRecord | false>;
  export default getDmarcRecord;
}
