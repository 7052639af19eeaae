// Every webhook kind Posthorn emits beyond the email lifecycle's (docs/api.md §14.2), one test
// each: a webhook subscribed to the kind receives it — at a loopback receiver, signed — when its
// change happens, its payload of Resend's documented shape (test/helpers/payloads.ts, held to the
// SDK's types); a webhook subscribed to every other kind does not.
import { describe, test, expect, beforeAll, afterAll, afterEach } from 'bun:test';
import { startMailWorld, type MailWorld } from '../helpers/world';
import { startReceiver, type Hook, type Receiver } from '../helpers/receiver';
import { verifiedDomain } from '../helpers/emails';
import { payloadErrors, HELD_TO_THE_SDK, type PAYLOADS } from '../helpers/payloads';
import { until } from '../helpers/wait';
import { EMITTED_WEBHOOK_KINDS, type EmittedWebhookKind } from '../../src/event-catalogue';
import { releaseDue } from '../../src/sending/scheduled';
import type { Running } from '../helpers/posthorn';

type Kind = keyof typeof PAYLOADS & EmittedWebhookKind;

let world: MailWorld;
let p: Running;
const receivers: Receiver[] = [];
const registered: string[] = [];

beforeAll(async () => {
  world = await startMailWorld({ 'webhooks.retry_schedule': ['200ms'], 'security.allow_private_networks': true });
  ({ p } = world);
});
afterAll(async () => {
  await world.stop();
  for (const r of receivers) await r.close();
});
// Each test's webhooks go at its end, so later events reach no earlier receiver.
afterEach(async () => {
  for (const id of registered.splice(0)) await p.resend.webhooks.remove(id);
});

interface Pair {
  /** Subscribed to the kind. */
  on: Receiver;
  /** Subscribed to every other kind Posthorn emits. */
  off: Receiver;
  offId: string;
  secret: string;
}

/** Two webhooks: one subscribed to `kind`, one to all the others. */
async function pair(kind: Kind): Promise<Pair> {
  const on = await startReceiver();
  const off = await startReceiver();
  receivers.push(on, off);
  const a = await p.resend.webhooks.create({ endpoint: on.url, events: [kind] });
  const b = await p.resend.webhooks.create({ endpoint: off.url, events: EMITTED_WEBHOOK_KINDS.filter((k) => k !== kind) as never });
  expect(a.error).toBeNull();
  expect(b.error).toBeNull();
  registered.push(a.data!.id, b.data!.id);
  return { on, off, offId: b.data!.id, secret: a.data!.signing_secret };
}

/** The deliveries of `kind` at `r` matching `match`, once `count` of them arrived. */
async function received(r: Receiver, kind: Kind, count = 1, match: (h: Hook) => boolean = () => true): Promise<Hook[]> {
  const of = () => r.delivered().filter((h) => h.payload.type === kind && match(h));
  await r.waitFor(() => of().length >= count, `${count} × ${kind}`);
  return of();
}

/** A delivery of Resend's shape for its kind, signed with `secret`; its `data`. */
function checked(h: Hook, kind: Kind, secret: string): Record<string, unknown> {
  expect(payloadErrors(kind, h.payload)).toEqual([]);
  const verified = p.resend.webhooks.verify({ payload: h.body, headers: { id: h.id, timestamp: h.timestamp, signature: h.signature }, webhookSecret: secret });
  expect(verified).toEqual(JSON.parse(h.body));
  expect(Date.parse(h.payload.created_at)).not.toBeNaN();
  return h.payload.data;
}

/** Nothing of `kind` reached the webhook not subscribed to it: checked once its outbox is empty. */
async function notAtTheOther(x: Pair, kind: Kind): Promise<void> {
  const team = p.creds.team_id;
  await until(async () => (await p.svc.store.webhookEvents.findAll('outstanding', x.offId, team)).length === 0, 'the other webhook drained');
  await p.svc.backOffice.idle('webhooks');
  expect(x.off.requests.filter((h) => h.payload.type === kind)).toEqual([]);
}

let seq = 0;
const unique = (prefix: string) => `${prefix}-${Date.now()}-${++seq}`;

test('the schemas are the SDK’s types of these events', () => {
  expect(HELD_TO_THE_SDK).toBe(true);
});

