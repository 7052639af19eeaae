// A message from an unauthenticated session (SPEC.md §3: inbound only). Its recipients were
// accepted at RCPT for one of two reasons (recipients.ts), and it is handled once for each:
// receiving-domain recipients, grouped by team, get the message stored (received.ts); return-path
// recipients get it read as a report (reports.ts) and applied to the email their VERP token names
// (bounces.ts). All of it commits together before the 250 (SPEC.md §2: accepted means durable).
import { simpleParser } from 'mailparser';
import type { Services } from '../services';
import { log } from '../log';
import { replies } from './replies';
import { destinationOf } from './recipients';
import { prepareReceived, type Arrival, type PreparedReceived } from './received';
import { readReport, type Report } from './reports';
import { reportTarget, applyReportInTxn, type ReportAction } from './bounces';

/** Throws a 550 when no recipient is still Posthorn's to accept (never a 250 for mail then dropped). */
export async function receiveInbound(svc: Services, arrival: Arrival, recipients: string[]): Promise<void> {
  const teams = new Map<string, string[]>();
  const returnPaths: string[] = [];
  for (const given of recipients) {
    // The domain in lowercase; the local part as given (RFC 5321 §2.4: it may be case-sensitive).
    const at = given.lastIndexOf('@');
    const rcpt = `${given.slice(0, at)}@${given.slice(at + 1).toLowerCase()}`;
    // Looked up again: a domain changed since RCPT no longer receives (it was checked there too).
    const dest = destinationOf(svc.store, rcpt);
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
      const action = reportTarget(svc, address, report);
      if (action) actions.push(action);
    }
  }

  if (!received && actions.length === 0) return;
  const saved = await svc.store.transaction(() => {
    const recs = received?.commitInTxn() ?? [];
    for (const a of actions) applyReportInTxn(svc, a);
    return recs;
  });
  for (const r of saved) log.info('smtp.inbound.stored', { team_id: r.team_id, email_id: r.id, received_for: r.received_for, size: r.size });
}
