// Sandbox addresses, decision by decision (docs/api.md §7.11): which addresses are Resend's test
// addresses and what each stands for (src/mail/sandbox.ts), the attempt the delivery engine makes
// of an entry of them (src/delivery/sandbox.ts), the attempt record kept on the email
// (src/delivery/settle.ts attemptRecord), and the queue entries the sending core makes
// (src/sending/enqueue.ts) — over a real LMDB store. What settling a simulated attempt records is in
// settle.test.ts; the whole walk with the SDK in test/api/sandbox.test.ts.
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SANDBOX_HOST, simulatedAttempt } from '../../src/delivery/sandbox';
import { attemptRecord, classesOf } from '../../src/delivery/settle';
import { createEvents } from '../../src/events/webhooks';
import { newId } from '../../src/ids';
import { BounceClassifier } from '../../src/mail/bounce-class';
import { type SandboxOutcome, sandboxOutcome } from '../../src/mail/sandbox';
import { verdict } from '../../src/mail/smtp-reply';
import { enqueue } from '../../src/sending/enqueue';
import type { EmailStatus } from '../../src/event-catalogue';
import { type EmailRec, openStore, type QueueEntry } from '../../src/store';

describe('an address → what it stands for', () => {
  const rows: [string, SandboxOutcome | null][] = [
    ['delivered@resend.dev', 'delivered'],
    ['bounced@resend.dev', 'bounced'],
    ['complained@resend.dev', 'complained'],
    ['suppressed@resend.dev', 'suppressed'],
    ['delivered+signup@resend.dev', 'delivered'],
    ['bounced+ci-42.run_7@resend.dev', 'bounced'],
    ['complained+@resend.dev', 'complained'],
    ['Suppressed+Label@RESEND.DEV', 'suppressed'],
    ['DELIVERED@Resend.Dev', 'delivered'],
    // Not one of them: another local part, another domain, a subdomain, a lookalike.
    ['someone@resend.dev', null],
    ['delivered@resend.com', null],
    ['delivered@mail.resend.dev', null],
    ['delivered@resend.dev.example', null],
    ['xdelivered@resend.dev', null],
    ['delivered-x@resend.dev', null],
    ['delivered@dest.test', null],
  ];
  test.each(rows)('%s → %s', (address, outcome) => {
    expect(sandboxOutcome(address)).toBe(outcome);
  });
});

const entry = (recipients: string[]): QueueEntry => ({
  id: 'q1',
  team_id: 't1',
  email_id: 'm1',
  domain: 'resend.dev',
  recipients,
  attempts: 1,
  first_attempt_at: null,
  last_error: null,
});

describe('the simulated attempt of an entry', () => {
  test('every recipient answered as a destination would: 250, or 550 5.1.1 for bounced@; no host reached', () => {
    const result = simulatedAttempt(entry(['delivered@resend.dev', 'Bounced+x@resend.dev', 'complained+y@resend.dev']))!;
    expect(result).toMatchObject({ host: SANDBOX_HOST, ip: null, tls: null, simulated: true });
    expect(result.site).toBeUndefined();
    expect(result.sts).toBeUndefined();
    const replies = [...result.replies].map(([r, reply]) => [r, reply.code, verdict(reply), reply.local ?? false]);
    expect(replies).toEqual([
      ['delivered@resend.dev', 250, 'delivered', false],
      ['Bounced+x@resend.dev', 550, 'permanent', false],
      ['complained+y@resend.dev', 250, 'delivered', false],
    ]);
    expect(result.replies.get('Bounced+x@resend.dev')!.text).toMatch(/^550 5\.1\.1 <Bounced\+x@resend\.dev>: Unknown User/);
  });

  test.each([
    ['an ordinary address among them (queued before the sandbox was on)', ['delivered@resend.dev', 'someone@resend.dev']],
    ['suppressed@ (never queued while the sandbox is on)', ['suppressed@resend.dev']],
  ])('none when %s: the entry is delivered as it was queued', (_situation, recipients) => {
    expect(simulatedAttempt(entry(recipients))).toBeNull();
  });

  test('the attempt kept on the email says it was simulated; a real one says nothing of it', () => {
    const e = entry(['delivered@resend.dev']);
    const simulated = simulatedAttempt(e)!;
    const rec = attemptRecord(e, simulated, 1000, 1001, classesOf(e, simulated, new BounceClassifier()));
    expect(rec).toEqual({
      at: new Date(1000).toISOString(),
      domain: 'resend.dev',
      host: 'sandbox',
      ip: null,
      tls: null,
      tls_version: null,
      tls_cipher: null,
      mta_sts: null,
      duration_ms: 1,
      results: [
        { recipient: 'delivered@resend.dev', code: 250, enhanced_code: '2.0.0', reply: '250 2.0.0 OK: simulated delivery to a sandbox address', class: null },
      ],
      simulated: true,
    });
    const real = attemptRecord(e, { replies: new Map(), host: 'mx.resend.dev', tls: true }, 1000, 1001, new Map());
    expect('simulated' in real).toBe(false);
  });
});

