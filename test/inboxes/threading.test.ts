// The thread a message joins, decided without a store (src/inboxes/threading.ts, docs/api.md §25.4):
// RFC 5322 §3.6.4 ids, the normalised subject, the window and the participants; and what is spam
// (src/inboxes/intake.ts).
import { describe, test, expect } from 'bun:test';
import {
  bySubject,
  messageIds,
  participantsOf,
  replyReferences,
  replySubject,
  forwardSubject,
  subjectKey,
  threadKeys,
  SUBJECT_WINDOW_DAYS,
} from '../../src/inboxes/threading';
import { isSpam } from '../../src/inboxes/intake';
import { pageOf, passes, threadFilter } from '../../src/inboxes/listing';
import type { InboxThreadRec } from '../../src/store';

describe('RFC 5322 §3.6.4 ids', () => {
  test.each([
    ['<a@x>', ['<a@x>']],
    ['  <a@x>\r\n\t<b@y> <c@z>', ['<a@x>', '<b@y>', '<c@z>']],
    ['(comment) <a@x>', ['<a@x>']],
    ['no brackets', []],
    [null, []],
  ])('messageIds(%p)', (field, ids) => {
    expect(messageIds(field)).toEqual(ids);
  });

  test('lookup order: In-Reply-To, then References newest first, each once', () => {
    expect(threadKeys('<c@z>', '<a@x> <b@y> <c@z>')).toEqual(['<c@z>', '<b@y>', '<a@x>']);
    expect(threadKeys(null, '<a@x> <b@y>')).toEqual(['<b@y>', '<a@x>']);
    expect(threadKeys(null, null)).toEqual([]);
  });

  test("a reply's References: the parent's, then the parent's id", () => {
    expect(replyReferences({ message_id: '<c@z>', references: ['<a@x>', '<b@y>'] })).toEqual(['<a@x>', '<b@y>', '<c@z>']);
    expect(replyReferences({ message_id: '<a@x>', references: [] })).toEqual(['<a@x>']);
    expect(replyReferences({ message_id: null, references: ['<a@x>'] })).toEqual(['<a@x>']);
  });
});

describe('subjects', () => {
  test.each([
    ['Order 42', 'order 42'],
    ['Re: Order 42', 'order 42'],
    ['RE: re: Fwd: Order  42 ', 'order 42'],
    ['AW: WG: Order 42', 'order 42'],
    ['Re[2]: Order 42', 'order 42'],
    ['[support] Re: Order 42', 'order 42'],
    ['SV: Order 42', 'order 42'],
    ['Reply needed', 'reply needed'],
    ['', ''],
    [null, ''],
  ])('subjectKey(%p) = %p', (subject, key) => {
    expect(subjectKey(subject)).toBe(key);
  });

  test('reply and forward subjects get one prefix', () => {
    expect(replySubject('Order 42')).toBe('Re: Order 42');
    expect(replySubject('RE: Order 42')).toBe('RE: Order 42');
    expect(forwardSubject('Order 42')).toBe('Fwd: Order 42');
    expect(forwardSubject('Fw: Order 42')).toBe('Fw: Order 42');
  });
});

describe('joining by subject and participants', () => {
  const now = '2026-11-27T12:00:00.000Z';
  const daysAgo = (d: number) => new Date(Date.parse(now) - d * 86_400_000).toISOString();
  const c = (id: string, participants: string[], lastDays: number, folder = 'inbox') => ({ id, participants, last_at: daysAgo(lastDays), folder });
  const me = 'support@help.test';

  test.each([
    ['a shared participant, within the window', [c('t1', [me, 'ann@x.test'], 1)], 't1'],
    ['only the inbox in common', [c('t1', [me, 'bob@x.test'], 1)], null],
    ['outside the window', [c('t1', [me, 'ann@x.test'], SUBJECT_WINDOW_DAYS + 1)], null],
    ['in the trash', [c('t1', [me, 'ann@x.test'], 1, 'trash')], null],
    ['the most recently active of two', [c('t1', ['ann@x.test'], 5), c('t2', ['ann@x.test'], 2)], 't2'],
  ])('%s', (_, candidates, expected) => {
    expect(bySubject('order 42', ['ann@x.test', me], me, now, candidates)).toBe(expected);
  });

  test('no subject never joins by subject', () => {
    expect(bySubject('', ['ann@x.test'], me, now, [c('t1', ['ann@x.test'], 1)])).toBeNull();
  });

  test('participants: every address of a message, bare and lowercase, once', () => {
    expect(participantsOf({ from: 'Ann <Ann@X.test>', to: ['support@help.test'], cc: ['ann@x.test', 'Bob <b@y.test>'] })).toEqual([
      'ann@x.test',
      'support@help.test',
      'b@y.test',
    ]);
  });
});

