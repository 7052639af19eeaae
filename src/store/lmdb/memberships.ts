// Contact ↔ segment memberships, stored twice so both directions are ordered range scans:
// [team, segment, contact] lists a segment's contacts newest first (contact ids are UUIDv7),
// [team, contact, segment] lists a contact's segments.
import type { Database, Key, LmdbEnv } from './env';
import type { LmdbCollection } from './collection';
import { paginate } from '../paginate';
import type { MembershipsTx, Page, PageQuery } from '../interface';
import type { ContactRec, SegmentRec } from '../records';

export class LmdbMemberships implements MembershipsTx {
  private readonly bySegment: Database;
  private readonly byContact: Database;

  constructor(
    private readonly env: LmdbEnv,
    private readonly contacts: LmdbCollection<ContactRec, 'email'>,
    private readonly segments: LmdbCollection<SegmentRec>,
  ) {
    this.bySegment = env.db('members.by_segment');
    this.byContact = env.db('members.by_contact');
  }

  async has(team: string, segmentId: string, contactId: string): Promise<boolean> {
    return this.bySegment.doesExist([team, segmentId, contactId]);
  }

  async add(team: string, segmentId: string, contactId: string, at: string): Promise<boolean> {
    this.env.assertWriting();
    if (this.bySegment.doesExist([team, segmentId, contactId])) return false;
    this.bySegment.put([team, segmentId, contactId], at);
    this.byContact.put([team, contactId, segmentId], at);
    return true;
  }

  async remove(team: string, segmentId: string, contactId: string): Promise<boolean> {
    this.env.assertWriting();
    return this.drop(team, segmentId, contactId);
  }

  async segmentsOf(team: string, contactId: string): Promise<string[]> {
    return this.segmentIds(team, contactId);
  }

  async membershipsOf(team: string, contactId: string): Promise<{ segment_id: string; at: string }[]> {
    const all = Array.from(this.byContact.getRange({ start: [team, contactId, ''], end: [team, contactId, '\uffff'] }), ({ key, value }) => ({
      segment_id: String((key as Key[])[2]),
      at: String(value),
    }));
    return all.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.segment_id < b.segment_id ? -1 : 1));
  }

  async contactsOf(team: string, segmentId: string): Promise<string[]> {
    return this.contactIds(team, segmentId);
  }

  async removeContact(team: string, contactId: string): Promise<void> {
    this.env.assertWriting();
    for (const seg of this.segmentIds(team, contactId)) this.drop(team, seg, contactId);
  }

  async removeSegment(team: string, segmentId: string): Promise<void> {
    this.env.assertWriting();
    for (const c of this.contactIds(team, segmentId)) this.drop(team, segmentId, c);
  }

  async pageContacts(team: string, segmentId: string, q: PageQuery): Promise<Page<ContactRec>> {
    return paginate(this.bySegment, [team, segmentId], q, null, (k) => this.contacts.read(team, String(k[2])));
  }

  async pageSegments(team: string, contactId: string, q: PageQuery, defaultLimit: number | null): Promise<Page<SegmentRec>> {
    return paginate(this.byContact, [team, contactId], q, defaultLimit, (k) => this.segments.read(team, String(k[2])));
  }

  private drop(team: string, segmentId: string, contactId: string): boolean {
    if (!this.bySegment.doesExist([team, segmentId, contactId])) return false;
    this.bySegment.remove([team, segmentId, contactId]);
    this.byContact.remove([team, contactId, segmentId]);
    return true;
  }

  private segmentIds(team: string, contactId: string): string[] {
    return Array.from(this.byContact.getKeys({ start: [team, contactId, ''], end: [team, contactId, '\uffff'] }), (k) => String((k as Key[])[2]));
  }

  private contactIds(team: string, segmentId: string): string[] {
    return Array.from(this.bySegment.getKeys({ start: [team, segmentId, ''], end: [team, segmentId, '\uffff'] }), (k) => String((k as Key[])[2]));
  }
}