describe('email.*', () => {
  test('email.scheduled: a send with a future scheduled_at', async () => {
    const x = await pair('email.scheduled');
    const at = new Date(Date.now() + 3_600_000).toISOString();
    const { data, error } = await p.resend.emails.send({
      from: 'Acme <hello@example.test>',
      to: ['ann@dest.test'],
      subject: 'Later',
      text: 'hi',
      scheduledAt: at,
      tags: [{ name: 'kind', value: 'scheduled' }],
    });
    expect(error).toBeNull();
    const [h] = await received(x.on, 'email.scheduled');
    expect(checked(h!, 'email.scheduled', x.secret)).toEqual({
      email_id: data!.id,
      created_at: expect.any(String),
      message_id: expect.stringMatching(/^<.+@example\.test>$/),
      from: 'Acme <hello@example.test>',
      to: ['ann@dest.test'],
      subject: 'Later',
      tags: { kind: 'scheduled' },
    });
    await notAtTheOther(x, 'email.scheduled');
    expect((await p.resend.emails.cancel(data!.id)).error).toBeNull();
  });

  test('email.failed: a topic no recipient is subscribed to; a scheduled send whose domain is gone', async () => {
    const x = await pair('email.failed');
    const topic = (await p.api('POST', '/topics', { body: { name: unique('t'), default_subscription: 'opt_out' } })).body.id;
    const sent = await p.api('POST', '/emails', {
      body: { from: 'hello@example.test', to: ['nobody@dest.test'], subject: 'Topical', text: 'x', topic_id: topic },
    });
    expect(sent.status).toBe(200);
    const [h] = await received(x.on, 'email.failed');
    expect(checked(h!, 'email.failed', x.secret)).toMatchObject({
      email_id: sent.body.id,
      to: ['nobody@dest.test'],
      subject: 'Topical',
      failed: { reason: 'not_subscribed_to_topic' },
    });

    // Scheduled from a domain deleted before its time: it fails when it is due.
    const gone = await verifiedDomain(p, `${unique('gone')}.test`);
    const at = Date.now() + 3_600_000;
    const later = await p.api('POST', '/emails', {
      body: { from: `hi@${gone.name}`, to: ['ann@dest.test'], subject: 'Too late', text: 'x', scheduled_at: new Date(at).toISOString() },
    });
    expect(later.status).toBe(200);
    expect((await p.api('DELETE', `/domains/${gone.id}`)).status).toBe(200);
    // The scheduler's tick at that time (docs/api.md §7.1).
    await releaseDue(p.svc, at + 1000);
    const [second] = await received(x.on, 'email.failed', 1, (d) => d.payload.data.email_id === later.body.id);
    expect(checked(second!, 'email.failed', x.secret)).toMatchObject({ to: ['ann@dest.test'], failed: { reason: 'domain_deleted' } });
    expect((await p.resend.emails.get(later.body.id)).data!.last_event).toBe('failed');
    await notAtTheOther(x, 'email.failed');
  });

  test('email.suppressed: every recipient is on the suppression list', async () => {
    const x = await pair('email.suppressed');
    const address = `${unique('blocked')}@dest.test`;
    expect((await p.resend.suppressions.add({ email: address })).error).toBeNull();
    const { data } = await p.resend.emails.send({ from: 'hello@example.test', to: [address], subject: 'Blocked', text: 'x' });
    const [h] = await received(x.on, 'email.suppressed');
    expect(checked(h!, 'email.suppressed', x.secret)).toMatchObject({
      email_id: data!.id,
      to: [address],
      suppressed: { type: 'OnAccountSuppressionList', message: expect.stringContaining('suppression list') },
    });
    expect((await p.resend.emails.get(data!.id)).data!.last_event).toBe('suppressed');
    await notAtTheOther(x, 'email.suppressed');
  });
});

