// Inboxes through the official SDK (docs/api.md §25): every `resend.inboxes.*` method against a
// running Posthorn, with mail delivered over SMTP by nodemailer as a sending MTA (threads from real
// mail, a reply chain), replies and forwards sent through the sending core to a sink, tenancy and
// bad input.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { simpleParser } from 'mailparser';
import { mta, inboundProcessed, type RunningSmtp } from '../helpers/smtp';
import { markVerified } from '../helpers/emails';
import { startMailWorld, type MailWorld } from '../helpers/world';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { until } from '../helpers/wait';
import type { Credentials } from '../../src/accounts/bootstrap';

let w: MailWorld;
let s: RunningSmtp;
let teamB: Credentials;
let inboxId: string;
let hooks: Receiver;

const INBOX_KINDS = [
  'inbox.created',
  'inbox.updated',
  'inbox.deleted',
  'inbox.thread.created',
  'inbox.thread.folder.updated',
  'inbox.thread.assigned',
  'inbox.thread.unassigned',
  'inbox.thread.labels.updated',
  'inbox.email.received',
  'inbox.email.sent',
  'inbox.draft.created',
  'inbox.draft.updated',
  'inbox.draft.sent',
  'inbox.draft.deleted',
] as const;

beforeAll(async () => {
  // Customers are at dest.test, whose MX is the sink: what the inbox sends arrives there.
  w = await startMailWorld({}, { smtp: true });
  s = w.smtp!;
  const a = await s.p.api('POST', '/domains', { body: { name: 'help.test', capabilities: { receiving: 'enabled' } } });
  expect(a.status).toBe(201);
  await markVerified(s.p, s.p.creds.team_id, a.body.id);
  // Verified but not receiving; receiving but not verified.
  const b = await s.p.api('POST', '/domains', { body: { name: 'sendonly.test' } });
  await markVerified(s.p, s.p.creds.team_id, b.body.id);
  await s.p.api('POST', '/domains', { body: { name: 'unverified.test', capabilities: { receiving: 'enabled' } } });
  teamB = await s.p.newTeam();
  hooks = await startReceiver();
  expect((await s.p.resend.webhooks.create({ endpoint: hooks.url, events: [...INBOX_KINDS] })).error).toBeNull();
});
afterAll(async () => {
  await w.stop();
  await hooks.close();
});

/** The message at the sink whose bytes hold `marker` (deliveries finish in any order). */
async function atSink(marker: string) {
  return until(() => w.sink.messages.find((m) => m.raw.includes(marker)), `a message with ${marker} at the sink`);
}

/** Deliver as an MTA (no AUTH) and wait until it is processed. */
async function deliver(message: Record<string, unknown>, to = ['support@help.test']): Promise<void> {
  const t = mta(s.starttls);
  try {
    await t.sendMail({ envelope: { from: (message.envelopeFrom as string) ?? 'ann@dest.test', to }, ...message } as never);
    await inboundProcessed(s.p);
  } finally {
    t.close();
  }
}

describe('inboxes', () => {
  test('create, get by id and by address, list, update', async () => {
    const r = s.p.resend;
    const created = await r.inboxes.create({ emailAddress: 'Support@help.test', name: 'Customer Support', fromName: 'Ada from Support' });
    expect(created.error).toBeNull();
    expect(created.data).toEqual({ object: 'inbox', id: expect.any(String) });
    inboxId = created.data!.id;

    const got = await r.inboxes.get(inboxId);
    expect(got.data).toMatchObject({
      object: 'inbox',
      id: inboxId,
      name: 'Customer Support',
      email_address: 'support@help.test',
      receiving_address: null,
      from_name: 'Ada from Support',
      unread: 0,
      drafts: 0,
      last_received: null,
    });
    expect((await r.inboxes.get('support@help.test')).data?.id).toBe(inboxId);

    const list = await r.inboxes.list();
    expect(list.data?.data.map((i) => i.email_address)).toEqual(['support@help.test']);

    const upd = await r.inboxes.update(inboxId, { name: 'Support' });
    expect(upd.data).toEqual({ object: 'inbox', id: inboxId });
    expect((await r.inboxes.get(inboxId)).data?.name).toBe('Support');
  });

  test('bad input: outside a verified receiving domain → 422, taken → 409, unknown → 404', async () => {
    const r = s.p.resend;
    for (const emailAddress of ['a@sendonly.test', 'a@unverified.test', 'a@nowhere.test']) {
      const x = await r.inboxes.create({ emailAddress });
      expect(x.error, emailAddress).toMatchObject({ statusCode: 422, name: 'validation_error' });
    }
    expect((await r.inboxes.create({ emailAddress: 'not an address' })).error?.statusCode).toBe(422);
    expect((await r.inboxes.create({ emailAddress: 'support@help.test' })).error?.statusCode).toBe(409);
    expect((await r.inboxes.get('00000000-0000-7000-8000-000000000000')).error).toMatchObject({ statusCode: 404, name: 'not_found' });
    expect((await r.inboxes.get('nobody@help.test')).error?.statusCode).toBe(404);
    expect((await r.inboxes.update(inboxId, { fromName: 'Bad: name' })).error?.statusCode).toBe(422);
    // Another team sees nothing of it.
    const b = s.p.client(teamB.api_key);
    expect((await b.inboxes.get(inboxId)).error?.statusCode).toBe(404);
    expect((await b.inboxes.get('support@help.test')).error?.statusCode).toBe(404);
    expect((await b.inboxes.list()).data?.data).toEqual([]);
  });
});

