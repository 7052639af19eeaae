// Inbound mail end to end (docs/api.md §8, §14.3): a sending MTA delivers, without AUTH, to
// Posthorn's receiving domains; the message is stored once per team, announced with one
// `email.received` per team, and read back through /emails/receiving, its attachments and the
// signed download links — non-UTF-8 charsets decoded, SPF/DKIM/DMARC checked through the test DNS.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeyPairSync } from 'node:crypto';
import { simpleParser } from 'mailparser';
import { dkimSign } from 'mailauth';
import { startDnsServer, type TestDns } from '../helpers/dns';
import { startPosthornSmtp, mta, inboundProcessed, SmtpDialog, type RunningSmtp } from '../helpers/smtp';
import { startReceiver } from '../helpers/receiver';
import type { Credentials } from '../../src/accounts/bootstrap';

const FIXTURES = join(import.meta.dir, '..', 'fixtures', 'inbound');

let s: RunningSmtp;
let dns: TestDns;
let teamB: Credentials;

beforeAll(async () => {
  dns = await startDnsServer();
  // Private networks allowed: the webhook receiver listens on loopback.
  s = await startPosthornSmtp({ 'dns.servers': [dns.address], 'security.allow_private_networks': true });
  const a = await s.p.api('POST', '/domains', { body: { name: 'inbound.test', capabilities: { receiving: 'enabled' } } });
  expect(a.status).toBe(201);
  teamB = await s.p.newTeam();
  const b = await s.p.api('POST', '/domains', { body: { name: 'team-b.test', capabilities: { receiving: 'enabled' } }, key: teamB.api_key });
  expect(b.status).toBe(201);
  // A domain that sends but does not receive: nobody may deliver to it through Posthorn.
  await s.p.api('POST', '/domains', { body: { name: 'sendonly.test' } });
});
afterAll(async () => {
  await s.stop();
  await dns.close();
});

/** Deliver as an MTA (no AUTH) and wait until it is processed; resolves to the SMTP reply text. */
async function deliver(envelope: { from: string; to: string[] }, message: { raw: Buffer | string } | Record<string, unknown>): Promise<string> {
  const t = mta(s.starttls);
  try {
    const info = await t.sendMail({ envelope, ...message } as never);
    await inboundProcessed(s.p);
    return info.response;
  } finally {
    t.close();
  }
}

async function received(key = s.p.apiKey) {
  return (await s.p.api('GET', '/emails/receiving', { key })).body;
}

/** The newest received email of the team whose subject matches. */
async function bySubject(subject: string, key = s.p.apiKey) {
  const list = await received(key);
  const item = list.data.find((e: { subject: string }) => e.subject === subject);
  if (!item) throw new Error(`no received email "${subject}" in ${JSON.stringify(list.data.map((e: { subject: string }) => e.subject))}`);
  return (await s.p.api('GET', `/emails/receiving/${item.id}`, { key })).body;
}

const local = (url: string) => url.replace('http://localhost:3000', s.p.url);

