// Asynchronous bounces and complaints (docs/mail.md §1): a report that arrives at a VERP address
// `bounces+<token>@<return path>.<domain>` names the email through the token (mail/verp.ts,
// forged or mangled tags resolve to nothing) and the recipient through its own fields. A failed
// recipient becomes `email.bounced`; a Permanent one suppresses the address when its bounce class
// says the address is at fault — the class of its Status and Diagnostic-Code by the same rules as
// the delivery engine's replies (mail/bounce-class.ts; suppressions/index.ts suppressBounce); a complaint
// becomes `email.complained` and a suppression (origin complaint) — through the one event function,
// like the delivery engine's own bounces. Everything else is accepted and dropped, with a log line:
// a 250 tells the reporting MTA to stop, and nothing about the email changes.
import { recipientKey, type Events } from '../events';
import type { EmailRec, Store, StoreReader, Tx } from '../store';
import { suppress, suppressBounce } from '../suppressions';
import { type BounceClassifier, dsnInput } from '../mail/bounce-class';
import { log } from '../log';
import { bounceOf, type Report } from '../mail/reports';
import { decodeVerp, returnPathHost, Verp } from '../mail/verp';
import { countComplaint } from './sending-ips';

export interface FeedbackDeps {
  store: Store;
  events: Events;
  /** The bounce classes' rules (the delivery engine's). */
  bounces: BounceClassifier;
}

/** Reports arriving at return-path addresses, as SMTP inbound hands them over. */
export class Feedback {
  private readonly verp: Verp;

  constructor(private readonly deps: FeedbackDeps) {
    this.verp = new Verp(deps.store.secret('verp'));
  }

  /** What a report to `address` will do, or null (logged) when it is for nothing of ours. */
  target(address: string, report: Report): Promise<ReportAction | null> {
    return reportTarget(this.deps.store, this.verp, address, report);
  }

  /** In a unit of work: apply a report. */
  apply(tx: Tx, action: ReportAction): Promise<void> {
    return applyReport(tx, this.deps.events, action, this.deps.bounces);
  }
}

/**
 * The team and email a VERP address stands for: the host must be the return-path host of a
 * registered domain, the email must belong to that domain's team, and the tag must be the one this
 * install wrote for one of the email's recipient domains. Null otherwise.
 */
export async function resolveVerp(
  store: StoreReader,
  verp: Verp,
  address: string,
): Promise<{ team_id: string; email_id: string; domain_id: string; recipient_domain: string } | null> {
  const hit = decodeVerp(address);
  if (!hit) return null;
  const dot = hit.host.indexOf('.');
  if (dot < 0) return null;
  const d = await store.domains.find('name', hit.host.slice(dot + 1));
  if (!d || returnPathHost(d).toLowerCase() !== hit.host) return null;
  const email = await store.emails.get(d.team_id, hit.emailId);
  if (!email) return null;
  const domains = new Set(Object.keys(email.recipients).map((r) => r.slice(r.lastIndexOf('@') + 1).toLowerCase()));
  for (const rcptDomain of domains)
    if (verp.tagMatches(hit, rcptDomain)) return { team_id: d.team_id, email_id: email.id, domain_id: d.id, recipient_domain: rcptDomain };
  return null;
}

/** What a report will do to one email, decided before the transaction. */
export interface ReportAction {
  team: string;
  emailId: string;
  report: Report;
  /** The VERP address it arrived at, for the log. */
  address: string;
  /** The recipient domain of the delivery whose return path it arrived at: it speaks for no other. */
  recipientDomain: string;
}

/** The email a VERP address stands for, or null (logged) when the tag is forged or the email gone. */
export async function reportTarget(store: StoreReader, verp: Verp, address: string, report: Report): Promise<ReportAction | null> {
  const hit = await resolveVerp(store, verp, address);
  // The token must also come back at the return-path host it was sent from (the email's own domain).
  if (!hit || (await store.emails.get(hit.team_id, hit.email_id))?.domain_id !== hit.domain_id) {
    log.warn('smtp.report.dropped', { to: address, reason: 'not a valid VERP address (forged tag or unknown email)', report: report.kind });
    return null;
  }
  if (report.kind === 'none') {
    log.info('smtp.report.dropped', { to: address, email_id: hit.email_id, reason: report.reason });
    return null;
  }
  return { team: hit.team_id, emailId: hit.email_id, report, address, recipientDomain: hit.recipient_domain };
}

