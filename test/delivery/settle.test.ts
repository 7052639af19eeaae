// The settling of a delivery attempt (src/delivery/settle.ts), situation → decision: each reply's
// outcome (the seam bounce classes will extend), whose outcome is recorded at all, the attempt kept
// on the email, when who is left is retried, the entry put back or retried — and, over a real LMDB
// store with the one event function, what recording the outcomes writes: events, suppressions,
// recipient states. No sockets.
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AttemptResult } from '../../src/delivery/attempt';
import {
  attemptRecord,
  outcomeOf,
  putBack,
  type RecipientOutcome,
  type ReplyContext,
  replyFor,
  retried,
  retryDue,
  settleRecipients,
  settleScope,
  withAttempt,
} from '../../src/delivery/settle';
import { createEvents } from '../../src/events/webhooks';
import { newId } from '../../src/ids';
import { localReply, parseReply, type Reply } from '../../src/mail/smtp-reply';
import { type DeliveryAttempt, type EmailRec, MAX_ATTEMPTS, openStore, type QueueEntry, type RecipientState } from '../../src/store';

const reply = (raw: string) => parseReply(raw)!;
const NOW = Date.parse('2026-11-27T12:00:00Z');

describe('a reply → its outcome', () => {
  const ctx = (c: Partial<ReplyContext> = {}): ReplyContext => ({ windowOver: false, canceled: false, delayed: false, ...c });
  const NO_EMAIL = {
    type: 'Permanent',
    subType: 'NoEmail',
    message: "The recipient's mailbox does not exist.",
    diagnosticCode: ['smtp; 550 5.1.1 unknown'],
  };
  const rows: [string, Reply, ReplyContext, RecipientOutcome][] = [
    ['2xx: delivered', reply('250 2.0.0 ok'), ctx(), { kind: 'delivered' }],
    ['5xx: bounced Permanent, suppressed', reply('550 5.1.1 unknown'), ctx(), { kind: 'bounced', bounce: NO_EMAIL as never, suppress: true }],
    ['4xx, the first time: deferred, delivery_delayed', reply('451 4.3.0 later'), ctx(), { kind: 'deferred', announce: true }],
    ['4xx, delayed already: deferred quietly', reply('451 4.3.0 later'), ctx({ delayed: true }), { kind: 'deferred', announce: false }],
    ['503 (bad sequence): temporary, not a bounce', reply('503 5.5.1 bad sequence'), ctx(), { kind: 'deferred', announce: true }],
    ['no connection (a reply of Posthorn’s): deferred', localReply(451, '4.4.1', 'connection refused'), ctx(), { kind: 'deferred', announce: true }],
    [
      '4xx once the retry window is over: bounced Transient, not suppressed',
      reply('451 4.3.0 later'),
      ctx({ windowOver: true }),
      {
        kind: 'bounced',
        bounce: {
          type: 'Transient',
          subType: 'General',
          message: 'The message could not be delivered before the retry window ended; the last attempt failed temporarily.',
          diagnosticCode: ['smtp; 451 4.3.0 later'],
        },
        suppress: false,
      },
    ],
    ['4xx of an email canceled meanwhile: dropped', reply('451 4.3.0 later'), ctx({ canceled: true, windowOver: true }), { kind: 'dropped' }],
    ['2xx of an email canceled meanwhile: still delivered', reply('250 ok'), ctx({ canceled: true }), { kind: 'delivered' }],
    [
      '5xx of an email canceled meanwhile: still bounced',
      reply('550 5.1.1 unknown'),
      ctx({ canceled: true }),
      { kind: 'bounced', bounce: NO_EMAIL as never, suppress: true },
    ],
  ];
  test.each(rows)('%s', (_situation, r, c, expected) => {
    expect(outcomeOf(r, c)).toEqual(expected);
  });

  test('a recipient the attempt has no reply for failed temporarily', () => {
    const result: AttemptResult = { replies: new Map([['a@x.test', reply('250 ok')]]), host: null, tls: null };
    expect(replyFor(result, 'a@x.test')).toEqual(reply('250 ok'));
    expect(replyFor(result, 'b@x.test')).toEqual(localReply(451, '4.4.0', 'no reply for this recipient'));
  });
});

const entry = (e: Partial<QueueEntry> = {}): QueueEntry => ({
  id: 'q1',
  team_id: 't1',
  email_id: 'm1',
  domain: 'x.test',
  recipients: ['a@x.test', 'B@x.test'],
  attempts: 2,
  first_attempt_at: new Date(NOW - 60_000).toISOString(),
  last_error: null,
  attempting: new Date(NOW - 1_000).toISOString(),
  ...e,
});
const emailWith = (recipients: Record<string, RecipientState>) => ({ id: 'm1', team_id: 't1', recipients }) as EmailRec;

