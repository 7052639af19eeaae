// A message from an unauthenticated session (docs/mail.md §4: inbound only) is spooled, as Postfix
// queues it: its recipients looked up again (they were checked at RCPT, recipients.ts) and grouped —
// receiving-domain recipients by team, return-path recipients apart — then the bytes and the
// envelope committed to the inbound spool. The 250 follows that flushed commit (accepted means
// durable); parsing, SPF/DKIM/DMARC and storing per team happen after, in the inbound processor
// (src/inbound/), woken by the commit.
import type { SpooledMessage, Store } from '../store';
import { newId } from '../ids';
import { replies } from './replies';
import { destinationOf } from './recipients';

/** What the listener needs for inbound mail: only the store. */
export interface SpoolDeps {
  store: Store;
}

/** One SMTP transaction as it arrived. */
export interface Arrival {
  raw: Uint8Array;
  envelope: SpooledMessage['envelope'];
  sessionId: string;
}

/** Throws a 550 when no recipient is still Posthorn's to accept (never a 250 for mail then dropped). */
export async function spoolInbound(svc: SpoolDeps, arrival: Arrival, recipients: string[]): Promise<SpooledMessage> {
  const teams = new Map<string, SpooledMessage['inbound'][number]>();
  const reports: string[] = [];
  for (const given of recipients) {
    // The domain in lowercase; the local part as given (RFC 5321 §2.4: it may be case-sensitive).
    const at = given.lastIndexOf('@');
    const rcpt = `${given.slice(0, at)}@${given.slice(at + 1).toLowerCase()}`;
    // Looked up again: a domain changed since RCPT no longer receives (it was checked there too).
    const dest = await destinationOf(svc.store, rcpt);
    if (dest?.kind === 'inbound') {
      const team = dest.domain.team_id;
      const group = teams.get(team);
      if (group) group.recipients.push(rcpt);
      else teams.set(team, { team_id: team, domain_id: dest.domain.id, recipients: [rcpt] });
    } else if (dest?.kind === 'return-path') reports.push(rcpt);
  }
  if (teams.size === 0 && reports.length === 0) throw replies.noRecipients();

  const msg: SpooledMessage = {
    id: newId(),
    received_at: new Date().toISOString(),
    envelope: arrival.envelope,
    session_id: arrival.sessionId,
    inbound: [...teams.values()],
    reports,
    size: arrival.raw.byteLength,
    attempts: 0,
    attempting: false,
    error: null,
  };
  await svc.store.write(async (tx) => tx.inboundSpool.add(msg, arrival.raw, Date.now()));
  return msg;
}
