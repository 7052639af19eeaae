// The inbox search index (src/inboxes/search.ts) over a source held in memory: what it finds and
// filters, that it catches up with messages stored after it was made (as the back office stores
// them), that an index written to disk and loaded again answers the same, and that the indexes
// in memory stay under their bound.
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addressTerms, InboxSearch, type MessageSource, type SearchableMessage } from '../../src/inboxes/search';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'inbox-search-'));
  dirs.push(d);
  return d;
};

/** The store's messages, per team, oldest first, read as the index reads them. */
class Source implements MessageSource {
  readonly teams = new Map<string, SearchableMessage[]>();
  reads = 0;
  put(team: string, m: Partial<SearchableMessage> & { thread_id: string }): SearchableMessage {
    const full: SearchableMessage = {
      id: Bun.randomUUIDv7(),
      inbox_id: 'inbox-1',
      subject: '',
      from: 'Customer <customer@client.test>',
      to: ['support@acme.test'],
      cc: [],
      bcc: [],
      text: '',
      created_at: new Date().toISOString(),
      has_attachments: false,
      ...m,
    };
    const list = this.teams.get(team) ?? [];
    list.push(full);
    list.sort((a, b) => (a.id < b.id ? -1 : 1));
    this.teams.set(team, list);
    return full;
  }
  async after(team: string, after: string | null, limit: number) {
    this.reads++;
    return (this.teams.get(team) ?? []).filter((m) => after === null || m.id > after).slice(0, limit);
  }
}

