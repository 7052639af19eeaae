// What a message sent to a return-path (VERP) address says about the email it returns, read from
// the machine-readable part of a multipart/report (RFC 6522):
//   - report-type=delivery-status (RFC 3464; RFC 6533's global-delivery-status alike): one entry
//     per recipient with its Action and Status; only `Action: failed` is a bounce — delayed,
//     delivered, relayed and expanded are notices (RFC 3464 §2.3.3);
//   - report-type=feedback-report (RFC 5965): a complaint about the message (Feedback-Type abuse,
//     fraud or virus; `not-spam` and DMARC `auth-failure` reports, RFC 6591, are not complaints).
// Anything else — auto-replies (RFC 3834), vacation notices, human answers, reports without their
// machine-readable part — is no report. MIME is mailparser's; the report parts themselves are
// blocks of header-style fields (RFC 3464 §2.1, RFC 5965 §3.1), split and unfolded here.
import type { ParsedMail } from 'mailparser';
import { bounceSubTypeOf, bounceMessage, type Bounce } from './smtp-reply';

export interface RecipientStatus {
  /** Final-Recipient (else Original-Recipient), bare and lowercase. */
  recipient: string;
  /** Original-Recipient as well, when given (forwarding may change the final one). */
  original: string | null;
  action: string;
  /** The DSN's Status field (RFC 3463 code), or null when missing or malformed. */
  status: string | null;
  /** Diagnostic-Code as written, e.g. "smtp; 550 5.1.1 user unknown". */
  diagnostic: string | null;
}

export type Report =
  | { kind: 'delivery-status'; recipients: RecipientStatus[] }
  | { kind: 'feedback'; feedbackType: string; complaint: boolean; recipients: string[] }
  | { kind: 'none'; reason: 'auto-reply' | 'not-a-report' | 'malformed-report' };

type Fields = Map<string, string[]>;

/** RFC 3464 §2.1: groups of fields separated by blank lines; continuation lines start with whitespace. */
export function fieldGroups(text: string): Fields[] {
  const groups: Fields[] = [];
  for (const block of text.replace(/\r\n?/g, '\n').split(/\n[ \t]*\n/)) {
    const fields: Fields = new Map();
    let last: { name: string; index: number } | null = null;
    for (const line of block.split('\n')) {
      if (/^[ \t]/.test(line) && last) {
        const values = fields.get(last.name)!;
        values[last.index] = `${values[last.index]} ${line.trim()}`;
        continue;
      }
      const m = /^([!-9;-~]+)[ \t]*:(.*)$/.exec(line);
      if (!m) continue;
      const name = m[1].toLowerCase();
      const values = fields.get(name) ?? [];
      values.push(m[2].trim());
      fields.set(name, values);
      last = { name, index: values.length - 1 };
    }
    if (fields.size) groups.push(fields);
  }
  return groups;
}

const first = (f: Fields, name: string) => f.get(name)?.[0] ?? null;

/** `rfc822; Bob <bob@x>` / `rfc822;bob@x` / `<bob@x>` → `bob@x` (RFC 3464 §2.3.1-2, RFC 5965 §3.3). */
export function addressOf(value: string | null): string | null {
  if (!value) return null;
  const typed = /^\s*([A-Za-z0-9-]+)\s*;\s*(.*)$/.exec(value);
  if (typed && typed[1].toLowerCase() !== 'rfc822' && typed[1].toLowerCase() !== 'utf-8') return null;
  const text = (typed ? typed[2] : value).replace(/\([^()]*\)/g, '').trim();
  const angle = /<([^<>]+)>/.exec(text);
  const address = (angle ? angle[1] : text).trim().toLowerCase();
  return /^[^\s@]+@[^\s@]+$/.test(address) ? address : null;
}

/** An RFC 3463 status code (`5.1.1`), or null. */
function statusCode(value: string | null): string | null {
  const m = value ? /^\s*([245])\.(\d{1,3})\.(\d{1,3})\b/.exec(value) : null;
  return m ? `${m[1]}.${m[2]}.${m[3]}` : null;
}

