// The settling of a delivery attempt (src/delivery/settle.ts), situation → decision: each reply's
// outcome by its bounce class (only an address at fault is suppressed), whose outcome is recorded
// at all, the attempt kept on the email with each reply's class, when who is left is retried, the
// entry put back or retried — and, over a real LMDB store with the one event function, what
// recording the outcomes writes: events, suppressions (with their class and reply), recipient
// states, incidents of the sender. No sockets.
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AttemptResult } from '../../src/delivery/attempt';
import {
  attemptRecord,
  classesOf,
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
import { type BounceClass, BounceClassifier } from '../../src/mail/bounce-class';
import { INCIDENT_QUIET_MS, recordIncident, senderReplies } from '../../src/delivery/incidents';
import { suppressBounce } from '../../src/suppressions';
import { type DeliveryAttempt, type EmailRec, MAX_ATTEMPTS, openStore, type QueueEntry, type RecipientState } from '../../src/store';

const reply = (raw: string) => parseReply(raw)!;
const NOW = Date.parse('2026-11-27T12:00:00Z');
const classifier = new BounceClassifier();
const classOf = (r: Reply): BounceClass => classifier.classify({ code: r.code, enhanced: /^\d{3} (\d\.\d+\.\d+)/.exec(r.text)?.[1] ?? null, text: r.text });

describe('a reply → its outcome', () => {
  const ctx = (c: Partial<ReplyContext> = {}): ReplyContext => ({ windowOver: false, canceled: false, delayed: false, ...c });
  const NO_EMAIL = {
    type: 'Permanent',
    subType: 'NoEmail',
    message: "The recipient's mailbox does not exist.",
    diagnosticCode: ['smtp; 550 5.1.1 unknown'],
  };
  const bounced = (bounce: unknown, cls: BounceClass, suppress: 'now' | 'repeated' | 'never', text: string): RecipientOutcome => ({
    kind: 'bounced',
    bounce: bounce as never,
    class: cls,
    suppress,
    reply: text,
  });
  const rows: [string, Reply, ReplyContext, RecipientOutcome][] = [
    ['2xx: delivered', reply('250 2.0.0 ok'), ctx(), { kind: 'delivered' }],
    [
      '5xx of the address (recipient): bounced Permanent, suppressed now',
      reply('550 5.1.1 unknown'),
      ctx(),
      bounced(NO_EMAIL, 'recipient', 'now', '550 5.1.1 unknown'),
    ],
    [
      '5xx of a full mailbox: bounced Permanent, suppressed once repeated',
      reply('552 5.2.2 mailbox full'),
      ctx(),
      bounced(
        { type: 'Permanent', subType: 'MailboxFull', message: "The recipient's mailbox is full.", diagnosticCode: ['smtp; 552 5.2.2 mailbox full'] },
        'mailbox_full',
        'repeated',
        '552 5.2.2 mailbox full',
      ),
    ],
    [
      '5xx of the sender (reputation): still bounced Permanent (the event contract), nobody suppressed',
      reply('550 5.7.1 very low reputation of the sending IP'),
      ctx(),
      bounced(
        {
          type: 'Permanent',
          subType: 'ContentRejected',
          message: "The recipient's email provider rejected the message for its content or sender policy.",
          diagnosticCode: ['smtp; 550 5.7.1 very low reputation of the sending IP'],
        },
        'reputation',
        'never',
        '550 5.7.1 very low reputation of the sending IP',
      ),
    ],
    [
      '5xx of the message (too big): bounced Permanent, nobody suppressed',
      reply('552 5.3.4 message too big'),
      ctx(),
      bounced(
        {
          type: 'Permanent',
          subType: 'MessageTooLarge',
          message: 'The message is larger than the recipient accepts.',
          diagnosticCode: ['smtp; 552 5.3.4 message too big'],
        },
        'message',
        'never',
        '552 5.3.4 message too big',
      ),
    ],
    ['4xx, the first time: deferred, delivery_delayed', reply('451 4.3.0 later'), ctx(), { kind: 'deferred', announce: true }],
    ['4xx, delayed already: deferred quietly', reply('451 4.3.0 later'), ctx({ delayed: true }), { kind: 'deferred', announce: false }],
    ['503 (bad sequence): temporary, not a bounce', reply('503 5.5.1 bad sequence'), ctx(), { kind: 'deferred', announce: true }],
    ['no connection (a reply of Posthorn’s): deferred', localReply(451, '4.4.1', 'connection refused'), ctx(), { kind: 'deferred', announce: true }],
    [
      '4xx once the retry window is over: bounced Transient, not suppressed',
      reply('451 4.3.0 later'),
      ctx({ windowOver: true }),
      bounced(
        {
          type: 'Transient',
          subType: 'General',
          message: 'The message could not be delivered before the retry window ended; the last attempt failed temporarily.',
          diagnosticCode: ['smtp; 451 4.3.0 later'],
        },
        'unknown',
        'never',
        '451 4.3.0 later',
      ),
    ],
    ['4xx of an email canceled meanwhile: dropped', reply('451 4.3.0 later'), ctx({ canceled: true, windowOver: true }), { kind: 'dropped' }],
    ['2xx of an email canceled meanwhile: still delivered', reply('250 ok'), ctx({ canceled: true }), { kind: 'delivered' }],
    [
      '5xx of an email canceled meanwhile: still bounced',
      reply('550 5.1.1 unknown'),
      ctx({ canceled: true }),
      bounced(NO_EMAIL, 'recipient', 'now', '550 5.1.1 unknown'),
    ],
  ];
  test.each(rows)('%s', (_situation, r, c, expected) => {
    expect(outcomeOf(r, c, classOf(r))).toEqual(expected);
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
  const classes = classesOf(entry(), result, classifier);
  expect(classes).toEqual(
    new Map([
      ['a@x.test', 'recipient'],
      ['B@x.test', 'routing'],
    ]),
  );
  const rec = attemptRecord(entry(), result, NOW - 250, NOW, classes);
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
      { recipient: 'a@x.test', code: 550, enhanced_code: '5.1.1', reply: '550 5.1.1 unknown', class: 'recipient' },
      { recipient: 'B@x.test', code: 451, enhanced_code: null, reply: 'no reply for this recipient', class: 'routing' },
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
      'of the sender, the message, a full mailbox: bounced, nobody suppressed (a full mailbox counted)',
      {
        replies: {
          'a@x.test': '550 5.7.1 Our system has detected that this message is likely suspicious due to the very low reputation of the sending IP address',
          'b@x.test': '552 5.3.4 message too big',
          'c@x.test': '552 5.2.2 mailbox full',
        },
        events: ['email.bounced', 'email.bounced', 'email.bounced'],
        states: { 'a@x.test': 'bounced', 'b@x.test': 'bounced', 'c@x.test': 'bounced' },
        suppressed: [],
        retry: null,
        counts: { delivered: 0, deferred: 0, bounced: 3 },
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
    const e = entry({ team_id: team, email_id: email.id, recipients });
    const settled = await store.write((tx) =>
      settleRecipients(tx, events, email, e, result, { windowOver: false, canceled: false, ...row.ctx }, classesOf(e, result, classifier), 'x.test'),
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

describe('suppressions of bounces, by class (LMDB store)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'posthorn-suppress-'));
  const opened = openStore({ dataDir: dir, retentionDays: 30, holdMs: 0 });
  afterAll(async () => {
    await (await opened).close();
    rmSync(dir, { recursive: true, force: true });
  });
  const DAY = 86_400_000;
  const events = createEvents();

  test('an address at fault is suppressed at once, with the class, the reply and the site', async () => {
    const store = await opened;
    const team = newId();
    const rec = await store.write((tx) =>
      suppressBounce(events, tx, team, 'gone@x.test', 'm1', { class: 'recipient', reply: '550 5.1.1 unknown', site: 'google' }, NOW),
    );
    expect(rec).toMatchObject({ email: 'gone@x.test', origin: 'bounce', source_id: 'm1', class: 'recipient', reply: '550 5.1.1 unknown', site: 'google' });
    expect(await store.suppressions.find('email', 'gone@x.test', team)).toEqual(rec!);
  });

  test('a full mailbox is suppressed at its third permanent bounce within 30 days; older ones do not count', async () => {
    const store = await opened;
    const team = newId();
    const full = (at: number) =>
      store.write((tx) => suppressBounce(events, tx, team, 'Full@x.test', 'm1', { class: 'mailbox_full', reply: '552 5.2.2 full', site: null }, at));
    expect(await full(NOW - 40 * DAY)).toBeNull();
    expect(await full(NOW - 20 * DAY)).toBeNull();
    expect(await full(NOW - 10 * DAY)).toBeNull(); // the first, 40 days before, has faded: two so far
    expect(await store.suppressions.find('email', 'full@x.test', team)).toBeUndefined();
    expect((await store.fullMailboxes.find('email', 'full@x.test', team))?.at).toEqual([NOW - 20 * DAY, NOW - 10 * DAY]);
    expect(await full(NOW)).toMatchObject({ email: 'Full@x.test', class: 'mailbox_full', reply: '552 5.2.2 full' });
    // Suppressed: the count is done with.
    expect(await store.fullMailboxes.find('email', 'full@x.test', team)).toBeUndefined();
  });

  test('the sender’s classes, the message’s, rates, routes and unknown replies never suppress', async () => {
    const store = await opened;
    const team = newId();
    for (const cls of ['reputation', 'authentication', 'message', 'policy', 'rate', 'routing', 'unknown'] as const)
      expect(await store.write((tx) => suppressBounce(events, tx, team, `${cls}@x.test`, 'm1', { class: cls, reply: '550 x', site: null }, NOW))).toBeNull();
    expect((await store.suppressions.page(team, {}, null)).data).toEqual([]);
  });
});

describe('incidents of the sender (LMDB store)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'posthorn-incidents-'));
  const opened = openStore({ dataDir: dir, retentionDays: 30, holdMs: 0 });
  afterAll(async () => {
    await (await opened).close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('which replies of an attempt are incidents: remote ones of the sender’s classes, the first of each, refusing greetings too', () => {
    const rep = reply('550 5.7.1 blocked using zen.spamhaus.org; https://www.spamhaus.org/query/ip/192.0.2.1');
    const auth = reply('550 5.7.26 unauthenticated');
    const local = localReply(451, '4.4.1', 'x: Connection closed (554 IP address is black listed)');
    const refusal = reply("554 5.7.1 Your access to this mail system has been rejected due to the sending MTA's poor reputation");
    const found = senderReplies(
      [
        { reply: rep, class: 'reputation' },
        { reply: reply('550 5.7.1 spamhaus again'), class: 'reputation' },
        { reply: local, class: 'reputation' },
        { reply: auth, class: 'authentication' },
        { reply: reply('550 5.1.1 unknown'), class: 'recipient' },
      ],
      { host: 'mx.x.test', ip: '192.0.2.7', refusedBy: 'mx2.x.test' },
    );
    expect(found).toEqual([
      { reply: rep, class: 'reputation', remoteHost: 'mx.x.test', remoteIp: '192.0.2.7' },
      { reply: auth, class: 'authentication', remoteHost: 'mx.x.test', remoteIp: '192.0.2.7' },
    ]);
    expect(
      senderReplies([{ reply: local, class: 'reputation' }], { host: null, ip: null, refusedBy: 'mx2.x.test' }, [{ reply: refusal, class: 'reputation' }]),
    ).toEqual([{ reply: refusal, class: 'reputation', remoteHost: 'mx2.x.test', remoteIp: null }]);
  });

  test('replies of one site and class count on one incident; after a quiet day the next opens another, each opening an event', async () => {
    const store = await opened;
    const team = newId();
    const events = createEvents();
    const made: string[] = [];
    events.observe((ev) => made.push(ev.type));
    const email = { id: newId(), team_id: team, domain: 'send.test' } as EmailRec;
    const seen = (text: string, at: number) => ({
      reply: reply(text),
      class: 'reputation' as const,
      remoteHost: 'mx.x.test',
      remoteIp: '192.0.2.7',
      team,
      site: 'google',
      sendingIp: '192.0.2.99',
      email,
      at,
      suspendedUntil: at + 60_000,
    });
    const first = await store.write((tx) =>
      recordIncident(tx, events, seen('550 5.7.1 blocked using zen.spamhaus.org; https://www.spamhaus.org/query/ip/192.0.2.99', NOW)),
    );
    expect(first.opened).toBe(true);
    expect(first.incident).toMatchObject({
      class: 'reputation',
      site: 'google',
      latest: true,
      count: 1,
      code: 550,
      enhanced_code: '5.7.1',
      remote_host: 'mx.x.test',
      remote_ip: '192.0.2.7',
      sending_ip: '192.0.2.99',
      domain: 'send.test',
      email_id: email.id,
      links: ['https://www.spamhaus.org/query/ip/192.0.2.99'],
      suspended_until: new Date(NOW + 60_000).toISOString(),
    });
    for (let i = 1; i <= 3; i++) {
      const again = await store.write((tx) => recordIncident(tx, events, seen('550 5.7.1 listed at https://www.spamhaus.org/sbl/', NOW + i * 3_600_000)));
      expect(again).toMatchObject({ opened: false, incident: { id: first.incident.id, count: i + 1 } });
    }
    const kept = (await store.incidents.get(team, first.incident.id))!;
    expect(kept.links).toEqual(['https://www.spamhaus.org/query/ip/192.0.2.99', 'https://www.spamhaus.org/sbl/']);
    expect(kept.last_reply).toBe('550 5.7.1 listed at https://www.spamhaus.org/sbl/');
    // Quiet for a day after the last reply: the next one opens another.
    const later = await store.write((tx) => recordIncident(tx, events, seen('550 5.7.1 spamhaus', NOW + 3 * 3_600_000 + INCIDENT_QUIET_MS)));
    expect(later.opened).toBe(true);
    expect((await store.incidents.get(team, first.incident.id))!.latest).toBe(false);
    expect((await store.incidents.page(team, {}, null)).data.map((r) => r.id)).toEqual([later.incident.id, first.incident.id]);
    expect(made).toEqual(['deliverability.incident', 'deliverability.incident']);
  });
});
