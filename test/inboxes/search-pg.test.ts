// Inbox search in cluster mode (src/store/pg/inbox-text.ts): PostgreSQL's full-text rows follow
// the inbox messages the collection writes (a trigger: put, put again, remove), and a query finds
// the threads of one inbox of one team by subject, participants and body, the last word as a
// prefix — through the seam the API asks (src/inboxes/search-store.ts DatabaseThreadSearch).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type InboxMessageRec, type Store } from '../../src/store';
import { DatabaseThreadSearch } from '../../src/inboxes/search-store';
import { tsQuery } from '../../src/store/pg/inbox-text';
import { postgres } from '../helpers/postgres';

let store: Store;
let dir: string;

beforeAll(async () => {
  const pg = await postgres();
  dir = mkdtempSync(join(tmpdir(), 'inbox-text-'));
  store = await openStore({ dataDir: dir, databaseUrl: await pg.database('inbox_text'), retentionDays: 30, holdMs: 0 });
});

afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

function message(team: string, m: Partial<InboxMessageRec> & { thread_id: string }): InboxMessageRec {
  const at = new Date().toISOString();
  return {
    id: Bun.randomUUIDv7(),
    team_id: team,
    created_at: at,
    inbox_id: 'inbox-1',
    direction: 'inbound',
    source_id: Bun.randomUUIDv7(),
    from: 'Dana Scully <dana@fbi.test>',
    to: ['support@acme.test'],
    cc: [],
    bcc: [],
    reply_to: [],
    subject: null,
    message_id: null,
    references: [],
    html: null,
    text: null,
    attachments: [],
    read: false,
    received_at: at,
    ...m,
  };
}

describe('inbox search on PostgreSQL', () => {
  test('the rows follow the messages, and a query finds threads by subject, participants and body', async () => {
    const search = new DatabaseThreadSearch(store.inboxText!);
    const a = message('t1', { thread_id: 'thread-a', subject: 'Invoice 2026-11 is wrong', text: 'The total is double.' });
    const b = message('t1', { thread_id: 'thread-a', subject: 'Re: Invoice', html: '<p>Refund <b>issued</b></p>', direction: 'outbound' });
    const c = message('t1', { thread_id: 'thread-c', subject: 'Cannot sign in', text: 'Password reset never arrives', from: 'mulder@fbi.test' });
    const other = message('t2', { thread_id: 'thread-x', subject: 'Invoice question', text: 'refund please' });
    await store.write(async (tx) => {
      for (const m of [a, b, c, other]) tx.inboxMessages.put(m);
    });
    const q = async (team: string, text: string, inbox = 'inbox-1') =>
      (await search.query(store, team, inbox, text)).map((h) => [h.thread_id, h.matched_email_id]);
    expect(await q('t1', 'refund')).toEqual([['thread-a', b.id]]);
    expect(await q('t1', 'invoice')).toHaveLength(1);
    expect(await q('t1', 'password res')).toEqual([['thread-c', c.id]]);
    expect(await q('t1', 'scully')).toEqual([['thread-a', expect.any(String)]]);
    expect(await q('t1', 'password invoice')).toEqual([]);
    expect(await q('t1', 'invoice', 'inbox-2')).toEqual([]);
    expect(await q('t2', 'invoice')).toEqual([['thread-x', other.id]]);
    // The HTML's tags are not words.
    expect(await q('t1', 'b')).toEqual([]);

    // A message changed and one removed: the rows follow in the same commit.
    await store.write(async (tx) => {
      tx.inboxMessages.put({ ...c, text: 'Solved: it was the spam folder' });
      tx.inboxMessages.remove('t1', b.id);
    });
    expect(await q('t1', 'password')).toEqual([]);
    expect(await q('t1', 'spam folder')).toEqual([['thread-c', c.id]]);
    expect(await q('t1', 'refund')).toEqual([]);
  });

  test('a query as a tsquery: words of letters and digits, ANDed, the last a prefix; nothing else gets in', () => {
    expect(tsQuery("it's a ': & | ! refund")).toBe("'it' & 's' & 'a' & 'refund':*");
    expect(tsQuery('  ')).toBeNull();
    expect(tsQuery('Ünïcode 42')).toBe("'ünïcode' & '42':*");
  });
});