describe('inbox search', () => {
  test('finds threads by words of the subject, the body and the participants, best message first', async () => {
    const source = new Source();
    const s = new InboxSearch({ source, dir: null });
    source.put('t1', { thread_id: 'th-invoice', subject: 'Invoice 2026-11 is wrong', text: 'The total is double what we agreed.' });
    const answer = source.put('t1', { thread_id: 'th-invoice', subject: 'Re: Invoice 2026-11 is wrong', text: 'Refund issued for the invoice.' });
    source.put('t1', { thread_id: 'th-login', subject: 'Cannot sign in', text: 'Password reset mail never arrives', from: 'Dana Scully <dana@fbi.test>' });
    source.put('t2', { thread_id: 'th-other-team', subject: 'Invoice question', text: 'refund please' });

    expect((await s.search('t1', { inbox_id: 'inbox-1', query: 'refund' })).map((h) => [h.thread_id, h.email_id])).toEqual([['th-invoice', answer.id]]);
    expect((await s.search('t1', { inbox_id: 'inbox-1', query: 'invoice' })).map((h) => h.thread_id)).toEqual(['th-invoice']);
    // Words are ANDed; the last may be the start of a word; a long word forgives a typo.
    expect((await s.search('t1', { inbox_id: 'inbox-1', query: 'password res' })).map((h) => h.thread_id)).toEqual(['th-login']);
    expect((await s.search('t1', { inbox_id: 'inbox-1', query: 'pasword' })).map((h) => h.thread_id)).toEqual(['th-login']);
    expect(await s.search('t1', { inbox_id: 'inbox-1', query: 'password invoice' })).toEqual([]);
    // Words in nearly every message are not indexed, and do not hold a query back.
    expect((await s.search('t1', { inbox_id: 'inbox-1', query: 'the refund' })).map((h) => h.thread_id)).toEqual(['th-invoice']);
    // Participants: by name in the text query, by address, name or domain in `from`.
    expect((await s.search('t1', { inbox_id: 'inbox-1', query: 'scully' })).map((h) => h.thread_id)).toEqual(['th-login']);
    expect((await s.search('t1', { inbox_id: 'inbox-1', from: ['dana@fbi.test'] })).map((h) => h.thread_id)).toEqual(['th-login']);
    expect((await s.search('t1', { inbox_id: 'inbox-1', from: ['fbi.test'] })).map((h) => h.thread_id)).toEqual(['th-login']);
    expect(await s.search('t1', { inbox_id: 'inbox-1', from: ['other@fbi.test'] })).toEqual([]);
    expect(await s.search('t1', { inbox_id: 'inbox-1', to: ['dana@fbi.test'] })).toEqual([]);
    // Another inbox, another team: nothing.
    expect(await s.search('t1', { inbox_id: 'inbox-2', query: 'invoice' })).toEqual([]);
    expect((await s.search('t2', { inbox_id: 'inbox-1', query: 'invoice' })).map((h) => h.thread_id)).toEqual(['th-other-team']);
  });

  test('filters by attachment and time, and with no words lists matches newest first', async () => {
    const source = new Source();
    const s = new InboxSearch({ source, dir: null });
    source.put('t', { thread_id: 'old', subject: 'Report', created_at: '2026-01-01T00:00:00.000Z', has_attachments: true });
    source.put('t', { thread_id: 'new', subject: 'Report', created_at: '2026-06-01T00:00:00.000Z' });
    expect((await s.search('t', { inbox_id: 'inbox-1' })).map((h) => h.thread_id)).toEqual(['new', 'old']);
    expect((await s.search('t', { inbox_id: 'inbox-1', query: 'report', has_attachment: true })).map((h) => h.thread_id)).toEqual(['old']);
    expect((await s.search('t', { inbox_id: 'inbox-1', query: 'report', start: Date.parse('2026-03-01') })).map((h) => h.thread_id)).toEqual(['new']);
    expect((await s.search('t', { inbox_id: 'inbox-1', end: Date.parse('2026-03-01') })).map((h) => h.thread_id)).toEqual(['old']);
  });

  test('catches up with messages stored after the index was made, and forgets removed ones', async () => {
    const source = new Source();
    const s = new InboxSearch({ source, dir: null });
    source.put('t', { thread_id: 'a', subject: 'first' });
    expect(await s.search('t', { inbox_id: 'inbox-1', query: 'second' })).toEqual([]);
    const second = source.put('t', { thread_id: 'b', subject: 'second' });
    expect((await s.search('t', { inbox_id: 'inbox-1', query: 'second' })).map((h) => h.thread_id)).toEqual(['b']);
    // Indexed once, whatever the catch-up re-reads behind its newest id.
    expect(s.size).toBe(2);
    // The store removes it (a thread deleted), and says so.
    source.teams.set(
      't',
      source.teams.get('t')!.filter((m) => m.id !== second.id),
    );
    s.forget('t', [second.id]);
    expect(await s.search('t', { inbox_id: 'inbox-1', query: 'second' })).toEqual([]);
  });

  test('an index written to disk is loaded again and caught up, not rebuilt', async () => {
    const dir = tempDir();
    const source = new Source();
    for (let i = 0; i < 50; i++) source.put('team/1', { thread_id: `th-${i}`, subject: `order ${i}`, text: i === 7 ? 'the parcel arrived broken' : 'thanks' });
    const first = new InboxSearch({ source, dir });
    expect((await first.search('team/1', { inbox_id: 'inbox-1', query: 'broken' })).map((h) => h.thread_id)).toEqual(['th-7']);
    await first.close();
    expect(readdirSync(dir)).toEqual(['team%2F1.json']);

    source.put('team/1', { thread_id: 'th-late', subject: 'broken lid' });
    source.reads = 0;
    const second = new InboxSearch({ source, dir });
    expect((await second.search('team/1', { inbox_id: 'inbox-1', query: 'broken' })).map((h) => h.thread_id).sort()).toEqual(['th-7', 'th-late']);
    // One read after the saved newest id (less than a batch): the 50 were not read again.
    expect(source.reads).toBe(1);
  });

  test('keeps at most maxDocs messages in memory, writing the least recently searched out', async () => {
    const dir = tempDir();
    const source = new Source();
    for (const team of ['a', 'b', 'c']) for (let i = 0; i < 10; i++) source.put(team, { thread_id: `${team}-${i}`, subject: `hello ${team}` });
    const s = new InboxSearch({ source, dir, maxDocs: 25 });
    await s.search('a', { inbox_id: 'inbox-1', query: 'hello' });
    await s.search('b', { inbox_id: 'inbox-1', query: 'hello' });
    expect(s.size).toBe(20);
    await s.search('c', { inbox_id: 'inbox-1', query: 'hello' });
    expect(s.size).toBe(20);
    expect(readdirSync(dir)).toEqual(['a.json']);
    expect((await s.search('a', { inbox_id: 'inbox-1', query: 'hello' })).length).toBe(10);
  });

  test('address terms: the address, its parts and the display name', () => {
    expect(addressTerms('"Dana Scully" <Dana@FBI.test>')).toEqual(['dana@fbi.test', 'dana', 'fbi.test', 'dana', 'scully']);
    expect(addressTerms('a@x.test, B <b@y.test>')).toEqual(['a@x.test', 'a', 'x.test', 'b@y.test', 'b', 'y.test', 'b']);
  });
});