describe('threads from real mail', () => {
  test('a message starts a thread; a reply by In-Reply-To and one by subject join it; another subject starts another', async () => {
    const r = s.p.resend;
    await deliver({
      from: 'Ann <ann@dest.test>',
      to: 'support@help.test',
      subject: 'Order 42 is late',
      text: 'Where is my order?',
      messageId: '<m1@dest.test>',
    });
    let threads = await r.inboxes.threads.list({ inboxId });
    expect(threads.error).toBeNull();
    expect(threads.data?.data).toHaveLength(1);
    const t = threads.data!.data[0]!;
    expect(t).toMatchObject({
      subject: 'Order 42 is late',
      from: 'ann@dest.test',
      email_count: 1,
      read: false,
      folder: 'inbox',
      has_draft: false,
      labels: [],
    });

    // Ann writes again, answering her own message (In-Reply-To), with another subject.
    await deliver({
      from: 'ann@dest.test',
      to: 'support@help.test',
      subject: 'more details',
      text: 'It was order 42.',
      messageId: '<m2@dest.test>',
      inReplyTo: '<m1@dest.test>',
      references: ['<m1@dest.test>'],
    });
    // A client that drops the fields: the subject and a participant match.
    await deliver({ from: 'ann@dest.test', to: 'support@help.test', subject: 'RE: Order 42 is late', text: 'Any news?', messageId: '<m3@dest.test>' });
    // Another subject: another thread.
    await deliver({
      from: 'ann@dest.test',
      to: 'support@help.test',
      subject: 'Invoice',
      text: 'Please send the invoice.',
      messageId: '<m4@dest.test>',
    });
    // The same subject from somebody else: another thread too.
    await deliver({ from: 'zed@other.test', to: 'support@help.test', subject: 'Order 42 is late', text: 'Me too', messageId: '<m5@other.test>' }, [
      'support@help.test',
    ]);

    // The same message delivered twice is kept once.
    await deliver({ from: 'ann@dest.test', to: 'support@help.test', subject: 'Invoice', text: 'Please send the invoice.', messageId: '<m4@dest.test>' });
    threads = await r.inboxes.threads.list({ inboxId });
    const bySubject = threads.data!.data.map((x) => [x.subject, x.email_count, x.from]);
    expect(bySubject).toContainEqual(['Order 42 is late', 3, 'ann@dest.test']);
    expect(bySubject).toContainEqual(['Invoice', 1, 'ann@dest.test']);
    expect(bySubject).toContainEqual(['Order 42 is late', 1, 'zed@other.test']);
    expect(threads.data!.data).toHaveLength(3);

    const emails = await r.inboxes.threads.emails.list({ inboxId, threadId: t.id });
    expect(emails.data?.data.map((e) => e.message_id).sort()).toEqual(['<m1@dest.test>', '<m2@dest.test>', '<m3@dest.test>']);
    const first = emails.data!.data.find((e) => e.message_id === '<m1@dest.test>')!;
    expect(first).toMatchObject({ direction: 'inbound', from: 'ann@dest.test', to: ['support@help.test'], text: 'Where is my order?\n', read: false });
    const one = await r.inboxes.threads.emails.get({ inboxId, threadId: t.id, emailId: first.id });
    expect(one.data?.id).toBe(first.id);

    const inbox = await r.inboxes.get(inboxId);
    expect(inbox.data?.unread).toBe(3);
    expect(inbox.data?.last_received).toEqual(expect.any(String));
  });

  test('mail whose From: domain fails DMARC lands in spam, in a thread of its own', async () => {
    const r = s.p.resend;
    // p=reject, and neither SPF nor DKIM can pass for spoof.test: DMARC fails (RFC 7489 §6.6).
    w.dns.zone.set('_dmarc.spoof.test', 'TXT', ['v=DMARC1; p=reject']);
    await deliver({
      envelopeFrom: 'ann@spoof.test',
      from: 'ann@spoof.test',
      to: 'support@help.test',
      subject: 'Order 42 is late',
      text: 'Pay here',
      messageId: '<s1@spoof.test>',
    });
    const spam = await r.inboxes.threads.list({ inboxId, folders: ['spam'] });
    expect(spam.data?.data.map((x) => [x.subject, x.from, x.folder])).toEqual([['Order 42 is late', 'ann@spoof.test', 'spam']]);
    // Not counted as unread mail in the inbox; moved out of spam by hand like any thread.
    expect((await r.inboxes.get(inboxId)).data?.unread).toBe(3);
    const moved = await r.inboxes.threads.update({ inboxId, threadId: spam.data!.data[0]!.id, folder: 'trash' });
    expect(moved.data?.folder).toBe('trash');
  });
});