/** Which report, if any, the message is. Parse it with `keepDeliveryStatus` so the DSN part is an attachment. */
export function readReport(mail: ParsedMail): Report {
  const type = mail.headers.get('content-type') as { value?: string; params?: Record<string, string> } | undefined;
  const reportType = type?.value?.toLowerCase() === 'multipart/report' ? type.params?.['report-type']?.toLowerCase() : undefined;
  // mailparser gives `false` as the type of a part whose Content-Type is empty: such a part is no report part.
  const part = (...types: string[]) => mail.attachments.find((a) => typeof a.contentType === 'string' && types.includes(a.contentType.toLowerCase()));
  if (reportType === 'delivery-status') {
    const dsn = part('message/delivery-status', 'message/global-delivery-status');
    if (!dsn) return { kind: 'none', reason: 'malformed-report' };
    // The first group is per-message (Reporting-MTA, …), each further one a recipient (§2.2-2.3).
    const recipients: RecipientStatus[] = [];
    for (const f of fieldGroups(dsn.content.toString('utf8')).slice(1)) {
      const original = addressOf(first(f, 'original-recipient'));
      const recipient = addressOf(first(f, 'final-recipient')) ?? original;
      const action = first(f, 'action')?.toLowerCase().split(/[\s(]/)[0] ?? '';
      if (!recipient || !action) continue;
      recipients.push({ recipient, original, action, status: statusCode(first(f, 'status')), diagnostic: first(f, 'diagnostic-code') });
    }
    return recipients.length ? { kind: 'delivery-status', recipients } : { kind: 'none', reason: 'malformed-report' };
  }
  if (reportType === 'feedback-report') {
    const arf = part('message/feedback-report');
    const f = arf && fieldGroups(arf.content.toString('utf8'))[0];
    const feedbackType = f && first(f, 'feedback-type')?.toLowerCase();
    if (!f || !feedbackType) return { kind: 'none', reason: 'malformed-report' };
    const recipients = (f.get('original-rcpt-to') ?? []).map(addressOf).filter((a): a is string => !!a);
    // RFC 5965 §7.3 registry: abuse, fraud, virus are complaints about the mail; other, not-spam are not.
    return { kind: 'feedback', feedbackType, complaint: ['abuse', 'fraud', 'virus'].includes(feedbackType), recipients };
  }
  return { kind: 'none', reason: isAutoReply(mail) ? 'auto-reply' : 'not-a-report' };
}

/** RFC 3834 §5 Auto-Submitted other than `no`, or the vacation programs' customary markers. */
export function isAutoReply(mail: ParsedMail): boolean {
  const h = (name: string) =>
    String(mail.headers.get(name) ?? '')
      .trim()
      .toLowerCase();
  const autoSubmitted = h('auto-submitted');
  if (autoSubmitted && autoSubmitted !== 'no') return true;
  if (['auto_reply', 'auto-reply'].includes(h('precedence'))) return true;
  return mail.headers.has('x-autoreply') || mail.headers.has('x-autorespond');
}

/**
 * The `bounce` of email.bounced for a failed recipient (docs/api.md §14.3): 5.x.x Permanent,
 * 4.x.x Transient (the reporting MTA gave up), anything else Undetermined. The sub-type comes from
 * the Status, or from the Diagnostic-Code's enhanced code when the Status only says X.0.0
 * (Exim reports 5.0.0 for every SMTP rejection).
 */
export function bounceOf(r: RecipientStatus): Bounce {
  const diagnosticCode = r.diagnostic ? [r.diagnostic] : undefined;
  const cls = r.status?.[0];
  if (cls !== '5' && cls !== '4') return { type: 'Undetermined', subType: 'Undetermined', message: bounceMessage('Undetermined'), diagnosticCode };
  let code = r.status!;
  if (code.endsWith('.0.0')) {
    const fromDiagnostic = r.diagnostic ? /\b([245])\.(\d{1,3})\.(\d{1,3})\b/.exec(r.diagnostic.replace(/^[^;]*;/, '')) : null;
    if (fromDiagnostic && fromDiagnostic[1] === cls) code = fromDiagnostic.slice(1).join('.');
  }
  const subType = bounceSubTypeOf(code);
  if (cls === '5') return { type: 'Permanent', subType, message: bounceMessage(subType), diagnosticCode };
  return {
    type: 'Transient',
    subType,
    message: "The recipient's email provider gave up delivering the message after temporary failures.",
    diagnosticCode,
  };
}
