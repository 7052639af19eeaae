// Sending broadcasts end to end (docs/api.md §13, §13.4, §14.3): recipient emails through the
// sending core to a loopback MTA, placeholders, List-Unsubscribe / RFC 8058 one-click, scheduled
// broadcasts, the domain refusal, and resuming an interrupted send without sending anyone twice.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { startMailWorld, authenticateReceived, type MailWorld } from '../helpers/world';
import { startPosthorn, type Running } from '../helpers/posthorn';
import { startDnsServer } from '../helpers/dns';
import { startSink } from '../helpers/sink';
import { verifiedDomain, storedEmails } from '../helpers/emails';
import { until } from '../helpers/wait';
import { openStore, type BroadcastRec, type EmailRec } from '../../src/store';
import { startBroadcast } from '../../src/broadcasts';
import { sendBroadcast } from '../../src/broadcasts/send';
import { renderPlaceholders, withPreheader } from '../../src/broadcasts/placeholders';
import { SignedLinks } from '../../src/links/signed';

let w: MailWorld;
let team: string;

async function segment(p: Running, name = 'News'): Promise<string> {
  const r = await p.api('POST', '/segments', { body: { name } });
  expect(r.status).toBe(201);
  return r.body.id;
}

async function contact(p: Running, seg: string, body: Record<string, unknown>): Promise<string> {
  const r = await p.api('POST', '/contacts', { body: { ...body, segments: [seg] } });
  expect(r.status).toBe(201);
  return r.body.id;
}

/** Bounded wait for a broadcast's status. */
async function untilStatus(p: Running, teamId: string, id: string, status: BroadcastRec['status'], timeoutMs = 15_000): Promise<BroadcastRec> {
  const b = await until(
    async () => {
      const cur = await p.svc.store.broadcasts.get(teamId, id);
      return cur?.status === status && cur;
    },
    `broadcast ${id} ${status}`,
    timeoutMs,
  );
  expect(b.status).toBe(status);
  return b;
}

const emailsOf = async (p: Running, teamId: string, broadcastId: string): Promise<EmailRec[]> =>
  (await storedEmails(p.svc, teamId)).filter((e) => e.broadcast_id === broadcastId);

/** A header of a received message, unfolded (RFC 5322 §2.2.3: long ones are folded). */
function header(raw: Buffer, name: string): string | undefined {
  const head = raw
    .toString('latin1')
    .split('\r\n\r\n')[0]
    .replace(/\r\n[ \t]+/g, ' ');
  return new RegExp(`^${name}: *(.*)$`, 'im').exec(head)?.[1];
}

/** The List-Unsubscribe URL of a received message. */
function unsubscribeUrl(raw: Buffer): string {
  const m = /^<(http[^>]+)>$/.exec(header(raw, 'List-Unsubscribe') ?? '');
  expect(m).not.toBeNull();
  return m![1];
}

/** The same URL on the test server (public_url is not it). */
const unsubscribePath = (raw: Buffer) => new URL(unsubscribeUrl(raw)).pathname;

beforeAll(async () => {
  w = await startMailWorld();
  team = w.p.creds.team_id;
});
afterAll(() => w.stop());