/** The `inbox.*` events made about a record (a thread, a draft, an inbox), oldest first. */
async function kinds(subject: string): Promise<string[]> {
  const evs = await s.p.svc.store.events.findAll('subject', subject, s.p.creds.team_id);
  return evs.map((e) => e.type);
}

async function threadOf(subject: string, from = 'ann@dest.test') {
  const list = await s.p.resend.inboxes.threads.list({ inboxId, limit: 100 });
  // `from` and `to` are the latest message's: the customer's, or the inbox's answer to them.
  const t = list.data!.data.find((x) => x.subject === subject && (x.from === from || x.to.includes(from)));
  if (!t) throw new Error(`no thread ${subject} from ${from}: ${JSON.stringify(list.data?.data.map((x) => [x.subject, x.from]))}`);
  return t;
}

describe('a support conversation', () => {
  test('labels, read state, folders, assignee; their events', async () => {
    const r = s.p.resend;
    const t = await threadOf('Order 42 is late');
    expect(await kinds(t.id)).toEqual(['inbox.thread.created', 'inbox.email.received', 'inbox.email.received', 'inbox.email.received']);

    const urgent = await r.inboxes.labels.create({ inboxId, name: 'Urgent', color: '#e93d82' });
    expect(urgent.data).toEqual({ object: 'inbox_label', id: expect.any(String) });
    const billing = await r.inboxes.labels.create({ emailAddress: 'support@help.test', name: 'Billing' });
    const labels = await r.inboxes.labels.list({ inboxId });
    expect(labels.data?.data.map((l) => [l.name, l.color])).toEqual([
      ['Urgent', '#E93D82'],
      ['Billing', '#6B7280'],
    ]);
    expect((await r.inboxes.labels.update({ inboxId, labelId: billing.data!.id, name: 'Invoices' })).data?.id).toBe(billing.data!.id);
    expect((await r.inboxes.labels.create({ inboxId, name: 'x', color: 'red' })).error?.statusCode).toBe(422);

    const added = await r.inboxes.threads.labels.add({ inboxId, threadId: t.id, labels: [urgent.data!.id, billing.data!.id] });
    expect(added.data?.data.map((l) => l.name)).toEqual(['Urgent', 'Invoices']);
    const set = await r.inboxes.threads.labels.set({ inboxId, threadId: t.id, labels: [billing.data!.id] });
    expect(set.data?.data.map((l) => l.name)).toEqual(['Invoices']);
    const removed = await r.inboxes.threads.labels.remove({ inboxId, threadId: t.id, labelId: billing.data!.id });
    expect(removed.data?.data).toEqual([]);
    await r.inboxes.threads.labels.add({ inboxId, threadId: t.id, labels: [urgent.data!.id] });
    expect((await r.inboxes.threads.labels.add({ inboxId, threadId: t.id, labels: ['00000000-0000-7000-8000-000000000000'] })).error?.statusCode).toBe(404);

    const byLabel = await r.inboxes.threads.list({ inboxId, labels: [urgent.data!.id] });
    expect(byLabel.data?.data.map((x) => x.id)).toEqual([t.id]);

    const read = await r.inboxes.threads.update({ inboxId, threadId: t.id, read: true });
    expect(read.data).toMatchObject({ object: 'inbox_thread', id: t.id, read: true, folder: 'inbox', labels: [{ name: 'Urgent' }] });
    expect((await r.inboxes.threads.list({ inboxId, read: false })).data?.data.map((x) => x.id)).not.toContain(t.id);
    const emails = await r.inboxes.threads.emails.list({ inboxId, threadId: t.id });
    expect(emails.data?.data.every((e) => e.read)).toBe(true);

    // Assigning is Posthorn's extension of the PATCH (the SDK has no field for it).
    const assigned = await s.p.api('PATCH', `/inboxes/${inboxId}/threads/${t.id}`, { body: { assignee: 'Agent@help.test' } });
    expect(assigned.body.assignee).toBe('agent@help.test');
    await s.p.api('PATCH', `/inboxes/${inboxId}/threads/${t.id}`, { body: { assignee: null } });

    const archived = await r.inboxes.threads.update({ inboxId, threadId: t.id, folder: 'archive' });
    expect(archived.data?.folder).toBe('archive');
    expect((await r.inboxes.threads.list({ inboxId, folders: ['inbox'] })).data?.data.map((x) => x.id)).not.toContain(t.id);
    expect((await r.inboxes.threads.list({ inboxId, folders: ['archive'] })).data?.data.map((x) => x.id)).toEqual([t.id]);
    expect((await r.inboxes.threads.update({ inboxId, threadId: t.id, folder: 'sent' as never })).error?.statusCode).toBe(422);
    expect(await kinds(t.id)).toEqual([
      'inbox.thread.created',
      'inbox.email.received',
      'inbox.email.received',
      'inbox.email.received',
      'inbox.thread.labels.updated',
      'inbox.thread.labels.updated',
      'inbox.thread.labels.updated',
      'inbox.thread.labels.updated',
      'inbox.thread.assigned',
      'inbox.thread.unassigned',
      'inbox.thread.folder.updated',
    ]);
    const [ev] = (await s.p.svc.store.events.findAll('subject', t.id, s.p.creds.team_id)).filter((e) => e.type === 'inbox.thread.folder.updated');
    expect(ev!.data).toMatchObject({
      source: 'api',
      inbox_id: inboxId,
      thread_id: t.id,
      from: 'inbox',
      to: 'archive',
      thread: { object: 'inbox_thread', folder: 'archive' },
    });
    const got = await r.inboxes.threads.get({ inboxId, threadId: t.id });
    expect(got.data).toMatchObject({ id: t.id, subject: 'Order 42 is late', folder: 'archive', read: true });
  });

  test('a reply goes out through the sending core with In-Reply-To, References, Reply-To and the quote; the answer to it joins the thread', async () => {
    const r = s.p.resend;
    const t = await threadOf('Order 42 is late');
    const emails = (await r.inboxes.threads.emails.list({ inboxId, threadId: t.id })).data!.data;
    const last = emails.at(-1)!;
    expect(last.message_id).toBe('<m3@dest.test>');
    const reply = await r.inboxes.threads.emails.reply({ inboxId, threadId: t.id, emailId: last.id, text: 'It ships today.', html: '<p>It ships today.</p>' });
    expect(reply.error).toBeNull();
    const msg = await atSink('It ships today.');
    expect(msg!.rcptTo).toEqual(['ann@dest.test']);
    const parsed = await simpleParser(msg!.raw);
    expect(parsed.subject).toBe('RE: Order 42 is late');
    expect(parsed.from?.value).toEqual([{ name: 'Ada from Support', address: 'support@help.test' }]);
    expect(parsed.replyTo?.text).toBe('support@help.test');
    expect(parsed.inReplyTo).toBe('<m3@dest.test>');
    expect(parsed.text).toContain('It ships today.');
    expect(parsed.text).toContain('ann@dest.test wrote:\n> Any news?');
    expect(parsed.html).toContain('<blockquote');
    // The email is an email of the sending core like any other.
    expect((await r.emails.get(reply.data!.id)).data?.subject).toBe('RE: Order 42 is late');

    // In the thread, sent; the thread is back from the archive when the customer answers.
    const after = (await r.inboxes.threads.emails.list({ inboxId, threadId: t.id })).data!.data;
    expect(after.at(-1)).toMatchObject({ id: reply.data!.id, direction: 'outbound', from: 'Ada from Support <support@help.test>', to: ['ann@dest.test'] });
    // `sent` holds the threads only the inbox wrote in (Resend's folders): not this one.
    expect((await r.inboxes.threads.list({ inboxId, folders: ['sent'] })).data?.data.map((x) => x.id)).not.toContain(t.id);

    // Ann answers the reply from her mailbox, naming it in In-Reply-To and References.
    await deliver({
      from: 'ann@dest.test',
      to: 'support@help.test',
      subject: 'Re: RE: Order 42 is late',
      text: 'Great, thanks!',
      messageId: '<m6@dest.test>',
      inReplyTo: parsed.messageId,
      references: parsed.references,
    });
    const final = await r.inboxes.threads.get({ inboxId, threadId: t.id });
    expect(final.data).toMatchObject({ folder: 'inbox', read: false });
    const chain = (await r.inboxes.threads.emails.list({ inboxId, threadId: t.id })).data!.data;
    expect(chain.map((e) => e.message_id)).toEqual(['<m1@dest.test>', '<m2@dest.test>', '<m3@dest.test>', parsed.messageId ?? null, '<m6@dest.test>']);
    // m3 came without References or In-Reply-To: the reply's References is m3 alone (RFC 5322 §3.6.4).
    expect([parsed.references].flat()).toEqual(['<m3@dest.test>']);
    expect((await kinds(t.id)).slice(-3)).toEqual(['inbox.email.sent', 'inbox.thread.folder.updated', 'inbox.email.received']);
  });
});