describe('contact.*', () => {
  test('contact.created: POST /contacts of a new address (in a segment); create-on-existing is no creation', async () => {
    const x = await pair('contact.created');
    const seg = (await p.api('POST', '/segments', { body: { name: unique('seg') } })).body.id as string;
    const email = `${unique('new')}@people.test`;
    const created = await p.api('POST', '/contacts', { body: { email, first_name: 'Nia', segments: [{ id: seg }] } });
    expect(created.status).toBe(201);
    const [h] = await received(x.on, 'contact.created');
    const contact = (await p.api('GET', `/contacts/${created.body.id}`)).body;
    expect(checked(h!, 'contact.created', x.secret)).toEqual({
      id: created.body.id,
      audience_id: seg,
      segment_ids: [seg],
      created_at: contact.created_at,
      updated_at: contact.created_at,
      email,
      first_name: 'Nia',
      last_name: null,
      unsubscribed: false,
    });
    // Again for the same address: an update (contact.updated), not a second contact.created.
    expect((await p.api('POST', '/contacts', { body: { email, last_name: 'Again' } })).body.id).toBe(created.body.id);
    await notAtTheOther(x, 'contact.created');
    await p.svc.backOffice.idle('webhooks');
    expect(x.on.requests).toHaveLength(1);
    expect(x.off.requests.map((r) => r.payload.type)).toContain('contact.updated');
  });

  test('contact.deleted: DELETE /contacts/{email} names the contact as it was', async () => {
    const seg = (await p.api('POST', '/segments', { body: { name: unique('seg') } })).body.id as string;
    const email = `${unique('gone')}@people.test`;
    const id = (await p.api('POST', '/contacts', { body: { email, last_name: 'Leaving', segments: [seg] } })).body.id;
    const x = await pair('contact.deleted');
    expect((await p.resend.contacts.remove({ email })).error).toBeNull();
    const [h] = await received(x.on, 'contact.deleted');
    expect(checked(h!, 'contact.deleted', x.secret)).toMatchObject({ id, email, audience_id: seg, segment_ids: [seg], last_name: 'Leaving' });
    expect((await p.api('GET', `/contacts/${id}`)).status).toBe(404);
    // An unknown contact is "deleted" too (200), with no event.
    expect((await p.api('DELETE', `/contacts/${email}`)).status).toBe(200);
    await notAtTheOther(x, 'contact.deleted');
    await p.svc.backOffice.idle('webhooks');
    expect(x.on.requests).toHaveLength(1);
  });
});

describe('domain.*', () => {
  test('domain.created: POST /domains, with the records to publish', async () => {
    const x = await pair('domain.created');
    const name = `${unique('fresh')}.test`;
    const created = await p.api('POST', '/domains', { body: { name } });
    expect(created.status).toBe(201);
    const [h] = await received(x.on, 'domain.created');
    const data = checked(h!, 'domain.created', x.secret);
    expect(data).toEqual({
      id: created.body.id,
      name,
      status: 'not_started',
      created_at: created.body.created_at,
      region: 'us-east-1',
      records: created.body.records,
    });
    expect((data.records as { record: string }[]).map((r) => r.record)).toEqual(['SPF', 'SPF', 'DKIM']);
    await notAtTheOther(x, 'domain.created');
  });

  test('domain.updated: a PATCH that changes something, a verification that moves a status; not a PATCH that changes nothing', async () => {
    const name = `${unique('upd')}.test`;
    const id = (await p.api('POST', '/domains', { body: { name } })).body.id as string;
    const x = await pair('domain.updated');
    expect((await p.api('PATCH', `/domains/${id}`, { body: { open_tracking: false } })).status).toBe(200);
    expect((await p.api('PATCH', `/domains/${id}`, { body: { capabilities: { receiving: 'enabled' } } })).status).toBe(200);
    const [h] = await received(x.on, 'domain.updated');
    const data = checked(h!, 'domain.updated', x.secret);
    expect(data).toMatchObject({ id, name, status: 'not_started' });
    expect((data.records as { record: string }[]).map((r) => r.record)).toEqual(['SPF', 'SPF', 'DKIM', 'Receiving']);
    // The verification request moves every record to pending: an update too.
    expect((await p.api('POST', `/domains/${id}/verify`)).status).toBe(200);
    const [, verifying] = await received(x.on, 'domain.updated', 2);
    expect(checked(verifying!, 'domain.updated', x.secret)).toMatchObject({ id, status: 'pending' });
    await p.svc.domains.idle();
    await notAtTheOther(x, 'domain.updated');
    // The PATCH that changed nothing made none: every update seen is one of a change.
    const statuses = x.on.delivered().map((d) => d.payload.data.status);
    expect(statuses.slice(0, 2)).toEqual(['not_started', 'pending']);
  });

  test('domain.deleted: DELETE /domains/{id}, the domain as it was', async () => {
    const d = await verifiedDomain(p, `${unique('del')}.test`);
    const x = await pair('domain.deleted');
    expect((await p.api('DELETE', `/domains/${d.id}`)).status).toBe(200);
    const [h] = await received(x.on, 'domain.deleted');
    expect(checked(h!, 'domain.deleted', x.secret)).toMatchObject({ id: d.id, name: d.name, status: 'verified', created_at: d.created_at });
    await notAtTheOther(x, 'domain.deleted');
  });
});

