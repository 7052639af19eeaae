// A message from an unauthenticated session (docs/mail.md §4: inbound only). Its recipients were
// accepted at RCPT for one of two reasons (recipients.ts), and it is handled once for each:
// receiving-domain recipients, grouped by team, get the message stored (received.ts); return-path
// recipients get it read as a report (mail/reports.ts) and applied to the email their VERP token
// names (feedback/). All of it commits together before the 250 (accepted means durable).
import { simpleParser } from 'mailparser';
import type { Resolver } from '../dns/resolver';
import type { Events } from '../events';
import type { Feedback, ReportAction } from '../feedback';
import type { Store } from '../store';
import { log } from '../log';
import { readReport, type Report } from '../mail/reports';
import { replies } from './replies';
import { destinationOf } from './recipients';
import { prepareReceived, type Arrival, type PreparedReceived } from './received';

export interface InboundDeps {
  store: Store;
  events: Events;
  dns: Resolver;
  feedback: Feedback;
}

/** Throws a 550 when no recipient is still Posthorn's to accept (never a 250 for mail then dropped). */
export async function receiveInbound(svc: InboundDeps, arrival: Arrival, recipients: string[]): Promise<void> {
  const teams = new Map<string, string[]>();
  const returnPaths: string[] = [];
  for (const given of recipients) {
    // The domain in lowercase; the local part as given (RFC 5321 §2.4: it may be case-sensitive).
    const at = given.lastIndexOf('@');
    const rcpt = `${given.slice(0, at)}@${given.slice(at + 1).toLowerCase()}`;
    // Looked up again: a domain changed since RCPT no longer receives (it was checked there too).
    const dest = await destinationOf(svc.store, rcpt);
    if (dest?.kind === 'inbound') teams.set(dest.domain.team_id, [...(teams.get(dest.domain.team_id) ?? []), rcpt]);
    else if (dest?.kind === 'return-path') returnPaths.push(rcpt);
  }

  if (teams.size === 0 && returnPaths.length === 0) throw replies.noRecipients();

  let received: PreparedReceived | null = null;
  if (teams.size) received = await prepareReceived(svc, arrival, teams);

  const actions: ReportAction[] = [];
  if (returnPaths.length) {
    let report: Report;
    try {
      // keepDeliveryStatus: the message/delivery-status part as an attachment, not body text.
      report = readReport(await simpleParser(arrival.raw, { keepDeliveryStatus: true, skipHtmlToText: true }));
    } catch {
      report = { kind: 'none', reason: 'malformed-report' };
    }
    for (const address of returnPaths) {
      const action = await svc.feedback.target(address, report);
      if (action) actions.push(action);
    }
  }

  if (!received && actions.length === 0) return;
  const saved = await svc.store.write(async (tx) => {
    const recs = (await received?.commit(tx)) ?? [];
    for (const a of actions) await svc.feedback.apply(tx, a);
    return recs;
  });
  for (const r of saved) log.info('smtp.inbound.stored', { team_id: r.team_id, email_id: r.id, received_for: r.received_for, size: r.size });
}