describe('sending', () => {
  let seg: string;
  let ids: Record<string, string>;
  let broadcastId: string;

  beforeAll(async () => {
    seg = await segment(w.p);
    expect((await w.p.api('POST', '/contact-properties', { body: { key: 'company', type: 'string' } })).status).toBe(201);
    ids = {
      ann: await contact(w.p, seg, { email: 'ann@dest.test', first_name: 'Ann', properties: { company: 'Ann & <Co>' } }),
      bob: await contact(w.p, seg, { email: 'Bob@dest.test' }),
      carl: await contact(w.p, seg, { email: 'carl@dest.test', first_name: 'Carl', unsubscribed: true }),
      dora: await contact(w.p, seg, { email: 'dora@dest.test', first_name: 'Dora' }),
    };
    expect((await w.p.api('POST', '/suppressions', { body: { email: 'dora@dest.test' } })).status).toBe(201);
    const { data, error } = await w.p.resend.broadcasts.create({
      segmentId: seg,
      from: 'Acme News <news@example.test>',
      subject: 'Hi {{{contact.first_name|there}}}',
      html:
        '<html><body><p>Hello {{{ FIRST_NAME | friend }}} of {{{contact.company|nowhere}}}</p>' +
        '<p>{{{unknown.key}}} {{{contact.first_name}}}!</p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a></body></html>',
      text: 'Hello {{{contact.first_name|friend}}} <{{{EMAIL}}}> of {{{contact.company}}}: {{{RESEND_UNSUBSCRIBE_URL}}} {{{other}}}',
      previewText: 'News for {{{contact.first_name|you}}} & co',
      send: true,
    });
    expect(error).toBeNull();
    broadcastId = data!.id;
  });

  test('the broadcast ends sent, with one email per subscribed contact (the suppressed one suppressed)', async () => {
    const b = await untilStatus(w.p, team, broadcastId, 'sent');
    expect(b.sent_at).toEqual(expect.any(String));
    const got = (await w.p.api('GET', `/broadcasts/${broadcastId}`)).body;
    expect(got).toMatchObject({ status: 'sent', sent_at: b.sent_at });
    const emails = await emailsOf(w.p, team, broadcastId);
    expect(emails.map((e) => e.to[0]).sort()).toEqual(['Bob@dest.test', 'ann@dest.test', 'dora@dest.test']);
    const dora = emails.find((e) => e.to[0] === 'dora@dest.test')!;
    expect(dora.recipients).toEqual({ 'dora@dest.test': 'suppressed' });
    // Progress is only kept while sending.
    expect(await w.p.svc.store.broadcastProgress.has(team, broadcastId, ids.ann)).toBe(false);
    // GET /emails lists them as ordinary emails.
    const list = (await w.p.api('GET', '/emails?limit=100')).body.data as { id: string; subject: string }[];
    for (const e of emails) expect(list.find((x) => x.id === e.id)?.subject).toBe(e.subject);
  });

  test('recipients get rendered placeholders, List-Unsubscribe headers and a DKIM signature covering them', async () => {
    await w.sink.waitFor(2);
    await until(
      async () => (await emailsOf(w.p, team, broadcastId)).every((e) => e.last_event === 'delivered' || e.last_event === 'suppressed'),
      'every email delivered or suppressed',
      10_000,
    );
    expect(w.sink.to('ann@dest.test').length).toBe(1);
    expect(w.sink.to('Bob@dest.test').length).toBe(1);
    expect(w.sink.to('carl@dest.test').length).toBe(0);
    expect(w.sink.to('dora@dest.test').length).toBe(0);

    const [annMsg] = w.sink.to('ann@dest.test');
    const ann = await simpleParser(annMsg.raw);
    expect(ann.subject).toBe('Hi Ann');
    const url = unsubscribeUrl(annMsg.raw);
    expect(url).toMatch(/^http:\/\/localhost:3000\/u\/[\w-]+\.[\w-]+$/);
    expect(header(annMsg.raw, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
    expect(ann.html).toContain('>News for Ann &amp; co</div><p>Hello Ann of Ann &amp; &lt;Co&gt;</p>');
    expect(ann.html).toContain('<p>{{{unknown.key}}} Ann!</p>');
    expect(ann.html).toContain(`<a href="${url}">Unsubscribe</a>`);
    expect(ann.html).toMatch(/<body><div data-preheader style="display:none;[^"]*">News for Ann &amp; co<\/div>/);
    expect(ann.text!.trim()).toBe(`Hello Ann <ann@dest.test> of Ann & <Co>: ${url} {{{other}}}`);

    const bob = await simpleParser(w.sink.to('Bob@dest.test')[0].raw);
    expect(bob.subject).toBe('Hi there');
    expect(bob.html).toContain('>News for you &amp; co</div><p>Hello friend of nowhere</p>');
    expect(bob.html).toContain('<p>{{{unknown.key}}} !</p>');
    expect(bob.text!.trim()).toMatch(/^Hello friend <Bob@dest\.test> of : http:\/\/localhost:3000\/u\/\S+ \{\{\{other\}\}\}$/);
    expect(unsubscribeUrl(w.sink.to('Bob@dest.test')[0].raw)).not.toBe(url);

    const auth = await authenticateReceived(w.dns, annMsg);
    const sig = auth.dkim.results[0]!;
    expect(sig.status.result).toBe('pass');
    expect(sig.signingDomain).toBe('example.test');
    // RFC 8058 §4: the signature covers both unsubscribe headers.
    const h = /DKIM-Signature:[\s\S]*?\bh=([^;]+);/i.exec(annMsg.raw.toString('latin1'))![1].replace(/\s+/g, '').toLowerCase().split(':');
    expect(h).toContain('list-unsubscribe');
    expect(h).toContain('list-unsubscribe-post');
  });

  test('webhook payloads carry broadcast_id', async () => {
    const ann = (await emailsOf(w.p, team, broadcastId)).find((e) => e.to[0] === 'ann@dest.test')!;
    const sent = (await w.p.svc.events.log(w.p.svc.store, team, ann.id)).find((e) => e.type === 'email.sent')!;
    expect(sent.data).toMatchObject({ email_id: ann.id, broadcast_id: broadcastId, subject: 'Hi Ann' });
  });

  test('GET of the unsubscribe link shows a confirmation page; it changes nothing', async () => {
    const path = unsubscribePath(w.sink.to('ann@dest.test')[0].raw);
    const res = await fetch(w.p.url + path);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await res.text();
    expect(html).toContain('ann@dest.test');
    expect(html).toContain('<form method="post">');
    expect(html).not.toMatch(/<script|src=|href=/);
    expect((await w.p.svc.store.contacts.get(team, ids.ann))!.unsubscribed).toBe(false);
  });

  test('one-click POST (RFC 8058) unsubscribes the contact and emits contact.updated once', async () => {
    const path = unsubscribePath(w.sink.to('ann@dest.test')[0].raw);
    const updates = async () => (await w.p.svc.events.log(w.p.svc.store, team, ids.ann)).filter((e) => e.type === 'contact.updated');
    const before = (await updates()).length;
    const post = () =>
      fetch(w.p.url + path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
    const res = await post();
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('You are unsubscribed');
    expect((await w.p.svc.store.contacts.get(team, ids.ann))!.unsubscribed).toBe(true);
    expect((await updates()).length).toBe(before + 1);
    expect((await updates()).at(-1)!.data).toMatchObject({ id: ids.ann, email: 'ann@dest.test', unsubscribed: true, segment_ids: [seg] });
    // Again: still 200, nothing changes, no second event.
    expect((await post()).status).toBe(200);
    expect((await updates()).length).toBe(before + 1);
    // The contact API agrees; GET now says so as well.
    expect((await w.p.api('GET', `/contacts/${ids.ann}`)).body.unsubscribed).toBe(true);
    expect(await (await fetch(w.p.url + path)).text()).toContain('You are unsubscribed');
  });

  test('forged, mangled and unknown-contact links answer a 404 page and change nothing', async () => {
    const path = unsubscribePath(w.sink.to('Bob@dest.test')[0].raw);
    const [payload, sig] = path.slice('/u/'.length).split('.');
    const forged = Buffer.from(JSON.stringify({ k: 'unsubscribe', t: team, c: ids.dora })).toString('base64url');
    for (const bad of [`${forged}.${sig}`, `${payload}.${sig.slice(0, -2)}xx`, payload, 'nope']) {
      for (const method of ['GET', 'POST']) {
        const res = await fetch(`${w.p.url}/u/${bad}`, {
          method,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: method === 'POST' ? 'List-Unsubscribe=One-Click' : undefined,
        });
        expect({ bad, method, status: res.status }).toEqual({ bad, method, status: 404 });
        expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      }
    }
    expect((await w.p.svc.store.contacts.get(team, ids.bob))!.unsubscribed).toBe(false);
    expect((await w.p.svc.store.contacts.get(team, ids.dora))!.unsubscribed).toBe(false);
    // A deleted contact's link.
    const gone = await contact(w.p, seg, { email: 'gone@dest.test' });
    const url = new SignedLinks(w.p.svc.store.secret('links'), w.p.svc.config.public_url).unsubscribeUrl({ team, contact: gone });
    expect((await w.p.api('DELETE', `/contacts/${gone}`)).status).toBe(200);
    expect((await fetch(w.p.url + new URL(url).pathname, { method: 'POST' })).status).toBe(404);
  });
});

describe('scheduling and refusal', () => {
  test('a scheduled broadcast goes out when due', async () => {
    const seg = await segment(w.p, 'Later');
    await contact(w.p, seg, { email: 'later@dest.test', first_name: 'Lea' });
    const at = new Date(Date.now() + 1500).toISOString();
    const { data, error } = await w.p.resend.broadcasts.create({
      segmentId: seg,
      from: 'news@example.test',
      subject: 'Later, {{{contact.first_name}}}',
      text: 'Scheduled.',
      send: true,
      scheduledAt: at,
    });
    expect(error).toBeNull();
    expect((await w.p.svc.store.broadcasts.get(team, data!.id))!.status).toBe('scheduled');
    const b = await untilStatus(w.p, team, data!.id, 'sent');
    expect(b.scheduled_at).toBe(at);
    await until(() => w.sink.to('later@dest.test').length > 0, 'the scheduled broadcast at the sink', 15_000);
    const msg = await simpleParser(w.sink.to('later@dest.test')[0].raw);
    expect(msg.subject).toBe('Later, Lea');
  });

  test('a cancelled scheduled broadcast never goes out', async () => {
    const seg = await segment(w.p, 'Cancelled');
    await contact(w.p, seg, { email: 'never@dest.test' });
    const at = Date.now() + 1000;
    const { data } = await w.p.resend.broadcasts.create({
      segmentId: seg,
      from: 'news@example.test',
      subject: 'Never',
      text: 'x',
      send: true,
      scheduledAt: new Date(at).toISOString(),
    });
    expect((await w.p.resend.broadcasts.cancel(data!.id)).error).toBeNull();
    // The scheduler's tick as it runs once the time has come (its clock given, not waited for).
    await w.p.svc.broadcasts.releaseDue(at + 1000);
    await w.p.svc.broadcasts.idle();
    expect((await w.p.svc.store.broadcasts.get(team, data!.id))!.status).toBe('draft');
    expect(await emailsOf(w.p, team, data!.id)).toEqual([]);
  });

  test('a broadcast whose from domain lost its verification goes back to draft, sending nothing', async () => {
    const seg = await segment(w.p, 'Refused');
    await contact(w.p, seg, { email: 'refused@dest.test' });
    const d = await verifiedDomain(w.p, 'lapsed.test');
    const { data } = await w.p.resend.broadcasts.create({ segmentId: seg, from: 'news@lapsed.test', subject: 'S', text: 'x' });
    // Queued (as by /send), then the domain fails before the emails are made.
    await w.p.svc.store.write(async (tx) => {
      startBroadcast(tx, (await tx.broadcasts.get(team, data!.id))!, null);
      tx.domains.put({ ...d, status: 'failed', record_status: { ...d.record_status, DKIM: 'failed' } });
    });
    w.p.svc.broadcasts.start(team, data!.id);
    await untilStatus(w.p, team, data!.id, 'draft');
    expect(await emailsOf(w.p, team, data!.id)).toEqual([]);
    expect((await w.p.svc.store.broadcastSchedule.due(Date.now())).some((x) => x.id === data!.id)).toBe(false);
  });
});

test('a test send (docs/api.md §13.7) arrives as a recipient would get it, marked `[Test] `, DKIM-signed over List-Unsubscribe; the segment gets nothing', async () => {
  const seg = await segment(w.p, 'Tested');
  const tess = await contact(w.p, seg, { email: 'tess@dest.test', first_name: 'Tess' });
  await contact(w.p, seg, { email: 'member@dest.test' });
  const { data } = await w.p.resend.broadcasts.create({
    segmentId: seg,
    from: 'Acme News <news@example.test>',
    subject: 'Hi {{{contact.first_name|there}}}',
    html: '<p>Hello {{{contact.first_name|friend}}}</p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a>',
  });
  const r = await w.p.api('POST', `/broadcasts/${data!.id}/test`, { body: { to: ['tess@dest.test', 'outsider@dest.test'] } });
  expect(r.status).toBe(200);
  const [toTess] = await (async () => {
    await until(() => w.sink.to('tess@dest.test').length === 1 && w.sink.to('outsider@dest.test').length === 1, 'both tests received');
    return w.sink.to('tess@dest.test');
  })();
  const tessMsg = await simpleParser(toTess.raw);
  expect(tessMsg.subject).toBe('[Test] Hi Tess');
  expect(tessMsg.html).toContain('<p>Hello Tess</p>');
  const link = unsubscribeUrl(toTess.raw);
  expect(tessMsg.html).toContain(`<a href="${link}">`);
  expect(header(toTess.raw, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
  const auth = await authenticateReceived(w.dns, toTess);
  expect(auth.dkim.results[0]!.status.result).toBe('pass');
  const outsider = w.sink.to('outsider@dest.test')[0]!;
  expect((await simpleParser(outsider.raw)).subject).toBe('[Test] Hi there');
  // Tess's link is her preference page; the outsider's names nobody: the invalid-link page.
  expect((await fetch(w.p.url + unsubscribePath(toTess.raw))).status).toBe(200);
  expect((await fetch(w.p.url + unsubscribePath(outsider.raw))).status).toBe(404);
  expect((await w.p.svc.store.contacts.get(team, tess))!.unsubscribed).toBe(false);
  // The broadcast is still a draft; its segment got nothing.
  expect((await w.p.svc.store.broadcasts.get(team, data!.id))!.status).toBe('draft');
  expect(await emailsOf(w.p, team, data!.id)).toEqual([]);
  expect(w.sink.to('member@dest.test')).toEqual([]);
});

test('batches: two runs at once (batches of one contact) still make exactly one email per contact', async () => {
  const seg = await segment(w.p, 'Batches');
  const people = ['b1', 'b2', 'b3', 'b4', 'b5'].map((x) => `${x}@dest.test`);
  for (const email of people) await contact(w.p, seg, { email });
  const { data } = await w.p.resend.broadcasts.create({ segmentId: seg, from: 'news@example.test', subject: 'Batch', text: 'x' });
  const store = w.p.svc.store;
  // Queued without a due-index entry, so only these two runs (not the scheduler) send it.
  await store.write(async (tx) => tx.broadcasts.put({ ...(await tx.broadcasts.get(team, data!.id))!, status: 'queued' }));
  const outcomes = await Promise.all([1, 2].map(() => sendBroadcast(w.p.svc, team, data!.id, { batchSize: 1 })));
  expect(outcomes).toContain('sent');
  expect((await store.broadcasts.get(team, data!.id))!.status).toBe('sent');
  expect((await emailsOf(w.p, team, data!.id)).map((e) => e.to[0]).sort()).toEqual(people);
  expect(await sendBroadcast(w.p.svc, team, data!.id)).toBe('skipped');
});

test('a send interrupted by a crash resumes after the restart; nobody gets two emails', async () => {
  const dns = await startDnsServer();
  const sink = await startSink({ tls: 'none' });
  const dataDir = mkdtempSync(join(tmpdir(), 'posthorn-broadcast-'));
  const overrides = { data_dir: dataDir, 'dns.servers': [dns.address], 'delivery.mx_port': sink.port, 'security.allow_private_networks': true };
  dns.zone.set('dest.test', 'MX', [{ exchange: 'mx.dest.test', priority: 10 }]);
  dns.zone.set('mx.dest.test', 'A', ['127.0.0.1']);
  try {
    const first = await startPosthorn(overrides);
    const t = first.creds.team_id;
    await verifiedDomain(first, 'resume.test', { dns });
    const seg = await segment(first);
    const people = ['a', 'b', 'c', 'd', 'e'];
    const ids: string[] = [];
    for (const x of people) ids.push(await contact(first, seg, { email: `${x}@dest.test` }));
    const { data } = await first.resend.broadcasts.create({ segmentId: seg, from: 'news@resume.test', subject: 'Once', text: 'Only once.' });
    const id = data!.id;
    await first.stop();

    // What a crash after the first batch leaves: queued, in the due index, a and b covered.
    const store = await openStore({ dataDir, retentionDays: 30, holdMs: 0 });
    await store.write(async (tx) => {
      startBroadcast(tx, (await tx.broadcasts.get(t, id))!, null);
      tx.broadcastProgress.put(t, id, ids[0], '00000000-0000-7000-8000-000000000001');
      tx.broadcastProgress.put(t, id, ids[1], '00000000-0000-7000-8000-000000000002');
    });
    await store.close();

    const second = await startPosthorn(overrides);
    try {
      await untilStatus(second, t, id, 'sent');
      const emails = await emailsOf(second, t, id);
      expect(emails.map((e) => e.to[0]).sort()).toEqual(['c@dest.test', 'd@dest.test', 'e@dest.test']);
      await sink.waitFor(3);
      for (const x of people) expect(sink.to(`${x}@dest.test`).length).toBe(x === 'a' || x === 'b' ? 0 : 1);
      // Starting it again does nothing: it is sent.
      second.svc.broadcasts.start(t, id);
      await second.svc.broadcasts.idle();
      expect((await emailsOf(second, t, id)).length).toBe(3);
    } finally {
      await second.stop();
    }
  } finally {
    await sink.close();
    await dns.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

describe('placeholders (§13.4)', () => {
  const r = {
    contact: {
      id: 'c',
      team_id: 't',
      created_at: '',
      updated_at: '',
      email: 'x@y.test',
      first_name: '',
      last_name: 'O"Neil',
      unsubscribed: false,
      properties: { plan: { value: 3, type: 'number' as const }, company: { value: '', type: 'string' as const } },
    },
    unsubscribeUrl: 'https://p.test/u/abc.def',
    properties: new Map([
      ['plan', { id: 'p1', team_id: 't', created_at: '', key: 'plan', type: 'number' as const, fallback_value: 0 }],
      ['company', { id: 'p2', team_id: 't', created_at: '', key: 'company', type: 'string' as const, fallback_value: 'your <company>' }],
      ['city', { id: 'p3', team_id: 't', created_at: '', key: 'city', type: 'string' as const, fallback_value: null }],
    ]),
  };

  test('keys, aliases, fallbacks, whitespace, escaping per context; anything else untouched', () => {
    expect(renderPlaceholders('{{{contact.first_name|Friend}}} {{{ LAST_NAME }}} {{{contact.plan}}} {{{contact.nope|-}}}', r, 'text')).toBe(
      'Friend O"Neil 3 -',
    );
    expect(renderPlaceholders('{{{LAST_NAME}}}', r, 'html')).toBe('O&quot;Neil');
    expect(renderPlaceholders('{{{ EMAIL }}}|{{{RESEND_UNSUBSCRIBE_URL}}}', r, 'text')).toBe('x@y.test|https://p.test/u/abc.def');
    expect(renderPlaceholders('{{{first_name}}} {{{}}} {{contact.email}} {{{ contact.email', r, 'text')).toBe(
      '{{{first_name}}} {{{}}} {{contact.email}} {{{ contact.email',
    );
    expect(renderPlaceholders('{{{contact.first_name}}}.', r, 'text')).toBe('.');
    const multiline = { ...r, contact: { ...r.contact, first_name: 'A\r\nBcc: x@evil.test' } };
    expect(renderPlaceholders('Hi {{{FIRST_NAME}}}', multiline, 'header')).toBe('Hi A Bcc: x@evil.test');
    // Names an object inherits are no placeholders either.
    expect(renderPlaceholders('{{{constructor}}} {{{toString|fb}}} {{{__proto__}}}', r, 'text')).toBe('{{{constructor}}} {{{toString|fb}}} {{{__proto__}}}');
  });

  test("a property without a value: the placeholder's fallback, else the property's (escaped like a value), else nothing", () => {
    expect(renderPlaceholders('[{{{contact.company|here}}}] [{{{contact.company}}}] [{{{contact.city}}}] [{{{contact.undefined_key}}}]', r, 'text')).toBe(
      '[here] [your <company>] [] []',
    );
    expect(renderPlaceholders('{{{contact.company}}}', r, 'html')).toBe('your &lt;company&gt;');
    // A value stored under another definition of the key (deleted, then defined again) is not the contact's.
    const stale = { ...r, contact: { ...r.contact, properties: { plan: { value: 9, type: 'number' as const, property_id: 'old' } } } };
    expect(renderPlaceholders('{{{contact.plan}}}', stale, 'text')).toBe('0');
  });

  test('the preheader goes right after <body>, or first', () => {
    expect(withPreheader('<body class="x"><p>a</p></body>', '<b>')).toMatch(
      /^<body class="x"><div data-preheader style="display:none;[^"]*">&lt;b&gt;<\/div><p>a<\/p>/,
    );
    expect(withPreheader('<p>a</p>', 'p')).toMatch(/^<div [^>]*>p<\/div><p>a<\/p>$/);
  });
});
