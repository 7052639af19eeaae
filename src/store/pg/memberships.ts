// Contact ↔ segment memberships on PostgreSQL: one row per membership, indexed both ways (by
// segment: the primary key; by contact: memberships_contact), as the LMDB backend keeps two orders.
import { unitOf, type Exec } from './env';
import { pageOf, parse } from './collection';
import type { MembershipsTx, Page, PageQuery } from '../interface';
import type { ContactRec, SegmentRec } from '../records';

export class PgMemberships implements MembershipsTx {
  constructor(private readonly exec: Exec) {}

  bind(exec: Exec): PgMemberships {
    return new PgMemberships(exec);
  }

  async has(team: string, segmentId: string, contactId: string): Promise<boolean> {
    return (await this.exec.query('SELECT 1 FROM memberships WHERE team = $1 AND segment = $2 AND contact = $3', [team, segmentId, contactId])).length > 0;
  }

  async add(team: string, segmentId: string, contactId: string, at: string): Promise<boolean> {
    unitOf(this.exec);
    const rows = await this.exec.query('INSERT INTO memberships (team, segment, contact, at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING 1', [
      team,
      segmentId,
      contactId,
      at,
    ]);
    return rows.length > 0;
  }

  async remove(team: string, segmentId: string, contactId: string): Promise<boolean> {
    unitOf(this.exec);
    const rows = await this.exec.query('DELETE FROM memberships WHERE team = $1 AND segment = $2 AND contact = $3 RETURNING 1', [team, segmentId, contactId]);
    return rows.length > 0;
  }

  async segmentsOf(team: string, contactId: string): Promise<string[]> {
    const rows: { segment: string }[] = await this.exec.query('SELECT segment FROM memberships WHERE team = $1 AND contact = $2 ORDER BY segment', [
      team,
      contactId,
    ]);
    return rows.map((r) => r.segment);
  }

  async membershipsOf(team: string, contactId: string): Promise<{ segment_id: string; at: string }[]> {
    const rows: { segment: string; at: string }[] = await this.exec.query(
      'SELECT segment, at FROM memberships WHERE team = $1 AND contact = $2 ORDER BY at, segment',
      [team, contactId],
    );
    return rows.map((r) => ({ segment_id: r.segment, at: r.at }));
  }

  async contactsOf(team: string, segmentId: string): Promise<string[]> {
    const rows: { contact: string }[] = await this.exec.query('SELECT contact FROM memberships WHERE team = $1 AND segment = $2 ORDER BY contact', [
      team,
      segmentId,
    ]);
    return rows.map((r) => r.contact);
  }

  async removeContact(team: string, contactId: string): Promise<void> {
    unitOf(this.exec).write('DELETE FROM memberships WHERE team = $1 AND contact = $2', [team, contactId]);
  }

  async removeSegment(team: string, segmentId: string): Promise<void> {
    unitOf(this.exec).write('DELETE FROM memberships WHERE team = $1 AND segment = $2', [team, segmentId]);
  }

  async pageContacts(team: string, segmentId: string, q: PageQuery): Promise<Page<ContactRec>> {
    // The contact's id is the cursor: the page is a join read in contact id order.
    return pageOf(
      this.exec,
      'SELECT * FROM (SELECT c.id, c.value::text AS value FROM memberships m JOIN contacts c ON c.team = m.team AND c.id = m.contact WHERE m.team = $1 AND m.segment = $2) j',
      'true',
      [team, segmentId],
      q,
      null,
      (row) => parse<ContactRec>(row.value),
    );
  }

  async pageSegments(team: string, contactId: string, q: PageQuery, defaultLimit: number | null): Promise<Page<SegmentRec>> {
    return pageOf(
      this.exec,
      'SELECT * FROM (SELECT s.id, s.value::text AS value FROM memberships m JOIN segments s ON s.team = m.team AND s.id = m.segment WHERE m.team = $1 AND m.contact = $2) j',
      'true',
      [team, contactId],
      q,
      defaultLimit,
      (row) => parse<SegmentRec>(row.value),
    );
  }
}
