// The settling of a delivery attempt (docs/ARCHITECTURE.md §4, step 11), every recipient in the one
// unit of work the engine opens for it: each reply has its bounce class (mail/bounce-class.ts,
// `classesOf`), becomes an outcome (outcomeOf: the seam where the reading of a reply lives), each
// outcome is recorded on the email through the one event function (recordOutcome), and the entry
// waits for its retry with who is left, or leaves:
//   2xx → delivered; 5xx → bounced (Permanent), the address suppressed when its class says the
//   address is at fault (suppressions/index.ts suppressionRule: `recipient` at once, `mailbox_full`
//   at the third in 30 days); 4xx or no connection → retried, delivery_delayed on a recipient's
//   first temporary failure, bounced (Transient) once the retry window is over (docs/mail.md §3,
//   docs/api.md §7.8, §14.2). Replies of the sender's classes are incidents (incidents.ts).
// A simulated attempt (sandbox.ts) is settled the same way, except that it suppresses nobody and
// complained@resend.dev's delivery is followed by its complaint (docs/api.md §7.11).
import type { Events } from '../events';
import { recipientKey } from '../events';
import { recordComplaint } from '../feedback';
import { type BounceClass, type BounceClassifier, replyInput } from '../mail/bounce-class';
import { sandboxOutcome } from '../mail/sandbox';
import { bounceFor, enhancedCode, localReply, verdict, type Bounce, type Reply } from '../mail/smtp-reply';
import { type DeliveryAttempt, type EmailRec, MAX_ATTEMPTS, type QueueEntry, type TlsReportPolicy, type Tx } from '../store';
import { suppressBounce, suppressionRule } from '../suppressions';
import type { AttemptResult, StsOutcome } from './attempt';

/** What one recipient's reply in an attempt comes to. */
export type RecipientOutcome =
  | { kind: 'delivered' }
  /** `suppress`: what the bounce does to the address, by its class (suppressions/index.ts suppressionRule). */
  | { kind: 'bounced'; bounce: Bounce; class: BounceClass; suppress: 'now' | 'repeated' | 'never'; reply: string }
  /** To be tried again; `announce`: its first temporary failure (email.delivery_delayed). */
  | { kind: 'deferred'; announce: boolean }
  /** A temporary failure of a recipient canceled during the attempt: nothing more happens. */
  | { kind: 'dropped' };

/** What a reply is judged beside. */
export interface ReplyContext {
  /** The entry's retry window has ended (work/retry.ts windowOver). */
  windowOver: boolean;
  /** The email was canceled while the attempt was under way. */
  canceled: boolean;
  /** The recipient is `delayed` already (delivery_delayed is sent once). */
  delayed: boolean;
}

/**
 * A recipient's reply, of its bounce class, → its outcome. Every 5xx bounces (Permanent, with
 * Resend's sub-type: the event is the same whatever the class); the class decides only whether the
 * address is suppressed.
 */
export function outcomeOf(reply: Reply, ctx: ReplyContext, cls: BounceClass): RecipientOutcome {
  switch (verdict(reply)) {
    case 'delivered':
      return { kind: 'delivered' };
    case 'permanent':
      return { kind: 'bounced', bounce: bounceFor(reply, 'Permanent'), class: cls, suppress: suppressionRule(cls), reply: reply.text };
    case 'temporary':
      if (ctx.canceled) return { kind: 'dropped' };
      if (ctx.windowOver) return { kind: 'bounced', bounce: bounceFor(reply, 'Transient'), class: cls, suppress: 'never', reply: reply.text };
      return { kind: 'deferred', announce: !ctx.delayed };
  }
}

/** The bounce class of each recipient's reply that is not a delivery (null: delivered). */
export function classesOf(entry: QueueEntry, result: AttemptResult, classifier: BounceClassifier): Map<string, BounceClass | null> {
  return new Map(
    entry.recipients.map((r) => {
      const reply = replyFor(result, r);
      return [r, verdict(reply) === 'delivered' ? null : classifier.classify(replyInput(reply))];
    }),
  );
}

/** The reply an attempt has for a recipient (one it failed to give one for is a temporary failure). */
export function replyFor(result: AttemptResult, recipient: string): Reply {
  return result.replies.get(recipient) ?? localReply(451, '4.4.0', 'no reply for this recipient');
}