describe('forwards, drafts, search, the agent, deletion', () => {
  test('a forward carries the original and its attachments; it is a message of the thread', async () => {
    const r = s.p.resend;
    await deliver({
      from: 'ann@dest.test',
      to: 'support@help.test',
      subject: 'Broken part',
      text: 'See the photo.',
      messageId: '<m7@dest.test>',
      attachments: [{ filename: 'photo.png', content: Buffer.from('89504e470d0a1a0a', 'hex') }],
    });
    const t = await threadOf('Broken part');
    expect(t.has_attachment).toBe(true);
    const [orig] = (await r.inboxes.threads.emails.list({ inboxId, threadId: t.id })).data!.data;
    expect(orig!.attachments).toEqual([{ id: expect.any(String), filename: 'photo.png', size: 8 }]);
    const fwd = await r.inboxes.threads.emails.forward({ inboxId, threadId: t.id, emailId: orig!.id, to: 'repairs@dest.test', text: 'Can you look at this?' });
    expect(fwd.error).toBeNull();
    const parsed = await simpleParser((await atSink('Can you look at this?')).raw);
    expect(parsed.subject).toBe('Fwd: Broken part');
    expect(parsed.text).toContain('Can you look at this?');
    expect(parsed.text).toContain('---------- Forwarded message ---------');
    expect(parsed.text).toContain('See the photo.');
    expect(parsed.attachments.map((a) => a.filename)).toEqual(['photo.png']);
    expect(parsed.inReplyTo).toBeUndefined();
    // Under an Idempotency-Key the same forward is sent once, and its id answered again.
    const once = { inboxId, threadId: t.id, emailId: orig!.id, to: 'repairs@dest.test', text: 'Again?' };
    const k1 = await r.inboxes.threads.emails.forward(once, { idempotencyKey: 'fwd-1' });
    const k2 = await r.inboxes.threads.emails.forward(once, { idempotencyKey: 'fwd-1' });
    expect(k2.data?.id).toBe(k1.data!.id);
    expect((await r.inboxes.threads.emails.forward({ ...once, text: 'other' }, { idempotencyKey: 'fwd-1' })).error?.statusCode).toBe(409);
    expect((await r.inboxes.threads.emails.list({ inboxId, threadId: t.id })).data?.data).toHaveLength(3);
    // Headers Posthorn sets are refused, in any case.
    const bad = await r.inboxes.threads.emails.forward({ inboxId, threadId: t.id, emailId: orig!.id, to: 'x@dest.test', headers: { 'reply-TO': 'a@b.test' } });
    expect(bad.error).toMatchObject({ statusCode: 422 });
    expect(
      (await r.inboxes.threads.emails.reply({ inboxId, threadId: t.id, emailId: orig!.id, text: 'x', headers: { References: '<a@b>' } })).error?.statusCode,
    ).toBe(422);
  });

  test('drafts: create (standalone and reply), list, get, update, send, remove; oversize refused', async () => {
    const r = s.p.resend;
    const t = await threadOf('Invoice');
    const [parent] = (await r.inboxes.threads.emails.list({ inboxId, threadId: t.id })).data!.data;
    const reply = await r.inboxes.drafts.create({ inboxId, threadId: t.id, replyToEmailId: parent!.id, text: 'Attached.' });
    expect(reply.data).toEqual({ object: 'inbox_draft', id: expect.any(String) });
    const got = await r.inboxes.drafts.get({ inboxId, draftId: reply.data!.id });
    expect(got.data).toMatchObject({
      object: 'inbox_draft',
      type: 'reply',
      to: ['ann@dest.test'],
      subject: 'Re: Invoice',
      text: 'Attached.',
      thread_id: t.id,
      reply_to_email_id: parent!.id,
      email_id: null,
      attachments: [],
    });
    expect((await r.inboxes.threads.list({ inboxId })).data?.data.find((x) => x.id === t.id)?.has_draft).toBe(true);

    const standalone = await r.inboxes.drafts.create({ inboxId, to: 'new@dest.test', subject: 'Hello', html: '<p>Hi</p>' });
    const list = await r.inboxes.drafts.list({ inboxId });
    expect(list.data?.data.map((d) => [d.type, d.snippet])).toEqual([
      ['standalone', 'Hi'],
      ['reply', 'Attached.'],
    ]);
    const upd = await r.inboxes.drafts.update({
      inboxId,
      draftId: reply.data!.id,
      text: 'The invoice is attached.',
      attachments: [{ filename: 'invoice.txt', content: Buffer.from('INVOICE 42').toString('base64'), contentType: 'text/plain' }],
    });
    expect(upd.data).toEqual({ object: 'inbox_draft', id: reply.data!.id });
    expect((await r.inboxes.drafts.get({ inboxId, draftId: reply.data!.id })).data?.attachments).toEqual([
      { id: expect.any(String), filename: 'invoice.txt', content_type: 'text/plain', size: 10 },
    ]);

    const sent = await r.inboxes.drafts.send({ inboxId, draftId: reply.data!.id });
    expect(sent.data).toEqual({ id: expect.any(String) });
    const parsed = await simpleParser((await atSink('The invoice is attached.')).raw);
    expect(parsed.inReplyTo).toBe('<m4@dest.test>');
    expect(parsed.attachments.map((a) => a.filename)).toEqual(['invoice.txt']);
    expect((await r.inboxes.drafts.get({ inboxId, draftId: reply.data!.id })).error?.statusCode).toBe(404);
    expect((await r.inboxes.drafts.list({ inboxId })).data?.data.map((d) => d.id)).toEqual([standalone.data!.id]);
    expect((await kinds(reply.data!.id)).sort()).toEqual(['inbox.draft.created', 'inbox.draft.sent', 'inbox.draft.updated']);
    const thread = (await r.inboxes.threads.list({ inboxId })).data!.data.find((x) => x.id === t.id)!;
    expect(thread).toMatchObject({ email_count: 2, has_draft: false });

    // A standalone draft sent starts a thread in `sent`.
    const sent2 = await r.inboxes.drafts.send({ inboxId, draftId: standalone.data!.id, headers: { 'X-Ticket': '42' } });
    expect(sent2.error).toBeNull();
    const fresh = await threadOf('Hello', 'Ada from Support <support@help.test>');
    expect(fresh.folder).toBe('sent');

    const gone = await r.inboxes.drafts.create({ inboxId, to: 'x@dest.test', text: 'bye' }, { idempotencyKey: 'draft-1' });
    // The same create under the same key answers the same draft, and makes no other.
    expect((await r.inboxes.drafts.create({ inboxId, to: 'x@dest.test', text: 'bye' }, { idempotencyKey: 'draft-1' })).data).toEqual(gone.data);
    expect((await r.inboxes.drafts.remove({ inboxId, draftId: gone.data!.id })).data).toEqual({ object: 'inbox_draft', id: gone.data!.id, deleted: true });
    expect(await kinds(gone.data!.id)).toEqual(['inbox.draft.created', 'inbox.draft.deleted']);

    // Oversize: the bodies past 1 MB, or files past 25 MB.
    const big = await r.inboxes.drafts.create({ inboxId, to: 'x@dest.test', text: 'x'.repeat(1024 * 1024 + 1) });
    expect(big.error).toMatchObject({ statusCode: 422, name: 'validation_error' });
    expect((await r.inboxes.drafts.create({ inboxId, to: 'not an address' })).error?.statusCode).toBe(422);
    expect((await r.inboxes.drafts.create({ inboxId, threadId: t.id } as never)).error?.statusCode).toBe(422);
    expect((await r.inboxes.drafts.get({ inboxId, draftId: '00000000-0000-7000-8000-000000000000' })).error?.statusCode).toBe(404);
  });

  test('search by subject, participants and body text, with the list filters', async () => {
    const r = s.p.resend;
    const byBody = await r.inboxes.threads.search({ inboxId, query: 'photo' });
    expect(byBody.error).toBeNull();
    expect(byBody.data?.data.map((x) => x.subject)).toEqual(['Broken part']);
    expect(byBody.data!.data[0]!.matched_email_id).toEqual(expect.any(String));
    const bySubject = await r.inboxes.threads.search({ inboxId, query: 'invoice' });
    expect(bySubject.data?.data.map((x) => x.subject)).toEqual(['Invoice']);
    const byFrom = await r.inboxes.threads.search({ inboxId, from: ['zed@other.test'] });
    expect(byFrom.data?.data.map((x) => x.from)).toEqual(['zed@other.test']);
    const withFiles = await r.inboxes.threads.search({ inboxId, hasAttachment: true });
    // The invoice went out as a draft's file.
    expect(withFiles.data?.data.map((x) => x.subject).sort()).toEqual(['Broken part', 'Invoice']);
    expect((await r.inboxes.threads.search({ inboxId, startDate: 'yesterday-ish' })).error?.statusCode).toBe(422);
  });

  test('agent settings: get, update; instructions at most 4,000 characters', async () => {
    const r = s.p.resend;
    expect((await r.inboxes.agent.get({ inboxId })).data).toEqual({ object: 'inbox_agent', instructions: null, tone: null, actions: [] });
    const u = await r.inboxes.agent.update({ inboxId, instructions: 'Be kind.', tone: 'concise_professional', actions: ['draft_reply', 'add_labels'] });
    expect(u.data).toEqual({ object: 'inbox_agent', id: inboxId });
    expect((await r.inboxes.agent.get({ emailAddress: 'support@help.test' })).data).toEqual({
      object: 'inbox_agent',
      instructions: 'Be kind.',
      tone: 'concise_professional',
      actions: ['draft_reply', 'add_labels'],
    });
    expect((await r.inboxes.agent.update({ inboxId, instructions: 'x'.repeat(4001) })).error?.statusCode).toBe(422);
    expect((await r.inboxes.agent.update({ inboxId, tone: 'shouty' as never })).error?.statusCode).toBe(422);
  });

  test('tenancy: another team gets 404 for every inbox, thread, email and draft of this one', async () => {
    const b = s.p.client(teamB.api_key);
    const t = await threadOf('Invoice');
    const [m] = (await s.p.resend.inboxes.threads.emails.list({ inboxId, threadId: t.id })).data!.data;
    expect((await b.inboxes.threads.list({ inboxId })).error?.statusCode).toBe(404);
    expect((await b.inboxes.threads.get({ inboxId, threadId: t.id })).error?.statusCode).toBe(404);
    expect((await b.inboxes.threads.emails.reply({ inboxId, threadId: t.id, emailId: m!.id, text: 'hi' })).error?.statusCode).toBe(404);
    expect((await b.inboxes.threads.update({ inboxId, threadId: t.id, folder: 'trash' })).error?.statusCode).toBe(404);
    expect((await b.inboxes.drafts.create({ inboxId, text: 'x' })).error?.statusCode).toBe(404);
    expect((await b.inboxes.agent.get({ inboxId })).error?.statusCode).toBe(404);
    expect((await b.inboxes.remove(inboxId)).error?.statusCode).toBe(404);
    // An unknown thread or email of this team's inbox: 404 too.
    const r = s.p.resend;
    const none = '00000000-0000-7000-8000-000000000000';
    expect((await r.inboxes.threads.get({ inboxId, threadId: none })).error).toMatchObject({ statusCode: 404, name: 'not_found' });
    expect((await r.inboxes.threads.emails.get({ inboxId, threadId: t.id, emailId: none })).error?.statusCode).toBe(404);
    expect((await r.inboxes.threads.get({ inboxId, threadId: 'nope' })).error?.statusCode).toBe(422);
  });

  test('remove a thread, a label and the inbox', async () => {
    const r = s.p.resend;
    const t = await threadOf('Order 42 is late', 'zed@other.test');
    expect((await r.inboxes.threads.remove({ inboxId, threadId: t.id })).data).toEqual({ object: 'inbox_thread', id: t.id, deleted: true });
    expect((await r.inboxes.threads.get({ inboxId, threadId: t.id })).error?.statusCode).toBe(404);
    const [label] = (await r.inboxes.labels.list({ inboxId })).data!.data;
    expect((await r.inboxes.labels.remove({ inboxId, labelId: label!.id })).data).toEqual({ object: 'inbox_label', id: label!.id, deleted: true });
    const rm = await r.inboxes.remove(inboxId);
    expect(rm.data).toEqual({ object: 'inbox', id: inboxId, deleted: true });
    expect((await r.inboxes.get(inboxId)).error?.statusCode).toBe(404);
    expect(await kinds(inboxId)).toEqual(['inbox.created', 'inbox.updated', 'inbox.deleted']);
    // Its address is free again, and mail to it is only received mail now.
    expect((await r.inboxes.create({ emailAddress: 'support@help.test' })).error).toBeNull();
  });
});

