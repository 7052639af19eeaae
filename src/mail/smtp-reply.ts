// SMTP replies and what they mean for a recipient: 2xx delivered, 4xx retry, 5xx bounce
// (RFC 5321 §4.2.1), with the bounce sub-type read from the enhanced status code (RFC 3463 §3)
// as the `bounce` of an email.bounced event reports it (docs/api.md §14.3).

/** `bounce` of an email.bounced event (docs/api.md §14.3). */
export interface Bounce {
  type: 'Permanent' | 'Transient' | 'Undetermined';
  subType: 'General' | 'NoEmail' | 'MailboxFull' | 'MessageTooLarge' | 'ContentRejected' | 'AttachmentRejected' | 'Undetermined';
  message: string;
  diagnosticCode?: string[];
}

/** One SMTP reply: the basic code and the whole text, continuation lines folded into one. */
export interface Reply {
  code: number;
  /** e.g. "550 5.1.1 <bob@dest.test>: user unknown" */
  text: string;
  /** Made up by Posthorn (a DNS, connection or TLS failure), not said by the remote server. */
  local?: true;
}

export type Verdict = 'delivered' | 'temporary' | 'permanent';

/** Parse a raw server reply ("550-5.1.1 a\n550 5.1.1 b") into one line ("550 5.1.1 a b"). */
export function parseReply(raw: string): Reply | null {
  const lines = raw
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  const m = /^([2-5]\d\d)[ -]?/.exec(lines[0] ?? '');
  if (!m) return null;
  const code = Number(m[1]);
  // RFC 5321 §4.2.1: every line of a multi-line reply repeats the code; keep its text once.
  const parts = lines.map((l, i) => (i === 0 ? l.replace(/^(\d{3})-/, '$1 ') : l.replace(/^\d{3}[ -]?/, '').replace(/^\d\.\d{1,3}\.\d{1,3}\s*/, '')));
  return { code, text: parts.join(' ').replace(/\s+/g, ' ').trim() };
}

/** A reply Posthorn makes up for a failure that produced none (DNS, connection, TLS), RFC 3463 codes. */
export function localReply(code: number, enhanced: string, text: string): Reply {
  return { code, text: `${code} ${enhanced} ${text}`.replace(/[\r\n]+/g, ' '), local: true };
}

export function verdict(r: Reply): Verdict {
  if (r.code < 400) return 'delivered';
  // 503 "bad sequence of commands" (RFC 5321 §4.2.4) says the session went wrong, not the
  // recipient: retry rather than bounce and suppress the address.
  if (r.code === 503) return 'temporary';
  return r.code < 500 ? 'temporary' : 'permanent';
}

/** The enhanced status code of a reply ("5.1.1"), or null (RFC 3463 §2: class.subject.detail). */
export function enhancedCode(r: Reply): string | null {
  const m = /^\d{3} ([245])\.(\d{1,3})\.(\d{1,3})\b/.exec(r.text);
  return m ? `${m[1]}.${m[2]}.${m[3]}` : null;
}

type SubType = Bounce['subType'];

/** docs/api.md §14.3: 5.1.x NoEmail, x.2.2 MailboxFull, x.3.4 MessageTooLarge, 5.7.x ContentRejected. */
export function bounceSubType(r: Reply): SubType {
  return bounceSubTypeOf(enhancedCode(r));
}

/** The same mapping for an enhanced status code alone (e.g. a DSN's Status field, RFC 3464 §2.3.4). */
export function bounceSubTypeOf(code: string | null): SubType {
  if (!code) return 'General';
  const [cls, subject, detail] = code.split('.');
  if (subject === '2' && detail === '2') return 'MailboxFull'; // RFC 3463 §3.3 X.2.2 mailbox full
  if (subject === '3' && detail === '4') return 'MessageTooLarge'; // §3.4 X.3.4 message too big
  if (cls === '5' && subject === '1') return 'NoEmail'; // §3.2 addressing status
  if (cls === '5' && subject === '7') return 'ContentRejected'; // §3.8 security or policy status
  return 'General';
}

const MESSAGES: Record<SubType, string> = {
  General: "The recipient's email provider sent a hard bounce message.",
  NoEmail: "The recipient's mailbox does not exist.",
  MailboxFull: "The recipient's mailbox is full.",
  MessageTooLarge: 'The message is larger than the recipient accepts.',
  ContentRejected: "The recipient's email provider rejected the message for its content or sender policy.",
  AttachmentRejected: "The recipient's email provider rejected an attachment of the message.",
  Undetermined: 'The bounce could not be classified.',
};

/** The human-readable `bounce.message` of a sub-type. */
export const bounceMessage = (subType: SubType): string => MESSAGES[subType];

/** `bounce` of an email.bounced event for a 5xx reply (Permanent) or an exhausted retry window (Transient). */
export function bounceFor(r: Reply, type: 'Permanent' | 'Transient'): Bounce {
  const subType = bounceSubType(r);
  const message =
    type === 'Transient' ? 'The message could not be delivered before the retry window ended; the last attempt failed temporarily.' : MESSAGES[subType];
  return { type, subType, message, diagnosticCode: [`smtp; ${r.text}`] };
}
