// Sender authentication of inbound mail (docs/api.md §8 `authentication`): SPF (RFC 7208) for
// the envelope sender and client address, DKIM (RFC 6376) signatures, DMARC (RFC 7489) for the
// From domain — all by mailauth, looking names up through Posthorn's resolver (`dns.servers`).
// TXT goes through `txtStrings`, which keeps record boundaries that Bun's resolveTxt loses (a
// DKIM key is always several strings of one record).
import { authenticate, type AuthStatus } from 'mailauth';
import type { Resolver } from '../dns/resolver';
import { mailauthResolver } from '../dns/mailauth';
import type { AuthVerdict, ReceivedEmailRec } from '../store';
import { log } from '../log';

/** Upper bound on the checks, so a slow DNS cannot hold the DATA reply for long (RFC 5321 §4.5.3.2.6 gives clients 10 min). */
const CHECK_TIMEOUT_MS = 20_000;

export interface Connection {
  ip: string;
  helo: string;
  /** MAIL FROM, '' for the null sender. */
  sender: string;
  /** Posthorn's name (smtp.hostname), the authserv-id. */
  mta: string;
}

type Auth = NonNullable<ReceivedEmailRec['authentication']>;

/** RFC 8601 result keywords as the API's verdicts. */
function verdict(status: AuthStatus | undefined): AuthVerdict {
  switch (status?.result) {
    case 'pass':
      return 'pass';
    case 'fail':
    case 'permerror':
      return 'fail';
    case 'softfail':
    case 'neutral':
    case 'policy':
      return 'gray';
    case 'temperror':
    case 'temperr':
      return 'processing_failed';
    default:
      return 'unknown'; // none, skipped, declined, not evaluated
  }
}

/** Of several DKIM signatures, the best outcome: any valid signature passes (RFC 6376 §6.1). */
function bestOf(list: AuthVerdict[]): AuthVerdict {
  for (const v of ['pass', 'fail', 'processing_failed', 'gray'] as const) if (list.includes(v)) return v;
  return 'unknown';
}

/**
 * Offset just past the empty line that ends the header section, found as mailauth's DKIM parser
 * finds it (an LF after an LF, or after a CRLF that follows an LF; an empty first line: no header
 * section), or null when there is none.
 */
export function headerEnd(raw: Uint8Array): number | null {
  for (let i = raw.indexOf(0x0a); i >= 0; i = raw.indexOf(0x0a, i + 1)) {
    if (i === 0 || (i === 1 && raw[0] === 0x0d) || raw[i - 1] === 0x0a || (raw[i - 1] === 0x0d && i >= 2 && raw[i - 2] === 0x0a)) return i + 1;
  }
  return null;
}

/**
 * What mailauth needs to read: the body only matters to a DKIM-Signature (its body hash, RFC 6376
 * §3.7) and to an ARC-Message-Signature. With neither in the header section — most inbound mail
 * here, and all of the bench's — the header section alone gives the same SPF, DKIM ("none") and
 * DMARC (the From domain) results, and mailauth's byte-by-byte body pass (a third of its cost on a
 * 2 KB message, more on larger ones) is skipped. Any header section naming "signature" or "arc-"
 * anywhere, or without an end, is read whole.
 */
export function authenticationInput(raw: Buffer): Buffer {
  const end = headerEnd(raw);
  if (end === null || end === raw.byteLength) return raw;
  const header = raw.toString('latin1', 0, end).toLowerCase();
  if (header.includes('signature') || header.includes('arc-')) return raw;
  return raw.subarray(0, end);
}

export async function checkAuthentication(raw: Buffer, conn: Connection, dns: Resolver): Promise<Auth> {
  const failed: Auth = { spf: 'processing_failed', dkim: 'processing_failed', dmarc: 'processing_failed' };
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const res = await Promise.race([
      authenticate(authenticationInput(raw), {
        ip: conn.ip,
        helo: conn.helo,
        sender: conn.sender,
        mta: conn.mta,
        resolver: mailauthResolver(dns),
        disableArc: true,
        disableBimi: true,
      }),
      new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), CHECK_TIMEOUT_MS))),
    ]);
    if (!res) {
      log.warn('smtp.inbound.auth_timeout', { timeout_ms: CHECK_TIMEOUT_MS });
      return failed;
    }
    return {
      spf: res.spf ? verdict(res.spf.status) : 'unknown',
      dkim: bestOf((res.dkim.results ?? []).map((r) => verdict(r.status))),
      dmarc: res.dmarc ? verdict(res.dmarc.status) : 'unknown',
    };
  } catch (e) {
    log.warn('smtp.inbound.auth_failed', { error: String((e as Error)?.message ?? e) });
    return failed;
  } finally {
    clearTimeout(timer);
  }
}
