// VERP envelope senders (SPEC.md §3): MAIL FROM is `bounces+<token>@<return path>.<domain>`, the
// token naming the email, so a DSN or ARF report arriving at Posthorn's MX maps back to it (the
// report names the recipient). token = the email id's 32 hex digits + "-" + a 10-hex-digit tag,
// HMAC-SHA256 of the id under a per-install key: a forged bounce for a guessed id is told apart.
// The local part stays at 51 characters, inside RFC 5321 §4.5.3.1.1's 64, and lowercase only, so
// it survives MTAs that fold case. The key derives from a random secret written once to the
// store's `meta` database (it moves with backups, unlike a file beside it).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Store, DomainRec, EmailRec } from '../store';

const PREFIX = 'bounces+';
const TAG_HEX = 10;
const SECRET_KEY = 'verp_secret';
const TOKEN_RE = /^([0-9a-f]{32})-([0-9a-f]{10})$/;

/** The return-path host of a domain (its `custom_return_path` subdomain, api-reference §9.7). */
export function returnPathHost(d: Pick<DomainRec, 'custom_return_path' | 'name'>): string {
  return `${d.custom_return_path}.${d.name}`;
}

export class Verp {
  private key: Buffer | null = null;

  constructor(private readonly store: Store) {}

  /** MAIL FROM for an email sent from domain `d`. */
  sender(email: Pick<EmailRec, 'id'>, d: Pick<DomainRec, 'custom_return_path' | 'name'>): string {
    return `${PREFIX}${this.token(email.id)}@${returnPathHost(d)}`;
  }

  token(emailId: string): string {
    const hex = emailId.replace(/-/g, '').toLowerCase();
    return `${hex}-${this.tag(hex)}`;
  }

  /**
   * The email id and return-path host of a VERP address, or null when it is not one of ours or its
   * tag does not match (forged or mangled). Case-insensitive.
   */
  decode(address: string): { emailId: string; host: string } | null {
    const at = address.lastIndexOf('@');
    if (at < 0) return null;
    const local = address.slice(0, at).toLowerCase();
    const host = address.slice(at + 1).toLowerCase().replace(/\.$/, '');
    if (!local.startsWith(PREFIX) || !host) return null;
    const m = TOKEN_RE.exec(local.slice(PREFIX.length));
    if (!m) return null;
    const [, hex, tag] = m;
    if (!timingSafeEqual(Buffer.from(tag), Buffer.from(this.tag(hex)))) return null;
    const emailId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    return { emailId, host };
  }

  /**
   * The team and email a VERP address stands for: the host must be the return-path host of a
   * registered domain, and the email must belong to that domain's team. Null otherwise.
   */
  resolve(address: string): { team_id: string; email_id: string; domain_id: string } | null {
    const hit = this.decode(address);
    if (!hit) return null;
    const dot = hit.host.indexOf('.');
    if (dot < 0) return null;
    const d = this.store.domains.find('name', hit.host.slice(dot + 1));
    if (!d || returnPathHost(d).toLowerCase() !== hit.host) return null;
    const email = this.store.emails.get(d.team_id, hit.emailId);
    if (!email) return null;
    return { team_id: d.team_id, email_id: email.id, domain_id: d.id };
  }

  private tag(hex: string): string {
    return createHmac('sha256', this.hmacKey()).update(hex).digest('hex').slice(0, TAG_HEX);
  }

  /** Read the install's secret, creating it on first use (one synchronous write, atomic). */
  private hmacKey(): Buffer {
    if (this.key) return this.key;
    const meta = this.store.env.db('meta');
    const existing = meta.get(SECRET_KEY) as Uint8Array | undefined;
    const secret = existing ?? this.store.env.root.transactionSync(() => {
      let s = meta.get(SECRET_KEY) as Uint8Array | undefined;
      if (!s) {
        s = randomBytes(32);
        meta.put(SECRET_KEY, s);
      }
      return s;
    }) as Uint8Array;
    this.key = createHmac('sha256', Buffer.from(secret)).update('posthorn verp v1').digest();
    return this.key;
  }
}