/**
 * Whose outcome is recorded: the entry's, while it is in the queue (`live`); a canceled email's
 * (docs/api.md §7.6: what the destination did with the message is still recorded, nothing is tried
 * again); nobody's when the email is gone (retention) or its entry left meanwhile (domain failure).
 */
export function settleScope(email: EmailRec | undefined, live: QueueEntry | undefined, entry: QueueEntry): 'live' | 'canceled' | null {
  if (!email) return null;
  if (live) return 'live';
  return entry.recipients.some((r) => email.recipients[recipientKey(email.recipients, r) ?? r] === 'canceled') ? 'canceled' : null;
}

/** The attempt as kept on the email (docs/api.md §7.3): host, address, TLS, MTA-STS mode, every recipient's reply and its class. */
export function attemptRecord(
  entry: QueueEntry,
  result: AttemptResult,
  started: number,
  now: number,
  classes: Map<string, BounceClass | null>,
): DeliveryAttempt {
  return {
    at: new Date(started).toISOString(),
    domain: entry.domain,
    host: result.host,
    ip: result.ip ?? null,
    tls: result.tls,
    tls_version: result.tlsVersion ?? null,
    tls_cipher: result.tlsCipher ?? null,
    mta_sts: result.sts?.policy ? (result.sts.policy.mode as 'enforce' | 'testing') : null,
    duration_ms: now - started,
    results: entry.recipients.map((r) => {
      const reply = result.replies.get(r);
      return {
        recipient: r,
        code: reply?.code ?? 451,
        enhanced_code: reply ? enhancedCode(reply) : null,
        reply: reply?.text ?? 'no reply for this recipient',
        class: classes.get(r) ?? null,
      };
    }),
    ...(result.simulated ? { simulated: true as const } : {}),
    // The sending IP bound to, when `delivery.ips` is set (README "Sending IPs and warm-up").
    // With its site, so that a complaint about this delivery is matched back to the address there (feedback/sending-ips.ts).
    ...(result.source ? { sending_ip: result.source, ...(result.site ? { sending_site: result.site } : {}) } : {}),
  };
}

/** The email with one more attempt kept (the last MAX_ATTEMPTS). */
export function withAttempt(email: EmailRec, attempt: DeliveryAttempt): EmailRec {
  return { ...email, attempts: [...(email.attempts ?? []), attempt].slice(-MAX_ATTEMPTS) };
}

export interface Counts {
  delivered: number;
  deferred: number;
  bounced: number;
}

/** What the settling of an attempt's recipients did. */
export interface Settled {
  /** The email as it now is. */
  email: EmailRec;
  /** Whether an event stored it (else the caller does). */
  stored: boolean;
  counts: Counts;
  /** The recipients to try again, and the last of their replies; null when none is. */
  retry: { recipients: string[]; lastError: string } | null;
}

/**
 * Each recipient's outcome, recorded in order on `email`: the record in hand is the current one.
 * `classes`: each reply's bounce class (classesOf); `site`: the destination's, kept on a suppression;
 * `provider`: the mailbox provider the events count under (shaping.ts SiteRules.provider).
 */
export async function settleRecipients(
  tx: Tx,
  events: Events,
  email: EmailRec,
  entry: QueueEntry,
  result: AttemptResult,
  ctx: Omit<ReplyContext, 'delayed'>,
  classes: Map<string, BounceClass | null>,
  site: string | null = null,
  provider?: string,
): Promise<Settled> {
  const s: Settled = { email, stored: false, counts: { delivered: 0, deferred: 0, bounced: 0 }, retry: null };
  for (const rcpt of entry.recipients) {
    const reply = replyFor(result, rcpt);
    let outcome = outcomeOf(reply, { ...ctx, delayed: s.email.recipients[rcpt] === 'delayed' }, classes.get(rcpt) ?? 'unknown');
    // A sandbox address's bounce is simulated: it suppresses nobody (docs/api.md §7.11).
    if (result.simulated && outcome.kind === 'bounced') outcome = { ...outcome, suppress: 'never' };
    const recorded = await recordOutcome(tx, events, s.email, rcpt, outcome, site, provider, result.source);
    if (recorded) {
      s.email = recorded;
      s.stored = true;
    }
    // complained@resend.dev: delivered, then complained, as an ARF report would say (feedback/index.ts).
    if (result.simulated && outcome.kind === 'delivered' && sandboxOutcome(rcpt) === 'complained') {
      const complained = await recordComplaint(tx, events, s.email, rcpt, { suppress: false, current: true });
      if (complained) s.email = complained;
    }
    if (outcome.kind === 'delivered') s.counts.delivered++;
    else if (outcome.kind === 'bounced') s.counts.bounced++;
    else if (outcome.kind === 'deferred') {
      s.counts.deferred++;
      if (s.retry) {
        s.retry.recipients.push(rcpt);
        s.retry.lastError = reply.text;
      } else s.retry = { recipients: [rcpt], lastError: reply.text };
    }
  }
  return s;
}

