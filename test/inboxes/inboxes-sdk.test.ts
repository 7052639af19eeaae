// Inboxes through the official SDK (docs/api.md §25): every `resend.inboxes.*` method against a
// running Posthorn, with mail delivered over SMTP by nodemailer as a sending MTA (threads from real
// mail, a reply chain), replies and forwards sent through the sending core to a sink, tenancy and
// bad input.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { startDnsServer, type TestDns } from '../helpers/dns';
import { startPosthornSmtp, mta, inboundProcessed, type RunningSmtp } from '../helpers/smtp';
import { markVerified } from '../helpers/emails';
import type { Credentials } from '../../src/accounts/bootstrap';

let s: RunningSmtp;
let dns: TestDns;
let teamB: Credentials;
let inboxId: string;

beforeAll(async () => {
  dns = await startDnsServer();
  s = await startPosthornSmtp({ 'dns.servers': [dns.address] });
  const a = await s.p.api('POST', '/domains', { body: { name: 'help.test', capabilities: { receiving: 'enabled' } } });
  expect(a.status).toBe(201);
  await markVerified(s.p, s.p.creds.team_id, a.body.id);
  // Verified but not receiving; receiving but not verified.
  const b = await s.p.api('POST', '/domains', { body: { name: 'sendonly.test' } });
  await markVerified(s.p, s.p.creds.team_id, b.body.id);
  await s.p.api('POST', '/domains', { body: { name: 'unverified.test', capabilities: { receiving: 'enabled' } } });
  teamB = await s.p.newTeam();
});
afterAll(async () => {
  await s.stop();
  await dns.close();
});

/** Deliver as an MTA (no AUTH) and wait until it is processed. */
async function deliver(message: Record<string, unknown>, to = ['support@help.test']): Promise<void> {
  const t = mta(s.starttls);
  try {
    await t.sendMail({ envelope: { from: (message.envelopeFrom as string) ?? 'ann@customer.test', to }, ...message } as never);
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
      from: 'Ann <ann@customer.test>',
      to: 'support@help.test',
      subject: 'Order 42 is late',
      text: 'Where is my order?',
      messageId: '<m1@customer.test>',
    });
    let threads = await r.inboxes.threads.list({ inboxId });
    expect(threads.error).toBeNull();
    expect(threads.data?.data).toHaveLength(1);
    const t = threads.data!.data[0]!;
    expect(t).toMatchObject({
      subject: 'Order 42 is late',
      from: 'ann@customer.test',
      email_count: 1,
      read: false,
      folder: 'inbox',
      has_draft: false,
      labels: [],
    });

    // Ann writes again, answering her own message (In-Reply-To), with another subject.
    await deliver({
      from: 'ann@customer.test',
      to: 'support@help.test',
      subject: 'more details',
      text: 'It was order 42.',
      messageId: '<m2@customer.test>',
      inReplyTo: '<m1@customer.test>',
      references: ['<m1@customer.test>'],
    });
    // A client that drops the fields: the subject and a participant match.
    await deliver({ from: 'ann@customer.test', to: 'support@help.test', subject: 'RE: Order 42 is late', text: 'Any news?', messageId: '<m3@customer.test>' });
    // Another subject: another thread.
    await deliver({
      from: 'ann@customer.test',
      to: 'support@help.test',
      subject: 'Invoice',
      text: 'Please send the invoice.',
      messageId: '<m4@customer.test>',
    });
    // The same subject from somebody else: another thread too.
    await deliver({ from: 'zed@other.test', to: 'support@help.test', subject: 'Order 42 is late', text: 'Me too', messageId: '<m5@other.test>' }, [
      'support@help.test',
    ]);

    threads = await r.inboxes.threads.list({ inboxId });
    const bySubject = threads.data!.data.map((x) => [x.subject, x.email_count, x.from]);
    expect(bySubject).toContainEqual(['Order 42 is late', 3, 'ann@customer.test']);
    expect(bySubject).toContainEqual(['Invoice', 1, 'ann@customer.test']);
    expect(bySubject).toContainEqual(['Order 42 is late', 1, 'zed@other.test']);
    expect(threads.data!.data).toHaveLength(3);

    const emails = await r.inboxes.threads.emails.list({ inboxId, threadId: t.id });
    expect(emails.data?.data.map((e) => e.message_id).sort()).toEqual(['<m1@customer.test>', '<m2@customer.test>', '<m3@customer.test>']);
    const first = emails.data!.data.find((e) => e.message_id === '<m1@customer.test>')!;
    expect(first).toMatchObject({ direction: 'inbound', from: 'ann@customer.test', to: ['support@help.test'], text: 'Where is my order?', read: false });
    const one = await r.inboxes.threads.emails.get({ inboxId, threadId: t.id, emailId: first.id });
    expect(one.data?.id).toBe(first.id);

    const inbox = await r.inboxes.get(inboxId);
    expect(inbox.data?.unread).toBe(3);
    expect(inbox.data?.last_received).toEqual(expect.any(String));
  });
});
