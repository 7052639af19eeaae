// MTA-STS (RFC 8461) and TLS-RPT (RFC 8460) vocabulary: the `_mta-sts` TXT record and the policy
// file are read by mailauth (strict: RFC 8461 §3.1 and §3.2 exactly), MX host names are matched by
// it (§4.1); this module adds where a policy is fetched from and how a failed TLS set-up is named
// in a TLS report (RFC 8460 §4.3). Fetching and caching are delivery's (delivery/mta-sts.ts, through
// the SSRF guard), so of mailauth's `lib/mta-sts` only its readers are used: `validateMx` is in
// mailauth's README, `resolvePolicy` and `parsePolicy` only in its type declarations; all three are
// checked by test/dependencies/mailauth.test.ts (docs/ARCHITECTURE.md §5).
import { resolvePolicy, parsePolicy as parsePolicyFile, validateMx } from 'mailauth/lib/mta-sts';

/** RFC 8461 §3.3: policies larger than 64 KB are not to be trusted. */
export const MAX_POLICY_BYTES = 64 * 1024;

export type StsMode = 'enforce' | 'testing' | 'none';

export interface ParsedPolicy {
  mode: StsMode;
  /** MX host patterns, lower case (`mx.example.com`, `*.example.net`). */
  mx: string[];
  /** Seconds, at most 31557600 (RFC 8461 §3.2). */
  max_age: number;
}

/** A policy file as served (RFC 8461 §3.2). Throws with the reason when it is not a valid policy. */
export function parsePolicy(text: string): ParsedPolicy {
  const p = parsePolicyFile(text, { strict: true });
  return { mode: p.mode, mx: p.mx ?? [], max_age: p.maxAge ?? 0 };
}

/**
 * The policy id of a domain's `_mta-sts` TXT record (RFC 8461 §3.1), or null when it publishes
 * none: no `v=STSv1` record, more than one, or one that is not well formed — all of which mean
 * "no policy available". `txt` looks TXT records up (each record as its strings); its DNS
 * failures (timeouts, SERVFAIL) are thrown.
 */
export async function policyId(domain: string, txt: (name: string) => Promise<string[][]>): Promise<string | null> {
  try {
    return (await resolvePolicy(domain, { strict: true, resolver: ((name: string) => txt(name)) as never })) || null;
  } catch (e) {
    if ((e as { code?: string }).code === 'multi_sts_records') return null;
    throw e;
  }
}

/** Does the policy let mail go to MX host `host` (RFC 8461 §4.1: names and `*.` wildcards of one label)? */
export function mxAllowed(host: string, policy: { mode: StsMode; mx: string[] }): boolean {
  return validateMx(host, { mode: policy.mode, mx: policy.mx }).valid;
}

/** Where a domain's policy is served (RFC 8461 §3.2); `port` is 443 but for tests. */
export function policyUrl(domain: string, port = 443): string {
  return `https://mta-sts.${domain}${port === 443 ? '' : `:${port}`}/.well-known/mta-sts.txt`;
}

/** RFC 8460 §4.3 result types Posthorn records. */
export type TlsResultType =
  | 'starttls-not-supported'
  | 'certificate-host-mismatch'
  | 'certificate-expired'
  | 'certificate-not-trusted'
  | 'validation-failure'
  | 'sts-policy-fetch-error'
  | 'sts-policy-invalid'
  | 'sts-webpki-invalid';

const CERT_NOT_TRUSTED = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_REVOKED',
  'INVALID_CA',
]);

/**
 * The RFC 8460 §4.3.1 result type of a TLS set-up that failed validation, from the TLS library's
 * reason (node's certificate error codes) or STARTTLS_MISSING.
 */
export function tlsResultType(reason: string): TlsResultType {
  if (reason === 'STARTTLS_MISSING') return 'starttls-not-supported';
  if (reason === 'ERR_TLS_CERT_ALTNAME_INVALID' || reason === 'HOSTNAME_MISMATCH') return 'certificate-host-mismatch';
  if (reason === 'CERT_HAS_EXPIRED' || reason === 'CERT_NOT_YET_VALID') return 'certificate-expired';
  if (CERT_NOT_TRUSTED.has(reason)) return 'certificate-not-trusted';
  return 'validation-failure';
}