describe('spam', () => {
  const scored = (action: string, score: number, required = 15) => ({
    scanner: 'rspamd' as const,
    status: 'scored' as const,
    score,
    required_score: required,
    action,
    symbols: [],
    reason: null,
    checked_at: '',
  });
  const auth = (dmarc: 'pass' | 'fail') => ({ spf: 'pass' as const, dkim: 'pass' as const, dmarc });
  test.each([
    ['clean', { spam: scored('no action', 1), authentication: auth('pass') }, false],
    ['rspamd: add header', { spam: scored('add header', 7), authentication: auth('pass') }, true],
    ['rspamd: reject', { spam: scored('reject', 20), authentication: auth('pass') }, true],
    ['rspamd: greylist', { spam: scored('greylist', 5), authentication: auth('pass') }, false],
    ['rspamd: at the required score', { spam: scored('no action', 15), authentication: auth('pass') }, true],
    ['DMARC fails', { spam: null, authentication: auth('fail') }, true],
    ['not scored, no verdicts', { authentication: null }, false],
  ])('%s', (_, rec, expected) => {
    expect(isSpam(rec as never)).toBe(expected);
  });
});

describe('list filters and pages', () => {
  const t = (over: Partial<InboxThreadRec>): InboxThreadRec =>
    ({
      id: 'x',
      folder: 'inbox',
      labels: [],
      read: true,
      from: 'a@x.test',
      to: [],
      cc: [],
      bcc: [],
      participants: [],
      has_attachment: false,
      has_sent: false,
      last_at: '2026-11-27T00:00:00.000Z',
      ...over,
    }) as InboxThreadRec;
  test('folders, labels, read', () => {
    const f = threadFilter({ folders: 'sent,archive', labels: undefined, read: 'false' });
    // `sent` is the folder of threads only the inbox wrote in; one it answered is in `inbox`.
    expect(passes(t({ folder: 'sent', has_sent: true, read: false }), f)).toBe(true);
    expect(passes(t({ folder: 'inbox', has_sent: true, read: false }), f)).toBe(false);
    expect(passes(t({ folder: 'archive', read: false }), f)).toBe(true);
    expect(passes(t({ folder: 'inbox', read: false }), f)).toBe(false);
    expect(passes(t({ folder: 'archive', read: true }), f)).toBe(false);
    expect(() => threadFilter({ folders: 'inbox,drafts' })).toThrow('`folders`');
    expect(() => threadFilter({ labels: 'urgent' })).toThrow('`labels`');
  });
  test('pages by cursor, both ways', () => {
    const items = ['a', 'b', 'c', 'd', 'e'].map((id) => ({ id }));
    expect(pageOf(items, { limit: 2 })).toEqual({ has_more: true, data: [{ id: 'a' }, { id: 'b' }] });
    expect(pageOf(items, { limit: 2, after: 'b' })).toEqual({ has_more: true, data: [{ id: 'c' }, { id: 'd' }] });
    expect(pageOf(items, { limit: 2, after: 'd' })).toEqual({ has_more: false, data: [{ id: 'e' }] });
    expect(pageOf(items, { limit: 2, before: 'e' })).toEqual({ has_more: true, data: [{ id: 'c' }, { id: 'd' }] });
    expect(pageOf(items, { limit: 2, before: 'b' })).toEqual({ has_more: false, data: [{ id: 'a' }] });
  });
});