describe('whose outcome is recorded', () => {
  const rows: [string, EmailRec | undefined, QueueEntry | undefined, 'live' | 'canceled' | null][] = [
    ['the email gone (retention): nobody’s', undefined, entry(), null],
    ['the entry in the queue', emailWith({ 'a@x.test': 'pending' }), entry(), 'live'],
    [
      'the entry gone, a recipient canceled (any case): the canceled email’s',
      emailWith({ 'a@x.test': 'pending', 'b@x.test': 'canceled' }),
      undefined,
      'canceled',
    ],
    ['the entry gone, nobody canceled (the email failed): nobody’s', emailWith({ 'a@x.test': 'pending', 'b@x.test': 'pending' }), undefined, null],
  ];
  test.each(rows)('%s', (_situation, email, live, expected) => {
    expect(settleScope(email, live, entry())).toBe(expected);
  });
});

test('the attempt kept on the email: every recipient’s reply, MTA-STS mode, TLS; the last MAX_ATTEMPTS kept', () => {
  const result: AttemptResult = {
    replies: new Map([['a@x.test', reply('550 5.1.1 unknown')]]),
    host: 'mx.x.test',
    ip: '127.0.0.1',
    tls: true,
    tlsVersion: 'TLSv1.3',
    sts: { policy: { mode: 'enforce' } as never, success: 1, failures: [] },
  };
  const rec = attemptRecord(entry(), result, NOW - 250, NOW);
  expect(rec).toEqual({
    at: new Date(NOW - 250).toISOString(),
    domain: 'x.test',
    host: 'mx.x.test',
    ip: '127.0.0.1',
    tls: true,
    tls_version: 'TLSv1.3',
    tls_cipher: null,
    mta_sts: 'enforce',
    duration_ms: 250,
    results: [
      { recipient: 'a@x.test', code: 550, enhanced_code: '5.1.1', reply: '550 5.1.1 unknown' },
      { recipient: 'B@x.test', code: 451, enhanced_code: null, reply: 'no reply for this recipient' },
    ],
  });
  const full = { attempts: Array.from({ length: MAX_ATTEMPTS }, (_, i) => ({ duration_ms: i }) as DeliveryAttempt) } as EmailRec;
  const kept = withAttempt(full, rec).attempts!;
  expect(kept).toHaveLength(MAX_ATTEMPTS);
  expect(kept[0]!.duration_ms).toBe(1);
  expect(kept.at(-1)).toBe(rec);
});

describe('when who is left is retried', () => {
  const spread = (until: number) => until + 7;
  const rows: [string, number, number | null | undefined, number][] = [
    ['the schedule’s time', NOW + 60_000, null, NOW + 60_000],
    ['a suspension of the site ending before it: the schedule’s time', NOW + 60_000, NOW + 30_000, NOW + 60_000],
    ['a suspension ending after it: after the suspension, spread', NOW + 60_000, NOW + 90_000, NOW + 90_007],
  ];
  test.each(rows)('%s', (_situation, scheduled, suspended, expected) => {
    expect(retryDue(scheduled, suspended, spread)).toBe(expected);
  });
});

test('the entry retried: who is left, the last error, the site, no longer in flight; put back: as before the claim', () => {
  const live = entry({ site: null });
  expect(retried(live, ['B@x.test'], '451 later', 'big')).toEqual({
    ...live,
    recipients: ['B@x.test'],
    last_error: '451 later',
    attempting: null,
    site: 'big',
  });
  const before = entry({ attempts: 1, first_attempt_at: null, attempting: null });
  expect(putBack(live, before, 'big')).toEqual({ ...live, attempts: 1, first_attempt_at: null, attempting: null, site: 'big' });
});

