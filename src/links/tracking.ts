// Open-pixel and click-redirect links (docs/mail.md §6): `/t/o/<token>` and `/t/c/<token>` under
// `public_url`, or under the domain's tracking subdomain once its CNAME is verified. The token binds
// the team, the email, the recipient (when the message has exactly one, see `recipient` below) and,
// for a click, the destination URL, with an HMAC under the install's tracking secret: a link cannot
// be pointed anywhere else (no open redirect) nor credited to another email. Tokens never expire —
// links sit in mailboxes for years, and keep redirecting after the email itself has expired.
import { Signer } from './signer';

export interface TrackingTarget {
  team: string;
  email: string;
  /**
   * The recipient the message was delivered to, or null when one message went to several envelope
   * recipients (to, cc and bcc share one body, so a hit cannot say which of them it came from).
   */
  recipient: string | null;
}

export interface ClickTarget extends TrackingTarget {
  url: string;
}

export const OPEN_PATH = '/t/o/';
export const CLICK_PATH = '/t/c/';

export class TrackingLinks {
  private readonly signer: Signer;

  constructor(secret: Buffer) {
    this.signer = new Signer(secret);
  }

  /** The pixel URL under `base` (an origin without a trailing slash). */
  openUrl(base: string, t: TrackingTarget): string {
    return `${base}${OPEN_PATH}${this.signer.seal({ k: 'o', t: t.team, e: t.email, r: t.recipient })}`;
  }

  clickUrl(base: string, t: ClickTarget): string {
    return `${base}${CLICK_PATH}${this.signer.seal({ k: 'c', t: t.team, e: t.email, r: t.recipient, u: t.url })}`;
  }

  /** The target of a pixel token, or null when forged, malformed or of another kind. */
  verifyOpen(token: string | null): TrackingTarget | null {
    const p = this.signer.open(token);
    return p && p.k === 'o' ? target(p) : null;
  }

  verifyClick(token: string | null): ClickTarget | null {
    const p = this.signer.open(token);
    if (p?.k !== 'c' || typeof p.u !== 'string') return null;
    const t = target(p);
    return t && { ...t, url: p.u };
  }
}

function target(p: Record<string, unknown>): TrackingTarget | null {
  if (typeof p.t !== 'string' || typeof p.e !== 'string' || (p.r !== null && typeof p.r !== 'string')) return null;
  return { team: p.t, email: p.e, recipient: p.r as string | null };
}

/** The origin tracking links of a domain live under (docs/mail.md §6). */
export function trackingBase(
  publicUrl: string,
  domain: { name: string; tracking_subdomain: string | null; record_status: Record<string, string | undefined> },
): string {
  const pub = new URL(publicUrl);
  // The subdomain only once its CNAME to public_url's host is verified: before, links would not resolve.
  if (domain.tracking_subdomain && domain.record_status.Tracking === 'verified') {
    pub.hostname = `${domain.tracking_subdomain}.${domain.name}`;
    return pub.toString().replace(/\/+$/, '');
  }
  return publicUrl.replace(/\/+$/, '');
}