describe('receiving', () => {
  test('stored once per team with its own received_for, one email.received each; readable with attachments and raw', async () => {
    const pdf = Buffer.from('%PDF-1.4 inbound invoice');
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
    const reply = await deliver(
      { from: 'bob@sender.test', to: ['support@inbound.test', 'sales@inbound.test', 'ops@team-b.test'] },
      {
        from: 'Bob <bob@sender.test>',
        to: 'Support <support@inbound.test>, ops@team-b.test',
        cc: 'sales@inbound.test',
        replyTo: 'bob.reply@sender.test',
        subject: 'Question',
        text: 'Hi',
        html: '<p>Hi <img src="cid:logo"></p>',
        messageId: '<abc@sender.test>',
        headers: [
          { key: 'X-Tag', value: 'one' },
          { key: 'X-Tag', value: 'two' },
        ],
        attachments: [
          { filename: 'invoice.pdf', content: pdf },
          { filename: 'logo.png', content: png, cid: 'logo' },
        ],
      },
    );
    expect(reply).toBe('250 2.0.0 OK');

    const a = await bySubject('Question');
    // Read before toMatchObject: Bun 1.4.5's toMatchObject leaves its asymmetric matchers in the received object.
    const rawUrl: string = a.raw.download_url;
    expect(a).toMatchObject({
      object: 'email',
      to: ['support@inbound.test', 'ops@team-b.test'],
      from: 'bob@sender.test',
      subject: 'Question',
      cc: ['sales@inbound.test'],
      bcc: [],
      reply_to: ['bob.reply@sender.test'],
      received_for: ['support@inbound.test', 'sales@inbound.test'],
      message_id: '<abc@sender.test>',
      html: '<p>Hi <img src="cid:logo"></p>',
      html_format: 'cid',
      text: 'Hi',
      raw: { download_url: expect.stringMatching(/\/d\//), expires_at: expect.any(String) },
    });
    expect(a.headers.from).toBe('Bob <bob@sender.test>');
    expect(a.headers.subject).toBe('Question');
    expect(a.headers['x-tag']).toBe('one, two');
    expect(a.headers.received).toContain('by mx.posthorn.test (Posthorn) with ESMTPS');
    expect(a.headers['return-path']).toBe('<bob@sender.test>');
    expect(Object.keys(a.headers).every((k: string) => k === k.toLowerCase())).toBe(true);
    const byName = Object.fromEntries(a.attachments.map((x: { filename: string }) => [x.filename, x]));
    expect(byName['invoice.pdf']).toMatchObject({ content_type: 'application/pdf', content_disposition: 'attachment', content_id: null, size: pdf.length });
    expect(byName['logo.png']).toMatchObject({ content_type: 'image/png', content_disposition: 'inline', content_id: 'logo', size: png.length });

    // html_format=data_uri inlines the image; anything else is refused.
    const inlined = await s.p.api('GET', `/emails/receiving/${a.id}?html_format=data_uri`);
    expect(inlined.body.html).toBe(`<p>Hi <img src="data:image/png;base64,${png.toString('base64')}"></p>`);
    expect(inlined.body.html_format).toBe('data_uri');
    expect((await s.p.api('GET', `/emails/receiving/${a.id}?html_format=inline`)).body).toMatchObject({ statusCode: 422, name: 'validation_error' });

    // Attachments: list (no limit → all) and one, with signed links that need no key.
    const list = await s.p.api('GET', `/emails/receiving/${a.id}/attachments`);
    expect(list.body).toMatchObject({ object: 'list', has_more: false });
    expect(list.body.data).toHaveLength(2);
    const invoice = list.body.data.find((x: { filename: string }) => x.filename === 'invoice.pdf');
    const invoiceUrl: string = invoice.download_url;
    expect(invoice).toMatchObject({ object: 'attachment', size: pdf.length, download_url: expect.any(String), expires_at: expect.any(String) });
    // The attachment object leaves out a content_id the part does not have (docs/api.md §1.5).
    expect('content_id' in invoice).toBe(false);
    expect(list.body.data.find((x: { filename: string }) => x.filename === 'logo.png').content_id).toBe('logo');
    const dl = await fetch(local(invoiceUrl));
    expect(dl.status).toBe(200);
    expect(dl.headers.get('content-type')).toBe('application/pdf');
    expect(Buffer.from(await dl.arrayBuffer())).toEqual(pdf);
    const one = await s.p.api('GET', `/emails/receiving/${a.id}/attachments/${invoice.id}`);
    expect(one.body).toMatchObject({ id: invoice.id, filename: 'invoice.pdf' });
    expect((await s.p.api('GET', `/emails/receiving/${a.id}/attachments/${a.id}`)).status).toBe(404);

    // The raw message: Posthorn's trace fields on top of what was received.
    const raw = await fetch(local(rawUrl));
    expect(raw.headers.get('content-type')).toBe('message/rfc822');
    const eml = Buffer.from(await raw.arrayBuffer());
    expect(eml.toString()).toMatch(/^Return-Path: <bob@sender\.test>\r\nReceived: from mta\.sender\.test \(\[127\.0\.0\.1\]\)/);
    const reparsed = await simpleParser(eml);
    expect(reparsed.attachments.find((x) => x.filename === 'invoice.pdf')!.content).toEqual(pdf);

    // Team B got its own copy, with its own recipient only.
    const b = await bySubject('Question', teamB.api_key);
    expect(b.id).not.toBe(a.id);
    expect(b.received_for).toEqual(['ops@team-b.test']);
    expect((await s.p.api('GET', `/emails/receiving/${a.id}`, { key: teamB.api_key })).status).toBe(404);

    // One email.received per team, metadata only (docs/api.md §14.3).
    const evA = await s.p.svc.events.log(s.p.svc.store, s.p.creds.team_id, a.id);
    expect(evA.map((e) => e.type)).toEqual(['email.received']);
    expect(evA[0].webhook).toBe(true);
    expect(evA[0].data).toEqual({
      email_id: a.id,
      created_at: a.created_at,
      from: 'bob@sender.test',
      to: ['support@inbound.test', 'ops@team-b.test'],
      bcc: [],
      cc: ['sales@inbound.test'],
      received_for: ['support@inbound.test', 'sales@inbound.test'],
      message_id: '<abc@sender.test>',
      subject: 'Question',
      attachments: a.attachments.map(({ id, filename, content_type, content_disposition, content_id }: Record<string, unknown>) => ({
        id,
        filename,
        content_type,
        content_disposition,
        content_id,
      })),
    });
    expect((await s.p.svc.events.log(s.p.svc.store, teamB.team_id, b.id)).map((e) => e.type)).toEqual(['email.received']);
  });

  test('list: literal path before /emails/{id}, newest first, no limit → all; item fields', async () => {
    for (const n of [1, 2, 3])
      expect(
        await deliver(
          { from: 'x@sender.test', to: ['list@inbound.test'] },
          { from: 'x@sender.test', to: 'list@inbound.test', subject: `list ${n}`, text: 't' },
        ),
      ).toBe('250 2.0.0 OK');
    const all = await received();
    expect(all.object).toBe('list');
    expect(all.has_more).toBe(false);
    const subjects = all.data.map((e: { subject: string }) => e.subject);
    expect(subjects.indexOf('list 3')).toBeLessThan(subjects.indexOf('list 1'));
    expect(Object.keys(all.data[0]).sort()).toEqual([
      'attachments',
      'authentication',
      'bcc',
      'cc',
      'created_at',
      'from',
      'id',
      'message_id',
      'received_for',
      'reply_to',
      'subject',
      'to',
    ]);
    const page = await s.p.api('GET', '/emails/receiving?limit=2');
    expect(page.body.data).toHaveLength(2);
    expect(page.body.has_more).toBe(true);
    // Received mail is not sent mail.
    expect((await s.p.api('GET', `/emails/${all.data[0].id}`)).status).toBe(404);
    expect((await s.p.api('GET', '/emails/receiving/not-a-uuid')).status).toBe(422);
    expect((await s.p.api('GET', `/emails/receiving/${crypto.randomUUID()}`)).body).toMatchObject({ statusCode: 404, message: 'Email not found' });
  });

  test('non-UTF-8 charsets are decoded: ISO-8859-1, windows-1252, ISO-2022-JP', async () => {
    for (const file of ['latin1.eml', 'cp1252.eml', 'iso2022jp.eml'])
      expect(await deliver({ from: 'charsets@sender.test', to: ['support@inbound.test'] }, { raw: readFileSync(join(FIXTURES, file)) })).toBe('250 2.0.0 OK');

    const latin1 = await bySubject('Grüße aus Köln');
    expect(latin1.text.trim()).toBe('Grüße aus Köln, schöne Straße.');
    expect(latin1.headers.from).toBe('Jürgen Müller <juergen@sender.test>');
    expect(latin1.from).toBe('juergen@sender.test');

    const cp1252 = await bySubject('Invoice € 10');
    expect(cp1252.html.trim()).toBe('<p>Price: 10 € – “quoted”</p>');
    expect(cp1252.text).toBeNull();

    const jp = await bySubject('こんにちは');
    expect(jp.text.trim()).toBe('こんにちは、世界。');
    expect(jp.headers.subject).toBe('こんにちは');
    expect(jp.headers.from).toBe('山田 <yamada@sender.test>');
  });

  test('authentication: SPF, DKIM and DMARC pass for an aligned, signed message; unknown without records', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pub = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
    dns.zone.set('mail._domainkey.signed.test', 'TXT', [`v=DKIM1; k=rsa; p=${pub}`]);
    dns.zone.set('signed.test', 'TXT', ['v=spf1 ip4:127.0.0.1 -all']);
    dns.zone.set('_dmarc.signed.test', 'TXT', ['v=DMARC1; p=reject']);
    const message = Buffer.from(
      'From: Alice <alice@signed.test>\r\nTo: support@inbound.test\r\nSubject: Signed\r\nMessage-ID: <signed@signed.test>\r\n' +
        'Date: Tue, 04 Mar 2025 10:00:00 +0000\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nAuthentic.\r\n',
    );
    const signature = {
      canonicalization: 'relaxed/relaxed',
      signingDomain: 'signed.test',
      selector: 'mail',
      privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    };
    const signed = await dkimSign(message, { ...signature, signatureData: [signature] });
    expect(signed.signatures).toStartWith('DKIM-Signature:');
    expect(signed.errors).toEqual([]);
    await deliver({ from: 'alice@signed.test', to: ['support@inbound.test'] }, { raw: Buffer.concat([Buffer.from(signed.signatures), message]) });
    expect((await bySubject('Signed')).authentication).toEqual({ spf: 'pass', dkim: 'pass', dmarc: 'pass' });

    await deliver(
      { from: 'nobody@unsigned.test', to: ['support@inbound.test'] },
      { from: 'nobody@unsigned.test', to: 'support@inbound.test', subject: 'Unsigned', text: 't' },
    );
    expect((await bySubject('Unsigned')).authentication).toEqual({ spf: 'unknown', dkim: 'unknown', dmarc: 'unknown' });

    // A forged From: the SPF of the envelope domain passes, but DMARC for signed.test fails.
    await deliver(
      { from: 'x@sender.test', to: ['support@inbound.test'] },
      { from: 'alice@signed.test', to: 'support@inbound.test', subject: 'Forged', text: 't' },
    );
    expect((await bySubject('Forged')).authentication).toMatchObject({ dkim: 'unknown', dmarc: 'fail' });
  });

  test('email.received reaches a subscribed webhook with the metadata payload', async () => {
    const r = await startReceiver();
    try {
      const hook = await s.p.api('POST', '/webhooks', { body: { endpoint: r.url, events: ['email.received'] } });
      expect(hook.status).toBe(201);
      await deliver(
        { from: 'hook@sender.test', to: ['hooks@inbound.test'] },
        { from: 'Hook <hook@sender.test>', to: 'hooks@inbound.test', subject: 'Hooked', text: 't' },
      );
      await r.waitFor((reqs) => reqs.length >= 1, 'email.received');
      const [req] = r.requests;
      expect(req.id).toMatch(/^msg_/);
      expect(req.payload.type).toBe('email.received');
      const got = await bySubject('Hooked');
      expect(req.payload.data).toEqual({
        email_id: got.id,
        created_at: got.created_at,
        from: 'hook@sender.test',
        to: ['hooks@inbound.test'],
        bcc: [],
        cc: [],
        received_for: ['hooks@inbound.test'],
        message_id: got.message_id,
        subject: 'Hooked',
        attachments: [],
      });
      await s.p.api('DELETE', `/webhooks/${hook.body.id}`);
    } finally {
      await r.close();
    }
  });

  test('receiving switched off between RCPT and the end of DATA → 550, never a 250 for mail then dropped', async () => {
    const d = await s.p.api('POST', '/domains', { body: { name: 'closing.test', capabilities: { receiving: 'enabled' } } });
    const c = await SmtpDialog.open(s.starttls);
    await c.command('EHLO mta.sender.test');
    await c.command('MAIL FROM:<bob@elsewhere.test>');
    expect((await c.command('RCPT TO:<desk@closing.test>')).code).toBe(250);
    expect((await c.command('DATA')).code).toBe(354);
    await s.p.api('PATCH', `/domains/${d.body.id}`, { body: { capabilities: { receiving: 'disabled' } } });
    const reply = await c.data('From: bob@elsewhere.test\r\nTo: desk@closing.test\r\nSubject: too late\r\n\r\nhi\r\n.\r\n');
    expect(reply.text).toBe('550 5.1.1 No valid recipients: the domain no longer receives mail here');
    c.close();
  });

  test('only receiving domains: a send-only domain and strangers are relaying; access rules of the API', async () => {
    const c = await SmtpDialog.open(s.starttls);
    await c.command('EHLO mta.sender.test');
    await c.command('MAIL FROM:<x@sender.test>');
    expect((await c.command('RCPT TO:<hello@sendonly.test>')).text).toBe('550 5.7.1 Relaying denied');
    expect((await c.command('RCPT TO:<someone@nowhere.test>')).text).toBe('550 5.7.1 Relaying denied');
    // Any local part of a receiving domain, case-insensitively, over plain SMTP too.
    expect((await c.command('RCPT TO:<Anything.At.All@INBOUND.test>')).code).toBe(250);
    c.close();

    const key = await s.p.api('POST', '/api-keys', { body: { name: 'send only', permission: 'sending_access' } });
    expect((await s.p.api('GET', '/emails/receiving', { key: key.body.token })).status).toBe(401);
    expect((await s.p.api('GET', '/emails/receiving', { key: null })).status).toBe(401);
  });
});