describe('webhooks', () => {
  test('all 14 inbox.* kinds reach a subscribed endpoint, with Resend’s payloads', async () => {
    await hooks.waitFor((reqs) => INBOX_KINDS.every((k) => reqs.some((h) => h.payload.type === k)), 'every inbox.* kind');
    const first = (kind: string) => hooks.requests.find((h) => h.payload.type === kind)!.payload.data;
    // Inbound mail's are the system's; the others were made through the API.
    const bySystem = ['inbox.thread.created', 'inbox.email.received'];
    for (const k of INBOX_KINDS) expect(first(k), k).toMatchObject({ source: bySystem.includes(k) ? 'system' : 'api', inbox_id: expect.any(String) });
    expect(first('inbox.created').inbox).toMatchObject({ object: 'inbox', email_address: 'support@help.test', unread: 0 });
    const received = first('inbox.email.received');
    expect(received).toMatchObject({ source: 'system', thread_id: expect.any(String), email_id: expect.any(String), thread: { object: 'inbox_thread' } });
    expect(received.email).toMatchObject({ direction: 'inbound', from: 'ann@dest.test' });
    expect(Object.keys(received.email as object)).not.toContain('html');
    expect(first('inbox.thread.created')).toMatchObject({ source: 'system' });
    expect(first('inbox.thread.assigned')).toMatchObject({ assignee_email: 'agent@help.test', assigned_by_email: null, previous_assignee_email: null });
    expect(first('inbox.thread.unassigned')).toMatchObject({ previous_assignee_email: 'agent@help.test' });
    expect(first('inbox.thread.labels.updated')).toMatchObject({ added: [{ name: 'Urgent', color: '#E93D82' }, { name: 'Invoices' }], removed: [] });
    expect(first('inbox.draft.created')).toMatchObject({ draft_id: expect.any(String), thread_id: expect.any(String), draft: { type: 'reply' } });
    expect(first('inbox.draft.sent')).toMatchObject({ draft_id: expect.any(String), email_id: expect.any(String), email: { direction: 'outbound' } });
    expect(first('inbox.deleted')).toEqual({ source: 'api', inbox_id: inboxId });
  });
});