describe('recording the outcomes (LMDB store, the event function)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'posthorn-settle-'));
  const opened = openStore({ dataDir: dir, retentionDays: 30, holdMs: 0 });
  const events = createEvents();
  afterAll(async () => {
    await (await opened).close();
    rmSync(dir, { recursive: true, force: true });
  });

  interface Row {
    replies: Record<string, string>;
    before?: Record<string, RecipientState>;
    ctx?: { windowOver?: boolean; canceled?: boolean };
    /** A simulated attempt: the replies of sandbox addresses (src/delivery/sandbox.ts). */
    simulated?: true;
    /** Event types in order, the recipients' states, the suppressed addresses, what is retried. */
    events: string[];
    states: Record<string, RecipientState>;
    suppressed: string[];
    retry: { recipients: string[]; lastError: string } | null;
    counts: { delivered: number; deferred: number; bounced: number };
  }
  const rows: [string, Row][] = [
    [
      'delivered, bounced and deferred in one attempt',
      {
        replies: { 'a@x.test': '250 ok', 'b@x.test': '550 5.1.1 unknown', 'c@x.test': '451 4.3.0 later' },
        events: ['email.delivered', 'email.bounced', 'email.delivery_delayed'],
        states: { 'a@x.test': 'delivered', 'b@x.test': 'bounced', 'c@x.test': 'delayed' },
        suppressed: ['b@x.test'],
        retry: { recipients: ['c@x.test'], lastError: '451 4.3.0 later' },
        counts: { delivered: 1, deferred: 1, bounced: 1 },
      },
    ],
    [
      'deferred again: no second delivery_delayed, the email stored by the caller',
      {
        replies: { 'a@x.test': '451 4.3.0 later', 'b@x.test': '452 4.2.2 full' },
        before: { 'a@x.test': 'delayed', 'b@x.test': 'delayed' },
        events: [],
        states: { 'a@x.test': 'delayed', 'b@x.test': 'delayed' },
        suppressed: [],
        retry: { recipients: ['a@x.test', 'b@x.test'], lastError: '452 4.2.2 full' },
        counts: { delivered: 0, deferred: 2, bounced: 0 },
      },
    ],
    [
      'the window over: bounced Transient, nobody suppressed, nothing retried',
      {
        replies: { 'a@x.test': '451 4.3.0 later' },
        before: { 'a@x.test': 'delayed' },
        ctx: { windowOver: true },
        events: ['email.bounced'],
        states: { 'a@x.test': 'bounced' },
        suppressed: [],
        retry: null,
        counts: { delivered: 0, deferred: 0, bounced: 1 },
      },
    ],
    [
      'canceled meanwhile: a delivery is recorded, a temporary failure dropped',
      {
        replies: { 'a@x.test': '250 ok', 'b@x.test': '451 4.3.0 later' },
        before: { 'a@x.test': 'canceled', 'b@x.test': 'canceled' },
        ctx: { canceled: true },
        events: ['email.delivered'],
        states: { 'a@x.test': 'delivered', 'b@x.test': 'canceled' },
        suppressed: [],
        retry: null,
        counts: { delivered: 1, deferred: 0, bounced: 0 },
      },
    ],
    [
      'simulated (sandbox addresses): a bounce suppresses nobody; complained@ is delivered, then complains',
      {
        replies: { 'delivered@resend.dev': '250 2.0.0 ok', 'bounced+x@resend.dev': '550 5.1.1 unknown', 'Complained@resend.dev': '250 2.0.0 ok' },
        simulated: true,
        events: ['email.delivered', 'email.bounced', 'email.delivered', 'email.complained'],
        states: { 'delivered@resend.dev': 'delivered', 'bounced+x@resend.dev': 'bounced', 'Complained@resend.dev': 'complained' },
        suppressed: [],
        retry: null,
        counts: { delivered: 2, deferred: 0, bounced: 1 },
      },
    ],
    [
      'the same replies from a real server: the bounce suppresses, nobody complains',
      {
        replies: { 'delivered@resend.dev': '250 2.0.0 ok', 'bounced+x@resend.dev': '550 5.1.1 unknown', 'Complained@resend.dev': '250 2.0.0 ok' },
        events: ['email.delivered', 'email.bounced', 'email.delivered'],
        states: { 'delivered@resend.dev': 'delivered', 'bounced+x@resend.dev': 'bounced', 'Complained@resend.dev': 'delivered' },
        suppressed: ['bounced+x@resend.dev'],
        retry: null,
        counts: { delivered: 2, deferred: 0, bounced: 1 },
      },
    ],
  ];
  test.each(rows)('%s', async (_situation, row) => {
    const store = await opened;
    const team = newId();
    const recipients = Object.keys(row.replies);
    const id = newId();
    const email: EmailRec = {
      id,
      team_id: team,
      created_at: new Date(NOW).toISOString(),
      from: 'hello@send.test',
      from_address: 'hello@send.test',
      domain_id: 'd1',
      domain: 'send.test',
      to: recipients,
      cc: [],
      bcc: [],
      reply_to: [],
      subject: 'Settling',
      headers: {},
      tags: [],
      scheduled_at: null,
      last_event: 'sent',
      message_id: `<${id}@send.test>`,
      broadcast_id: null,
      attachments: [],
      recipients: row.before ?? Object.fromEntries(recipients.map((r) => [r, 'pending'])),
      sent_at: new Date(NOW).toISOString(),
      api_key_id: null,
    };
    const result: AttemptResult = {
      replies: new Map(recipients.map((r) => [r, reply(row.replies[r]!)])),
      host: 'mx.x.test',
      tls: true,
      ...(row.simulated ? { simulated: true as const } : {}),
    };
    const settled = await store.write((tx) =>
      settleRecipients(tx, events, email, entry({ team_id: team, email_id: email.id, recipients }), result, {
        windowOver: false,
        canceled: false,
        ...row.ctx,
      }),
    );
    expect(settled.counts).toEqual(row.counts);
    expect(settled.retry).toEqual(row.retry);
    expect(settled.stored).toBe(row.events.length > 0);
    expect(settled.email.recipients).toEqual(row.states);
    expect((await events.log(store, team, email.id)).map((e): string => e.type).filter((t) => t !== 'email.sent')).toEqual(row.events);
    const suppressed = await Promise.all(recipients.map(async (r) => ((await store.suppressions.find('email', r, team)) ? r : null)));
    expect(suppressed.filter(Boolean)).toEqual(row.suppressed);
  });
});
