// VERP envelope senders (SPEC.md §3): MAIL FROM is `bounces+<token>@<return path>.<domain>`, the
// token naming the email and the recipient domain of the delivery it was used for, so a DSN or
// ARF report arriving at Posthorn's MX maps back to the email and can only speak for recipients
// of that delivery (a recipient at one domain cannot get another domain's recipients suppressed
// with the return path it saw). token = the email id's 32 hex digits + "-" + a 10-hex-digit tag,
// HMAC-SHA256 of id and recipient domain under a per-install secret: a forged bounce for a guessed
// id is told apart. The local part stays at 51 characters, inside RFC 5321 §4.5.3.1.1's 64, and
// lowercase only, so it survives MTAs that fold case.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Store, DomainRec, EmailRec } from '../store';

const PREFIX = 'bounces+';
const TAG_HEX = 10;
const TOKEN_RE = /^([0-9a-f]{32})-([0-9a-f]{10})$/;

/** The return-path host of a domain (its `custom_return_path` subdomain, api-reference §9.7). */
export function returnPathHost(d: Pick<DomainRec, 'custom_return_path' | 'name'>): string {
  return `${d.custom_return_path}.${d.name}`;
}

export class Verp {
  private key: Buffer | null = null;

  constructor(private readonly store: Store) {}

  /** MAIL FROM for the delivery of an email from domain `d` to recipients at `rcptDomain`. */
  sender(email: Pick<EmailRec, 'id'>, d: Pick<DomainRec, 'custom_return_path' | 'name'>, rcptDomain: string): string {
    return `${PREFIX}${this.token(email.id, rcptDomain)}@${returnPathHost(d)}`;
  }

  token(emailId: string, rcptDomain: string): string {
    const hex = emailId.replace(/-/g, '').toLowerCase();
    return `${hex}-${this.tag(hex, rcptDomain)}`;
  }

  /**
   * The email id, tag and return-path host of a VERP-shaped address, or null. The tag is checked by
   * `resolve`, which knows the email's recipient domains. Case-insensitive.
   */
  decode(address: string): { emailId: string; hex: string; tag: string; host: string } | null {
    const at = address.lastIndexOf('@');
    if (at < 0) return null;
    const local = address.slice(0, at).toLowerCase();
    const host = address.slice(at + 1).toLowerCase().replace(/\.$/, '');
    if (!local.startsWith(PREFIX) || !host) return null;
    const m = TOKEN_RE.exec(local.slice(PREFIX.length));
    if (!m) return null;
    const [, hex, tag] = m;
    const emailId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    return { emailId, hex, tag, host };
  }

  /**
   * The team and email a VERP address stands for: the host must be the return-path host of a
   * registered domain, and the email must belong to that domain's team. Null otherwise.
   */
  resolve(address: string): { team_id: string; email_id: string; domain_id: string; recipient_domain: string } | null {
    const hit = this.decode(address);
    if (!hit) return null;
    const dot = hit.host.indexOf('.');
    if (dot < 0) return null;
    const d = this.store.domains.find('name', hit.host.slice(dot + 1));
    if (!d || returnPathHost(d).toLowerCase() !== hit.host) return null;
    const email = this.store.emails.get(d.team_id, hit.emailId);
    if (!email) return null;
    // The tag names one of the email's recipient domains, or the address is forged.
    const domains = new Set(Object.keys(email.recipients).map((r) => r.slice(r.lastIndexOf('@') + 1).toLowerCase()));
    for (const rcptDomain of domains)
      if (timingSafeEqual(Buffer.from(hit.tag), Buffer.from(this.tag(hit.hex, rcptDomain))))
        return { team_id: d.team_id, email_id: email.id, domain_id: d.id, recipient_domain: rcptDomain };
    return null;
  }

  private tag(hex: string, rcptDomain: string): string {
    return createHmac('sha256', this.hmacKey()).update(`${hex}|${rcptDomain.toLowerCase()}`).digest('hex').slice(0, TAG_HEX);
  }

  private hmacKey(): Buffer {
    this.key ??= createHmac('sha256', this.store.secrets.get('verp')).update('posthorn verp v1').digest();
    return this.key;
  }
}