describe('suppression.*', () => {
  test('suppression.added: by hand, and on a permanent bounce; an address already listed adds nothing', async () => {
    const x = await pair('suppression.added');
    const manual = `${unique('manual')}@dest.test`;
    const added = await p.resend.suppressions.add({ email: manual });
    const [h] = await received(x.on, 'suppression.added');
    expect(checked(h!, 'suppression.added', x.secret)).toEqual({
      id: added.data!.id,
      email: manual,
      origin: 'manual',
      source_id: null,
      created_at: expect.any(String),
    });
    expect((await p.resend.suppressions.add({ email: manual })).data!.id).toBe(added.data!.id);

    const gone = `${unique('gone')}@dest.test`;
    world.sink.respond(gone, { code: 550, message: '5.1.1 no such user' });
    const { data } = await p.resend.emails.send({ from: 'hello@example.test', to: [gone], subject: 'Bounce me', text: 'x' });
    const [bounced] = await received(x.on, 'suppression.added', 1, (d) => d.payload.data.email === gone);
    expect(checked(bounced!, 'suppression.added', x.secret)).toMatchObject({ email: gone, origin: 'bounce', source_id: data!.id });
    await notAtTheOther(x, 'suppression.added');
    expect(x.on.requests).toHaveLength(2);
  });

  test('suppression.removed: DELETE /suppressions/{email}', async () => {
    const address = `${unique('back')}@dest.test`;
    const id = (await p.resend.suppressions.add({ email: address })).data!.id;
    const x = await pair('suppression.removed');
    expect((await p.api('DELETE', `/suppressions/${encodeURIComponent(address)}`)).status).toBe(200);
    const [h] = await received(x.on, 'suppression.removed');
    expect(checked(h!, 'suppression.removed', x.secret)).toMatchObject({ id, email: address, origin: 'manual', source_id: null });
    await notAtTheOther(x, 'suppression.removed');
  });
});

describe('topic.*', () => {
  test('topic.created: POST /topics', async () => {
    const x = await pair('topic.created');
    const name = unique('News').slice(0, 50);
    const id = (await p.api('POST', '/topics', { body: { name, description: 'What is new', default_subscription: 'opt_in' } })).body.id;
    const [h] = await received(x.on, 'topic.created');
    const data = checked(h!, 'topic.created', x.secret);
    expect(data).toEqual({
      id,
      name,
      description: 'What is new',
      default_subscription: 'opt_in',
      deleted: false,
      created_at: expect.any(String),
      updated_at: data.created_at,
    });
    await notAtTheOther(x, 'topic.created');
  });

  test('topic.updated: a PATCH that changes it (one that changes nothing emits nothing)', async () => {
    const id = (await p.api('POST', '/topics', { body: { name: unique('Old').slice(0, 50), default_subscription: 'opt_out' } })).body.id;
    const x = await pair('topic.updated');
    const name = unique('New').slice(0, 50);
    expect((await p.api('PATCH', `/topics/${id}`, { body: { name } })).status).toBe(200);
    expect((await p.api('PATCH', `/topics/${id}`, { body: { name } })).status).toBe(200);
    const [h] = await received(x.on, 'topic.updated');
    const data = checked(h!, 'topic.updated', x.secret);
    expect(data).toMatchObject({ id, name, description: null, default_subscription: 'opt_out', deleted: false });
    expect(Date.parse(data.updated_at as string)).toBeGreaterThanOrEqual(Date.parse(data.created_at as string));
    await notAtTheOther(x, 'topic.updated');
    await p.svc.backOffice.idle('webhooks');
    expect(x.on.requests).toHaveLength(1);
  });

  test('topic.deleted: DELETE /topics/{id}, deleted: true', async () => {
    const name = unique('Bye').slice(0, 50);
    const id = (await p.api('POST', '/topics', { body: { name, default_subscription: 'opt_in' } })).body.id;
    const x = await pair('topic.deleted');
    expect((await p.api('DELETE', `/topics/${id}`)).status).toBe(200);
    const [h] = await received(x.on, 'topic.deleted');
    expect(checked(h!, 'topic.deleted', x.secret)).toMatchObject({ id, name, deleted: true });
    await notAtTheOther(x, 'topic.deleted');
  });
});