/** In a unit of work: apply a report to its email. */
export async function applyReport(tx: Tx, events: Events, a: ReportAction, bounces: BounceClassifier): Promise<void> {
  let email = await tx.emails.get(a.team, a.emailId);
  if (!email) return;
  // Only recipients of the delivery this return path was used for (see delivery/verp.ts).
  const inDelivery = (key: string | null) => (key && key.slice(key.lastIndexOf('@') + 1).toLowerCase() === a.recipientDomain ? key : null);
  const ours = (addr: string | null) => (addr ? inDelivery(recipientKey(email!.recipients, addr)) : null);
  const drop = (reason: string, fields: Record<string, unknown> = {}) =>
    log.info('smtp.report.dropped', { email_id: a.emailId, to: a.address, report: a.report.kind, reason, ...fields });

  if (a.report.kind === 'delivery-status') {
    for (const r of a.report.recipients) {
      if (r.action !== 'failed') {
        drop(`Action: ${r.action} is not a failure`, { recipient: r.recipient });
        continue;
      }
      // Only the email's own recipients: a report cannot suppress an address the email never had.
      const rcpt = ours(r.recipient) ?? ours(r.original);
      if (!rcpt) {
        drop("recipient is not one of the email's", { recipient: r.recipient });
        continue;
      }
      if (email.recipients[rcpt] === 'bounced') continue; // already reported (a duplicate DSN, or the engine's own bounce)
      const bounce = bounceOf(r);
      const input = dsnInput(r.status, r.diagnostic);
      const cls = bounces.classify(input);
      email = await events.email(tx, email, 'bounced', { recipients: [rcpt], bounce, class: cls });
      if (bounce.type === 'Permanent') await suppressBounce(events, tx, email.team_id, rcpt, email.id, { class: cls, reply: input.text, site: null });
      log.info('smtp.report.bounce', { email_id: email.id, recipient: rcpt, type: bounce.type, status: r.status, class: cls });
    }
    return;
  }
  if (a.report.kind === 'feedback') {
    if (!a.report.complaint) return drop(`Feedback-Type: ${a.report.feedbackType} is not a complaint`);
    const rcpt = complainant(email, a.report.recipients, inDelivery);
    if (!rcpt) return drop('cannot tell which recipient complained');
    if (!(await recordComplaint(tx, events, email, rcpt, { suppress: true }))) return;
    log.info('smtp.report.complaint', { email_id: email.id, recipient: rcpt, feedback_type: a.report.feedbackType });
  }
}

/**
 * A recipient's complaint: `email.complained` through the one event function (its webhooks and
 * counters) and, with `suppress`, the address on the suppression list (origin complaint). What an
 * ARF report does, and what a sandbox address's simulated complaint does without the suppression
 * (docs/api.md §7.11). `current`: the record in hand is the current one (the event reads no other).
 * Returns the email as stored, or null when the recipient had complained already.
 */
export async function recordComplaint(
  tx: Tx,
  events: Events,
  email: EmailRec,
  rcpt: string,
  opts: { suppress: boolean; current?: boolean },
): Promise<EmailRec | null> {
  if (email.recipients[rcpt] === 'complained') return null;
  const next = await events.email(tx, email, 'complained', { recipients: [rcpt], current: opts.current });
  // The sending IP that delivered it counts the complaint: over 0.08 % a day, its warm-up holds and slows.
  await countComplaint(tx, next, rcpt, Date.now());
  if (opts.suppress) await suppress(events, tx, next.team_id, rcpt, 'complaint', next.id);
  return next;
}

/**
 * The recipient an ARF report is about: its Original-Rcpt-To when that is one of the email's
 * recipients; when it is absent or redacted (RFC 6590), the only recipient of that delivery, if any.
 */
function complainant(email: EmailRec, named: string[], inDelivery: (key: string | null) => string | null): string | null {
  for (const r of named) {
    const key = inDelivery(recipientKey(email.recipients, r));
    if (key) return key;
  }
  const all = Object.keys(email.recipients).filter((k) => inDelivery(k));
  return all.length === 1 ? all[0] : null;
}
