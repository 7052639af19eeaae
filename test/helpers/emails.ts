// Emails for delivery tests, written to the store the way the sending core writes them: the
// EmailRec, its content (raw MIME from nodemailer's MailComposer, unsigned) and one queue entry per
// recipient domain (src/sending/enqueue.ts), in one unit of work, whose commit wakes the engine.
//
//   const d = await verifiedDomain(p, 'example.test', { dns });   // DKIM + SPF published in the test DNS
//   const email = await queueEmail(p.svc, d, { to: ['bob@dest.test'] });
//   const done = await waitForEmail(p.svc, email, (e) => e.recipients['bob@dest.test'] === 'delivered');
//   await eventTypes(p.svc, email)  // ['email.queued', 'email.sent', 'email.delivered']
import MailComposer from 'nodemailer/lib/mail-composer';
import type { Services } from '../../src/services';
import type { DomainRec, EmailRec, EventRec } from '../../src/store';
import { enqueue } from '../../src/sending/enqueue';
import { settle } from '../../src/sending/incoming';
import { newId } from '../../src/ids';
import type { Running } from './posthorn';
import type { TestDns } from './dns';
import { until } from './wait';

/**
 * A team's emails as the API shows them. A batch is accepted as one record of the incoming queue
 * and written as its emails by the back office moments later (src/sending/incoming.ts); every read
 * through the API writes what is still waiting first, and so does this.
 */
export async function storedEmails(svc: Services, team: string): Promise<EmailRec[]> {
  await settle(svc.store, svc.events, team);
  return svc.store.emails.all(team);
}

/**
 * A domain created through the API, its sending records then marked verified in the store. With
 * `dns`, its DKIM key and the SPF record of its return path are published there as well.
 */
export async function verifiedDomain(
  p: Running,
  name: string,
  opts: { dns?: TestDns; tls?: 'opportunistic' | 'enforced'; key?: string; team?: string } = {},
): Promise<DomainRec> {
  const r = await p.api('POST', '/domains', { body: { name, ...(opts.tls ? { tls: opts.tls } : {}) }, key: opts.key });
  if (r.status !== 201) throw new Error(`POST /domains ${name}: ${r.status} ${JSON.stringify(r.body)}`);
  const team = opts.team ?? p.creds.team_id;
  const d = await markVerified(p, team, r.body.id, opts.tls);
  if (opts.dns) {
    opts.dns.zone.set(`${d.dkim.selector}._domainkey.${name}`, 'TXT', [`v=DKIM1; k=rsa; p=${d.dkim.public_key}`]);
    opts.dns.zone.set(`${d.custom_return_path}.${name}`, 'TXT', ['v=spf1 ip4:127.0.0.0/8 -all']);
  }
  return d;
}

/** Mark a domain of `team` created through the API verified in the store (its sending records too). */
export async function markVerified(p: Running, team: string, id: string, tls?: 'opportunistic' | 'enforced'): Promise<DomainRec> {
  const d = (await p.svc.store.domains.get(team, id))!;
  const record_status = { ...d.record_status, 'SPF:MX': 'verified', 'SPF:TXT': 'verified', DKIM: 'verified' } as const;
  // Checked now, so the scheduler's re-check of verified domains leaves it alone during a test.
  const verification = { ...d.verification, checked_at: new Date().toISOString() };
  const verified: DomainRec = { ...d, status: 'verified', record_status, verification, tls: tls ?? d.tls };
  await p.svc.store.write(async (tx) => tx.domains.put(verified));
  return verified;
}

export interface TestEmail {
  from?: string;
  to: string[];
  cc?: string[];
  bcc?: string[];
  subject?: string;
  text?: string;
  html?: string;
  headers?: Record<string, string>;
  /** Due at this time (ms) rather than now: a commit that raced a claim with a due time before it. */
  dueAt?: number;
}

/** Compose, store and queue one email from `domain` (the commit wakes the delivery engine). */
export async function queueEmail(svc: Services, domain: DomainRec, input: TestEmail): Promise<EmailRec> {
  const id = newId();
  const created = new Date();
  const from = input.from ?? `Sender <hello@${domain.name}>`;
  const fromAddress = /<([^>]+)>/.exec(from)?.[1] ?? from;
  const messageId = `<${id}@${domain.name}>`;
  const subject = input.subject ?? 'Delivery test';
  const text = input.text ?? 'Hello from the delivery tests.\n';
  const raw = await new MailComposer({
    from,
    to: input.to,
    cc: input.cc,
    subject,
    text,
    html: input.html,
    messageId,
    date: created,
    headers: input.headers,
  })
    .compile()
    .build();
  const recipients: EmailRec['recipients'] = {};
  for (const a of [...input.to, ...(input.cc ?? []), ...(input.bcc ?? [])]) recipients[a.toLowerCase()] = 'pending';
  const email: EmailRec = {
    id,
    team_id: domain.team_id,
    created_at: created.toISOString(),
    from,
    from_address: fromAddress,
    domain_id: domain.id,
    domain: domain.name,
    to: input.to,
    cc: input.cc ?? [],
    bcc: input.bcc ?? [],
    reply_to: [],
    subject,
    headers: input.headers ?? {},
    tags: [],
    scheduled_at: null,
    last_event: 'queued',
    message_id: messageId,
    broadcast_id: null,
    attachments: [],
    recipients,
    sent_at: null,
    api_key_id: null,
  };
  return svc.store.write(async (tx) => {
    tx.emails.put(email);
    tx.emailContent.put(email.team_id, email.id, { html: input.html ?? null, text, raw, files: {} });
    return enqueue(tx, svc.events, email, { sandbox: svc.config.delivery.sandbox, now: input.dueAt });
  });
}

/** Poll the stored email until `done` holds (bounded; throws with its last state on time-out). */
export async function waitForEmail(
  svc: Services,
  email: Pick<EmailRec, 'team_id' | 'id'>,
  done: (e: EmailRec) => boolean,
  timeoutMs = 15_000,
): Promise<EmailRec> {
  let cur: EmailRec | undefined;
  return until(
    async () => {
      // An email of a batch is written a moment after its 2xx (src/sending/incoming.ts).
      cur = await svc.store.emails.get(email.team_id, email.id);
      return cur !== undefined && done(cur) && cur;
    },
    async () =>
      `email ${email.id} to meet its condition; last state ${JSON.stringify({
        last_event: cur?.last_event,
        recipients: cur?.recipients,
        queue: (await svc.store.queue.entriesOf(email.team_id, email.id)).map((q) => ({ attempts: q.attempts, last_error: q.last_error })),
      })}`,
    timeoutMs,
    10,
  );
}

/** Every recipient is done (delivered, bounced, suppressed or complained). */
export const settled = (e: EmailRec) => Object.values(e.recipients).every((s) => s !== 'pending' && s !== 'delayed');

export function eventsOf(svc: Services, email: Pick<EmailRec, 'team_id' | 'id'>): Promise<EventRec[]> {
  return svc.events.log(svc.store, email.team_id, email.id);
}

export async function eventTypes(svc: Services, email: Pick<EmailRec, 'team_id' | 'id'>): Promise<string[]> {
  return (await eventsOf(svc, email)).map((e) => e.type);
}

/** A header of a received message, unfolded (RFC 5322 §2.2.3: long ones are folded). */
export function messageHeader(raw: Buffer, name: string): string | undefined {
  const head = raw
    .toString('latin1')
    .split('\r\n\r\n')[0]!
    .replace(/\r\n[ \t]+/g, ' ');
  return new RegExp(`^${name}: *(.*)$`, 'im').exec(head)?.[1];
}
