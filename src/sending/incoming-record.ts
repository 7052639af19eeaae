// What the incoming queue keeps of a batch accepted as received (docs/ARCHITECTURE.md §4, "The incoming queue"):
// the prepared emails in one record (store IncomingRec), so the accepting commit writes one record
// per request rather than several per email. incoming.ts writes them as their emails later.
import type { IncomingRec } from '../store';
import { nowIso } from '../ids';
import type { Prepared } from './submit';

/**
 * Attachments (decoded bytes, the whole request's) a record of the incoming queue may hold. Larger ones are
 * staged to files before the commit as for a single send (store.emailContent.stage), so such a
 * batch is written as its emails at once: a record of many megabytes would be copied whole at
 * each read and write.
 */
export const INCOMING_FILE_BYTES = 256 * 1024;

/** May these emails be accepted as received? */
export function fitsIncoming(prepared: readonly Prepared[]): boolean {
  let bytes = 0;
  for (const p of prepared) for (const f of Object.values(p.content.files)) bytes += f.byteLength;
  return bytes <= INCOMING_FILE_BYTES;
}

/** The record of one request's emails (all of one team), keyed by its first email's id. */
export function incomingRecord(prepared: readonly Prepared[], sandbox: boolean): IncomingRec {
  return {
    id: prepared[0]!.email.id,
    team_id: prepared[0]!.email.team_id,
    created_at: nowIso(),
    sandbox,
    emails: prepared.map((p) => ({ email: p.email, content: p.content, ...(p.region ? { region: p.region } : {}) })),
  };
}
