// Contact ↔ segment memberships, stored twice so both directions are ordered range scans:
// [team, segment, contact] lists a segment's contacts newest first (contact ids are UUIDv7),
// [team, contact, segment] lists a contact's segments.
import type { Database, Key } from 'lmdb';
import type { StoreEnv } from './env';
import { paginate, type Page, type PageQuery } from './paginate';

export class Memberships {
  private readonly bySegment: Database;
  private readonly byContact: Database;

  constructor(env: StoreEnv) {
    this.bySegment = env.db('members.by_segment');
    this.byContact = env.db('members.by_contact');
  }

  has(team: string, segmentId: string, contactId: string): boolean {
    return this.bySegment.doesExist([team, segmentId, contactId]);
  }

  /** Inside a transaction. Returns true when the membership is new. */
  addInTxn(team: string, segmentId: string, contactId: string, at: string): boolean {
    if (this.has(team, segmentId, contactId)) return false;
    this.bySegment.put([team, segmentId, contactId], at);
    this.byContact.put([team, contactId, segmentId], at);
    return true;
  }

  /** Inside a transaction. Returns true when a membership was removed. */
  removeInTxn(team: string, segmentId: string, contactId: string): boolean {
    if (!this.has(team, segmentId, contactId)) return false;
    this.bySegment.remove([team, segmentId, contactId]);
    this.byContact.remove([team, contactId, segmentId]);
    return true;
  }

  segmentsOf(team: string, contactId: string): string[] {
    return Array.from(this.byContact.getKeys({ start: [team, contactId, ''], end: [team, contactId, '\uffff'] }), (k) => String((k as Key[])[2]));
  }

  /** A contact's memberships with the time each was added, oldest first. */
  membershipsOf(team: string, contactId: string): { segment_id: string; at: string }[] {
    const all = Array.from(this.byContact.getRange({ start: [team, contactId, ''], end: [team, contactId, '\uffff'] }), ({ key, value }) => ({
      segment_id: String((key as Key[])[2]),
      at: String(value),
    }));
    return all.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.segment_id < b.segment_id ? -1 : 1));
  }

  contactsOf(team: string, segmentId: string): string[] {
    return Array.from(this.bySegment.getKeys({ start: [team, segmentId, ''], end: [team, segmentId, '\uffff'] }), (k) => String((k as Key[])[2]));
  }

  /** Inside a transaction: drop every membership of a contact. */
  removeContactInTxn(team: string, contactId: string): void {
    for (const seg of this.segmentsOf(team, contactId)) this.removeInTxn(team, seg, contactId);
  }

  /** Inside a transaction: drop every membership of a segment (contacts stay). */
  removeSegmentInTxn(team: string, segmentId: string): void {
    for (const c of this.contactsOf(team, segmentId)) this.removeInTxn(team, segmentId, c);
  }

  pageContacts<T>(team: string, segmentId: string, q: PageQuery, load: (contactId: string) => T | undefined): Page<T> {
    return paginate(this.bySegment, [team, segmentId], q, null, (k) => load(String(k[2])));
  }

  pageSegments<T>(team: string, contactId: string, q: PageQuery, limit: number | null, load: (segmentId: string) => T | undefined): Page<T> {
    return paginate(this.byContact, [team, contactId], q, limit, (k) => load(String(k[2])));
  }
}
