// Posthorn's SMTP replies (docs/api.md §17): basic code (RFC 5321 §4.2) plus enhanced status code
// (RFC 3463), and how an API error of the sending core reads over SMTP. The reply text starts with
// its enhanced code, which server.ts tells smtp-server to send as written.
import { ApiError } from '../errors';

/** An SMTP error reply; smtp-server sends `responseCode` and `message`. */
export class SmtpReply extends Error {
  constructor(
    readonly responseCode: number,
    readonly enhanced: string,
    readonly text: string,
  ) {
    super(`${enhanced} ${text.replace(/[\r\n]+/g, ' ')}`);
  }

  override toString(): string {
    return `${this.responseCode} ${this.message}`;
  }
}

/** A reply text that already carries its enhanced status code (RFC 3463 §2: class.subject.detail). */
export const HAS_ENHANCED_CODE = /^[245]\.\d{1,3}\.\d{1,3} /;

export const replies = {
  /** The text of the 250 to DATA, sent once the email is durably stored. */
  accepted: (emailId: string) => `2.0.0 OK ${emailId}`,
  /** The 250 to DATA for inbound mail and reports (nothing the client can look up). */
  received: () => '2.0.0 OK',
  // RFC 3207 §4, RFC 4954 §4: no plaintext password on an unencrypted session.
  startTlsFirst: () => new SmtpReply(530, '5.7.0', 'Must issue a STARTTLS command first'),
  // RFC 4954 §6: 535 5.7.8 authentication credentials invalid.
  authFailed: () => new SmtpReply(535, '5.7.8', 'Authentication credentials invalid'),
  // RFC 4954 §6: 454 4.7.0 temporary authentication failure (cluster mode: the database is unreachable).
  authUnavailable: () => new SmtpReply(454, '4.7.0', 'Temporary authentication failure. Try again later.'),
  // RFC 3463 §3.8 X.7.1: delivery not authorized — Posthorn is never an open relay.
  relayDenied: () => new SmtpReply(550, '5.7.1', 'Relaying denied'),
  // RFC 5321 §4.3.2: 535 is not a DATA reply; a key revoked since AUTH refuses the message itself.
  keyRevoked: () => new SmtpReply(554, '5.7.8', 'The API key used to authenticate is no longer valid'),
  // RFC 3463 §3.2 X.1.1: every recipient accepted at RCPT stopped receiving before the data came.
  noRecipients: () => new SmtpReply(550, '5.1.1', 'No valid recipients: the domain no longer receives mail here'),
  // RFC 3463 §3.8 X.7.1 as a temporary condition: the team's request rate (docs/api.md §6).
  rateLimited: (perSecond: number) => new SmtpReply(451, '4.7.1', `Too many requests. You can only make ${perSecond} requests per second. Try again later.`),
  // RFC 3463 §3.4 X.3.1: too many messages in memory at once (server.ts MAX_BUFFERED_BYTES).
  overloaded: () => new SmtpReply(452, '4.3.1', 'Insufficient system resources. Try again later.'),
  // RFC 5321 §2.3.8 (lines end with CRLF), RFC 3463 §3.6 X.5.2 syntax error; 521 and a close, as Postfix.
  bareLineEnding: (kind: 'LF' | 'CR') => new SmtpReply(521, '5.5.2', `Bare <${kind}> received: lines must end with <CR><LF> (RFC 5321 §2.3.8)`),
  // RFC 3463 §3.4 X.3.0: something went wrong here; the client keeps the message and retries.
  localError: () => new SmtpReply(451, '4.3.0', 'Local error in processing. Try again later.'),
  // RFC 3463 §3.7 X.6.0: the content could not be used (unparseable message).
  badContent: (text: string) => new SmtpReply(554, '5.6.0', text),
};

/**
 * An error of the sending core (or of the idempotency layer) as the SMTP reply of §17:
 * 403 → 550 5.7.1 (sending domain), 422/400 → 554 5.6.0, a key reused with another message →
 * 554 5.7.0, a key still in flight or the rate limit → 451 4.7.1; the API's message either way.
 */
export function replyForApiError(e: ApiError): SmtpReply {
  // RFC 3463 §3.4 X.3.0: the database is out of reach (cluster mode); nothing was accepted.
  if (e.statusCode === 503) return new SmtpReply(451, '4.3.0', e.message);
  if (e.statusCode === 403) return new SmtpReply(550, '5.7.1', e.message);
  if (e.errorName === 'invalid_idempotent_request') return new SmtpReply(554, '5.7.0', e.message);
  if (e.errorName === 'concurrent_idempotent_requests' || e.statusCode === 429) return new SmtpReply(451, '4.7.1', `${e.message}`);
  if (e.statusCode >= 400 && e.statusCode < 500) return new SmtpReply(554, '5.6.0', e.message);
  return replies.localError();
}

/** The reply for whatever a DATA handler threw. */
export function replyFor(e: unknown): SmtpReply {
  if (e instanceof SmtpReply) return e;
  if (e instanceof ApiError) return replyForApiError(e);
  return replies.localError();
}