describe('queueing (LMDB store, the event function)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'posthorn-sandbox-'));
  const opened = openStore({ dataDir: dir, retentionDays: 30, holdMs: 0 });
  const events = createEvents();
  afterAll(async () => {
    await (await opened).close();
    rmSync(dir, { recursive: true, force: true });
  });

  const emailTo = (team: string, recipients: string[]): EmailRec => {
    const id = newId();
    return {
      id,
      team_id: team,
      created_at: new Date().toISOString(),
      from: 'hello@send.test',
      from_address: 'hello@send.test',
      domain_id: 'd1',
      domain: 'send.test',
      to: recipients,
      cc: [],
      bcc: [],
      reply_to: [],
      subject: 'Queueing',
      headers: {},
      tags: [],
      scheduled_at: null,
      last_event: 'queued',
      message_id: `<${id}@send.test>`,
      broadcast_id: null,
      attachments: [],
      recipients: Object.fromEntries(recipients.map((r) => [r, 'pending'])),
      sent_at: null,
      api_key_id: null,
    };
  };

  const ALL = ['ann@dest.test', 'delivered@resend.dev', 'someone@resend.dev', 'bounced+a@resend.dev', 'suppressed+b@resend.dev'];

  interface Row {
    sandbox: boolean;
    recipients: string[];
    /** Each queue entry's recipients; the email's last_event and recipient states. */
    entries: string[][];
    last: EmailStatus;
    suppressed: string[];
  }
  const rows: [string, Row][] = [
    [
      'sandbox on: suppressed@ suppressed, the other sandbox addresses in an entry of their own',
      {
        sandbox: true,
        recipients: ALL,
        entries: [['ann@dest.test'], ['delivered@resend.dev', 'bounced+a@resend.dev'], ['someone@resend.dev']],
        last: 'queued',
        suppressed: ['suppressed+b@resend.dev'],
      },
    ],
    [
      'sandbox off: ordinary addresses, one entry per domain',
      {
        sandbox: false,
        recipients: ALL,
        entries: [['ann@dest.test'], ['delivered@resend.dev', 'someone@resend.dev', 'bounced+a@resend.dev', 'suppressed+b@resend.dev']],
        last: 'queued',
        suppressed: [],
      },
    ],
    [
      'sandbox on, only suppressed@: the email is suppressed',
      { sandbox: true, recipients: ['suppressed@resend.dev'], entries: [], last: 'suppressed', suppressed: ['suppressed@resend.dev'] },
    ],
  ];
  test.each(rows)('%s', async (_situation, row) => {
    const store = await opened;
    const team = newId();
    const email = emailTo(team, row.recipients);
    const queued = await store.write((tx) => enqueue(tx, events, email, { sandbox: row.sandbox }));
    const entries = await store.queue.entriesOf(team, email.id);
    expect(entries.map((e) => e.recipients).sort()).toEqual([...row.entries].sort());
    expect(entries.every((e) => e.domain === e.recipients[0]!.split('@')[1])).toBe(true);
    expect(queued.last_event).toBe(row.last);
    expect(Object.keys(queued.recipients).filter((r) => queued.recipients[r] === 'suppressed')).toEqual(row.suppressed);
    // No entry on the suppression list: suppressed@ is suppressed by what it is.
    for (const r of row.recipients) expect(await store.suppressions.find('email', r, team)).toBeUndefined();
  });
});