/**
 * One recipient's outcome on the email: its event (which moves the metric counters and hands
 * webhooks their event) and, for a permanent bounce whose class says so, the address suppressed
 * (with the class, the reply and the site). `provider`: the mailbox provider the event counts under,
 * `ip`: the sending IP it left from (docs/api.md §7.9, "By sending IP").
 * Returns the email as the event stored it, or null when nothing was stored.
 */
export async function recordOutcome(
  tx: Tx,
  events: Events,
  email: EmailRec,
  rcpt: string,
  outcome: RecipientOutcome,
  site: string | null = null,
  provider?: string,
  ip?: string,
): Promise<EmailRec | null> {
  // The record in hand is the current one: each event stores it (with the attempt), none reads it back.
  const current = true;
  switch (outcome.kind) {
    case 'delivered':
      return events.email(tx, email, 'delivered', { recipients: [rcpt], current, site: provider, ip });
    case 'bounced': {
      const next = await events.email(tx, email, 'bounced', { recipients: [rcpt], bounce: outcome.bounce, class: outcome.class, current, site: provider, ip });
      if (outcome.suppress !== 'never') await suppressBounce(events, tx, next.team_id, rcpt, next.id, { class: outcome.class, reply: outcome.reply, site });
      return next;
    }
    case 'deferred':
      // email.delivery_delayed once per recipient: its state is `delayed` from then on.
      return outcome.announce ? events.email(tx, email, 'delivery_delayed', { recipients: [rcpt], current, site: provider, ip }) : null;
    case 'dropped':
      return null;
  }
}

/**
 * When the recipients left are tried again: the schedule's time from this failure (`scheduled`;
 * the claim's time was only the lease), and never before a suspension of their site ends
 * (`spread`: shaping.ts Shaper.spread).
 */
export function retryDue(scheduled: number, suspendedUntil: number | null | undefined, spread: (until: number) => number): number {
  return suspendedUntil && suspendedUntil > scheduled ? spread(suspendedUntil) : scheduled;
}

/** The entry waiting for its retry with the recipients left, the site its MX showed, no longer in flight. */
export function retried(live: QueueEntry, remaining: string[], lastError: string, site: string): QueueEntry {
  return { ...live, recipients: remaining, last_error: lastError, attempting: null, site };
}

/**
 * An attempt that did not happen (its site had no room once its MX showed which site it is): the
 * entry as it was before the claim, no longer in flight, with the site now known.
 */
export function putBack(live: QueueEntry, before: QueueEntry, site: string): QueueEntry {
  return { ...live, attempts: before.attempts, first_attempt_at: before.first_attempt_at, attempting: null, site };
}

/** An attempt's sessions added to its team's TLS-RPT day of the policy domain (RFC 8460, docs/api.md §19.8). */
export function recordTls(tx: Tx, team: string, domain: string, sts: StsOutcome, at: number): void {
  const { policy } = sts;
  const day = new Date(at).toISOString().slice(0, 10);
  const info: TlsReportPolicy = policy
    ? { type: 'sts', string: policy.text.split(/\r?\n/).filter((l) => l.trim() !== ''), mx_host: policy.mx }
    : { type: 'no-policy-found', string: [], mx_host: [] };
  tx.tlsReports.add(team, day, domain, info, sts.success, sts.failures);
}
