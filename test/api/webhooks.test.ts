// Webhooks end to end (docs/api.md §14): endpoints managed with the official SDK, events of real
// sends (a loopback MTA answering 250/450/550) and of contact updates arriving at a loopback
// receiver, each verified with the SDK's `webhooks.verify` and with the `svix` package; retries on
// a short test schedule with their attempt log, replay, secret rotation, disabled endpoints,
// isolation of a stuck endpoint, and the SSRF guard on endpoints.
import { describe, test, expect, beforeAll, afterAll, afterEach } from 'bun:test';
import { Webhook as SvixWebhook } from 'svix';
import { startPosthorn, type Running } from '../helpers/posthorn';
import type { Sink } from '../helpers/sink';
import { startMailWorld, type MailWorld } from '../helpers/world';
import { startReceiver, type Hook, type Receiver } from '../helpers/receiver';
import { until } from '../helpers/wait';
import type { WebhookRec } from '../../src/store';

let world: MailWorld;
let p: Running;
let sink: Sink;
const receivers: Receiver[] = [];

beforeAll(async () => {
  world = await startMailWorld({
    'delivery.retry_schedule': ['300ms'],
    'webhooks.retry_schedule': ['200ms', '400ms'],
    'security.allow_private_networks': true,
  });
  ({ p, sink } = world);
});
afterAll(async () => {
  await world.stop();
  for (const r of receivers) await r.close();
});

// Each test's webhooks go at its end, so later events do not reach earlier receivers.
const registered: string[] = [];
afterEach(async () => {
  for (const id of registered.splice(0)) await p.resend.webhooks.remove(id);
});

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  receivers.push(r);
  return r;
}

/**
 * Everything the dispatcher will ever send to this endpoint has been sent (bounded wait): none of
 * its events awaits an attempt — an attempt in flight keeps its event outstanding, in the outbox at
 * its next attempt time — and the dispatcher is idle. Checks that nothing (more) arrived go after this.
 */
async function drained(webhookId: string, team = p.creds.team_id): Promise<void> {
  const farFuture = Date.now() + 10 * 365 * 86_400_000;
  await until(
    async () =>
      (await p.svc.store.outbox.due(team, webhookId, farFuture, 1)).length === 0 &&
      (await p.svc.store.webhookEvents.findAll('outstanding', webhookId, team)).length === 0,
    `nothing outstanding for webhook ${webhookId}`,
  );
  await p.svc.backOffice.idle('webhooks');
}

/** A webhook registered with the SDK; returns its id and secret. */
async function register(endpoint: string, events: string[]): Promise<{ id: string; secret: string }> {
  const { data, error } = await p.resend.webhooks.create({ endpoint, events: events as never });
  expect(error).toBeNull();
  registered.push(data!.id);
  return { id: data!.id, secret: data!.signing_secret };
}

/** Both verifiers accept the delivery for `secret` (and return the same payload). */
function verifyBoth(h: Hook, secret: string) {
  const viaSdk = p.resend.webhooks.verify({ payload: h.body, headers: { id: h.id, timestamp: h.timestamp, signature: h.signature }, webhookSecret: secret });
  const viaSvix = new SvixWebhook(secret).verify(h.body, {
    'svix-id': h.headers['svix-id'],
    'svix-timestamp': h.headers['svix-timestamp'],
    'svix-signature': h.headers['svix-signature'],
  });
  // The Standard Webhooks names carry the same values.
  const viaStandard = new SvixWebhook(secret).verify(h.body, {
    'webhook-id': h.headers['webhook-id'],
    'webhook-timestamp': h.headers['webhook-timestamp'],
    'webhook-signature': h.headers['webhook-signature'],
  });
  expect(viaSdk).toEqual(JSON.parse(h.body));
  expect(viaSvix).toEqual(JSON.parse(h.body));
  expect(viaStandard).toEqual(JSON.parse(h.body));
}

let contactSeq = 0;
/** A contact created through the SDK, then PATCHed (→ contact.updated); returns its id. */
async function touchContact(firstName = 'Ann'): Promise<string> {
  const email = `c${++contactSeq}-${Date.now()}@people.test`;
  const created = await p.resend.contacts.create({ email });
  expect(created.error).toBeNull();
  const id = created.data!.id;
  expect((await p.resend.contacts.update({ id, firstName })).error).toBeNull();
  return id;
}

const attemptsOf = async (webhookId: string, eventId: string) => {
  const r = await p.resend.webhooks.events.attempts.list({ webhookId, eventId });
  expect(r.error).toBeNull();
  return r.data!.data;
};

describe('management API', () => {
  test('SDK create, get, list, update, remove; secrets are whsec_ + 24 bytes', async () => {
    const created = await p.resend.webhooks.create({ endpoint: 'http://127.0.0.1:9/a', events: ['email.sent', 'contact.created'] });
    expect(created.error).toBeNull();
    expect(created.data!.object).toBe('webhook');
    expect(created.data!.signing_secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(created.data!.signing_secret.slice(6), 'base64').length).toBe(24);
    const id = created.data!.id;

    const got = await p.resend.webhooks.get(id);
    expect(got.data).toMatchObject({ object: 'webhook', id, status: 'enabled', endpoint: 'http://127.0.0.1:9/a', events: ['email.sent', 'contact.created'] });
    expect(got.data!.signing_secret).toBe(created.data!.signing_secret);
    expect(got.data!.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const upd = await p.resend.webhooks.update(id, { endpoint: 'http://127.0.0.1:9/b', events: ['email.delivered'], status: 'disabled' });
    expect(upd.data).toEqual({ object: 'webhook', id });
    expect((await p.resend.webhooks.get(id)).data).toMatchObject({ endpoint: 'http://127.0.0.1:9/b', events: ['email.delivered'], status: 'disabled' });

    const list = await p.resend.webhooks.list();
    expect(list.data!.object).toBe('list');
    const item = list.data!.data.find((w) => w.id === id)!;
    expect(Object.keys(item).sort()).toEqual(['created_at', 'endpoint', 'events', 'id', 'status']);

    // The request log keeps no secret.
    const logs = await p.api('GET', '/logs?limit=20');
    const logged = JSON.stringify(await Promise.all(logs.body.data.map(async (l: { id: string }) => (await p.api('GET', `/logs/${l.id}`)).body)));
    expect(logged).toContain('whsec_…');
    expect(logged).not.toContain(created.data!.signing_secret);

    const removed = await p.resend.webhooks.remove(id);
    expect(removed.data).toEqual({ object: 'webhook', id, deleted: true });
    expect((await p.resend.webhooks.get(id)).error?.name).toBe('not_found');
  });

  test('the list defaults to 20 and pages with limit/after/before', async () => {
    const team = await p.newTeam();
    const sdk = p.client(team.api_key);
    const ids: string[] = [];
    for (let i = 0; i < 23; i++) ids.push((await sdk.webhooks.create({ endpoint: `http://127.0.0.1:9/${i}`, events: ['email.sent'] })).data!.id);
    const first = (await sdk.webhooks.list()).data!;
    expect(first.data.length).toBe(20);
    expect(first.has_more).toBe(true);
    expect(first.data[0].id).toBe(ids[22]); // newest first
    const next = (await sdk.webhooks.list({ limit: 20, after: first.data[19].id })).data!;
    expect(next.data.map((w) => w.id)).toEqual(ids.slice(0, 3).reverse());
    expect(next.has_more).toBe(false);
    const back = (await sdk.webhooks.list({ limit: 2, before: ids[0] })).data!;
    expect(back.data.map((w) => w.id)).toEqual([ids[2], ids[1]]);
    // Another team sees none of them.
    expect((await p.resend.webhooks.get(ids[0])).error?.name).toBe('not_found');
  });

  test('bad input → 422 and nothing changes; unknown ids → 404', async () => {
    const post = (body: unknown) => p.api('POST', '/webhooks', { body });
    expect((await post({ events: ['email.sent'] })).body).toMatchObject({
      statusCode: 422,
      name: 'missing_required_field',
      message: 'Missing `endpoint` field.',
    });
    expect((await post({ endpoint: 'http://127.0.0.1:9/' })).body.name).toBe('missing_required_field');
    expect((await post({ endpoint: 'http://127.0.0.1:9/', events: [] })).body).toMatchObject({ statusCode: 422, name: 'validation_error' });
    const bad = await post({ endpoint: 'http://127.0.0.1:9/', events: ['email.sent', 'email.exploded'] });
    expect(bad.body).toMatchObject({ statusCode: 422, name: 'validation_error' });
    expect(bad.body.message).toContain('email.exploded');
    expect((await post({ endpoint: 'ftp://127.0.0.1/x', events: ['email.sent'] })).body).toMatchObject({ statusCode: 422, name: 'validation_error' });
    expect((await post({ endpoint: 'not a url', events: ['email.sent'] })).body).toMatchObject({ statusCode: 422, name: 'validation_error' });
    expect((await post({ endpoint: 'http://127.0.0.1:9/', events: 'email.sent' })).body).toMatchObject({ statusCode: 422, name: 'validation_error' });
    // Every kind Resend defines is accepted (the inbox.* kinds too, docs/api.md §25.8).
    const quiet = await post({ endpoint: 'http://127.0.0.1:9/', events: ['domain.created', 'inbox.draft.sent', 'email.suppressed'] });
    expect(quiet.status).toBe(201);

    const id = quiet.body.id;
    expect((await p.api('PATCH', `/webhooks/${id}`, { body: { events: [] } })).body.name).toBe('validation_error');
    expect((await p.api('PATCH', `/webhooks/${id}`, { body: { status: 'paused' } })).body.name).toBe('validation_error');
    expect((await p.api('PATCH', `/webhooks/${id}`, { body: { endpoint: 'gopher://x' } })).body.name).toBe('validation_error');
    expect((await p.resend.webhooks.get(id)).data).toMatchObject({ status: 'enabled', events: ['domain.created', 'inbox.draft.sent', 'email.suppressed'] });

    expect((await p.api('GET', '/webhooks/nope')).body).toMatchObject({ statusCode: 422, name: 'invalid_parameter' });
    const unknown = '0195608a-51e4-70ed-a079-d3bde8e25d94';
    for (const [method, path] of [
      ['GET', `/webhooks/${unknown}`],
      ['PATCH', `/webhooks/${unknown}`],
      ['DELETE', `/webhooks/${unknown}`],
      ['POST', `/webhooks/${unknown}/signing-secret/rotate`],
      ['GET', `/webhooks/${unknown}/events`],
    ])
      expect((await p.api(method, path, { body: method === 'PATCH' ? {} : undefined })).body).toMatchObject({ statusCode: 404, name: 'not_found' });

    // Events list: limit/after only, cursors are msg_ ids.
    expect((await p.api('GET', `/webhooks/${id}/events?before=msg_000000000000000000000000000`)).body).toMatchObject({
      statusCode: 422,
      name: 'validation_error',
    });
    expect((await p.api('GET', `/webhooks/${id}/events?after=${unknown}`)).body).toMatchObject({ statusCode: 422, name: 'validation_error' });
    expect((await p.api('GET', `/webhooks/${id}/events?limit=0`)).body).toMatchObject({ statusCode: 422, name: 'validation_error' });
    expect((await p.api('GET', `/webhooks/${id}/events?after=msg_000000000000000000000000000`)).body).toEqual({ object: 'list', has_more: false, data: [] });
    expect((await p.api('GET', `/webhooks/${id}/events/evt_1`)).body).toMatchObject({ statusCode: 422, name: 'invalid_parameter' });
    expect((await p.api('GET', `/webhooks/${id}/events/msg_000000000000000000000000000`)).body).toMatchObject({ statusCode: 404, name: 'not_found' });
    expect((await p.api('POST', `/webhooks/${id}/events/msg_000000000000000000000000000/replay`)).body).toMatchObject({ statusCode: 404 });
  });
});

describe('email events', () => {
  test('sent, delivered, delivery_delayed and bounced arrive signed; both verifiers accept them', async () => {
    const r = await receiver();
    const { id: webhookId, secret } = await register(r.url, ['email.sent', 'email.delivered', 'email.delivery_delayed', 'email.bounced']);
    sink.respond('later@dest.test', { code: 450, message: '4.2.0 mailbox busy, try later' }, { times: 1 });
    sink.respond('gone@dest.test', { code: 550, message: '5.1.1 no such user' });
    const { data, error } = await p.resend.emails.send({
      from: 'Acme <hello@example.test>',
      to: ['ann@dest.test', 'later@dest.test', 'gone@dest.test'],
      subject: 'Hello World',
      text: 'hi',
      tags: [{ name: 'category', value: 'confirm_email' }],
      headers: { 'X-Entity-Ref-ID': '123' },
    });
    expect(error).toBeNull();
    const emailId = data!.id;
    const ofEmail = () => r.delivered().filter((h) => h.payload.data.email_id === emailId);
    const kinds = () =>
      ofEmail()
        .map((h) => `${h.payload.type}:${(h.payload.data.to as string[]).join(',')}`)
        .sort();
    await until(() => kinds().length === 5, 'five email events');
    expect(kinds()).toEqual([
      'email.bounced:gone@dest.test',
      'email.delivered:ann@dest.test',
      'email.delivered:later@dest.test',
      'email.delivery_delayed:later@dest.test',
      'email.sent:ann@dest.test,later@dest.test,gone@dest.test',
    ]);
    for (const h of ofEmail()) {
      verifyBoth(h, secret);
      expect(h.id).toMatch(/^msg_[0-9A-Za-z]{27}$/);
      expect(h.headers['webhook-id']).toBe(h.id);
      expect(h.headers['content-type']).toBe('application/json');
      expect(Math.abs(Number(h.timestamp) - Date.now() / 1000)).toBeLessThan(300);
      expect(h.signature).toMatch(/^v1,[A-Za-z0-9+/=]{44}$/);
      expect(Object.keys(h.payload)).toEqual(['type', 'created_at', 'data']);
      expect(h.payload.data).toMatchObject({
        email_id: emailId,
        from: 'Acme <hello@example.test>',
        subject: 'Hello World',
        tags: { category: 'confirm_email' },
        headers: [{ name: 'X-Entity-Ref-ID', value: '123' }],
      });
    }
    const bounced = ofEmail().find((h) => h.payload.type === 'email.bounced')!;
    expect(bounced.payload.data.bounce).toMatchObject({ type: 'Permanent', subType: 'NoEmail' });

    // The events list and a single event show the same, newest first, all `success` — once the
    // dispatcher has recorded the last answer, which the receiver above saw a moment before.
    const events = async () => (await p.resend.webhooks.events.list({ webhookId })).data!;
    await until(async () => (await events()).data.every((e) => e.status === 'success'), 'every attempt recorded as success');
    const list = await events();
    expect(list.data.length).toBe(5);
    expect(list.data.every((e) => e.status === 'success')).toBe(true);
    expect(list.data.map((e) => e.id)).toEqual(
      list.data
        .map((e) => e.id)
        .sort()
        .reverse(),
    );
    const one = (await p.resend.webhooks.events.get({ webhookId, eventId: bounced.id })).data!;
    expect(one).toMatchObject({ object: 'webhook_event', id: bounced.id, type: 'email.bounced', status: 'success', next_attempt_at: null });
    expect(JSON.stringify(one.payload)).toBe(bounced.body);
    const page = (await p.resend.webhooks.events.list({ webhookId, limit: 2, after: list.data[1].id })).data!;
    expect(page.data.map((e) => e.id)).toEqual(list.data.slice(2, 4).map((e) => e.id));
    expect(page.has_more).toBe(true);
    // Another team cannot see the events.
    const other = p.client((await p.newTeam()).api_key);
    expect((await other.webhooks.events.get({ webhookId, eventId: bounced.id })).error?.name).toBe('not_found');
  });
});

describe('contact.updated', () => {
  test('a PATCH emits the contact payload of §14.3', async () => {
    const r = await receiver();
    const { id: webhookId, secret } = await register(r.url, ['contact.updated']);
    const seg = (await p.api('POST', '/segments', { body: { name: `vip-${Date.now()}` } })).body.id as string;
    const email = `dora-${Date.now()}@people.test`;
    const id = (await p.resend.contacts.create({ email, firstName: 'Dora', segments: [{ id: seg }] } as never)).data!.id;
    // A create is not an update (the fan-out commits with the change, so this is final).
    expect((await p.resend.webhooks.events.list({ webhookId })).data!.data).toEqual([]);
    expect((await p.resend.contacts.update({ id, lastName: 'Explorer', unsubscribed: true })).error).toBeNull();
    await r.waitFor((reqs) => reqs.length === 1, 'contact.updated');
    const [h] = r.delivered();
    verifyBoth(h, secret);
    expect(h.payload.type).toBe('contact.updated');
    const contact = (await p.api('GET', `/contacts/${id}`)).body;
    expect(h.payload.data).toEqual({
      id,
      audience_id: seg,
      segment_ids: [seg],
      created_at: contact.created_at,
      updated_at: expect.stringMatching(/Z$/),
      email,
      first_name: 'Dora',
      last_name: 'Explorer',
      unsubscribed: true,
    });
    // A PATCH that changes nothing emits nothing; the next real change does.
    await p.resend.contacts.update({ id, lastName: 'Explorer' });
    await p.resend.contacts.update({ email, firstName: 'Dorothy' });
    await r.waitFor((reqs) => reqs.length === 2, 'second contact.updated');
    expect(r.requests[1].payload.data.first_name).toBe('Dorothy');
    expect((await p.resend.webhooks.events.list({ webhookId })).data!.data).toHaveLength(2);
    // Create-on-existing is an update too.
    expect((await p.resend.contacts.create({ email, lastName: 'Again' })).data!.id).toBe(id);
    await r.waitFor((reqs) => reqs.length === 3, 'contact.updated of a create-on-existing');
    expect(r.requests[2].payload.data).toMatchObject({ id, first_name: 'Dorothy', last_name: 'Again' });
    await drained(webhookId);
    expect(r.requests).toHaveLength(3);
    expect((await p.resend.webhooks.events.list({ webhookId })).data!.data).toHaveLength(3);
  });
});

describe('retries, attempt log and replay', () => {
  test('a receiver failing twice gets three attempts with one svix-id; the log shows each', async () => {
    const r = await receiver();
    r.answer((_h, n) => (n <= 2 ? { status: 500, body: `boom ${n}` } : { status: 200, body: 'thanks' }));
    const { id: webhookId, secret } = await register(r.url, ['contact.updated']);
    await touchContact();
    await r.waitFor((reqs) => reqs.some((h) => h.status === 200), 'the third attempt');
    expect(r.requests.length).toBe(3);
    expect(new Set(r.requests.map((h) => h.id)).size).toBe(1);
    expect(new Set(r.requests.map((h) => h.body)).size).toBe(1);
    for (const h of r.requests) verifyBoth(h, secret);
    const eventId = r.requests[0].id;
    const ev = await until(async () => {
      const e = (await p.resend.webhooks.events.get({ webhookId, eventId })).data!;
      return e.status === 'success' && e;
    }, 'status success');
    expect(ev.next_attempt_at).toBeNull();
    const attempts = await attemptsOf(webhookId, eventId);
    expect(attempts.map((a) => [a.http_status_code, a.response])).toEqual([
      [200, 'thanks'],
      [500, 'boom 2'],
      [500, 'boom 1'],
    ]);
    for (const a of attempts) expect(Object.keys(a).sort()).toEqual(['http_status_code', 'id', 'response', 'sent_at']);
  });

  test('all attempts fail → failed; replay sends once more with the same id, also after success', async () => {
    const r = await receiver();
    r.answer(() => ({ status: 503, body: 'x'.repeat(5000) }));
    const { id: webhookId } = await register(r.url, ['contact.updated']);
    await touchContact();
    await r.waitFor((reqs) => reqs.length === 3, 'three attempts');
    const eventId = r.requests[0].id;
    await until(async () => (await p.resend.webhooks.events.get({ webhookId, eventId })).data!.status === 'failed', 'status failed');
    const failed = (await p.resend.webhooks.events.get({ webhookId, eventId })).data!;
    expect(failed.next_attempt_at).toBeNull();
    const attempts = await attemptsOf(webhookId, eventId);
    expect(attempts.length).toBe(3);
    expect(attempts[0].response).toBe('x'.repeat(2048)); // the first 2 KB of the body
    // No automatic attempt beyond the schedule: nothing of this endpoint is left to send.
    await drained(webhookId);
    expect(r.requests.length).toBe(3);

    r.answer(() => ({ status: 204 }));
    const replay = await p.resend.webhooks.events.replay({ webhookId, eventId });
    expect(replay.data).toEqual({ object: 'webhook_event', id: eventId });
    await r.waitFor((reqs) => reqs.length === 4, 'the replay');
    expect(r.requests[3].id).toBe(eventId);
    await until(async () => (await p.resend.webhooks.events.get({ webhookId, eventId })).data!.status === 'success', 'success after replay');
    // A successful event can be replayed too: one attempt, no retries even when it fails.
    r.answer(() => ({ status: 500 }));
    expect((await p.resend.webhooks.events.replay({ webhookId, eventId })).error).toBeNull();
    await r.waitFor((reqs) => reqs.length === 5, 'the second replay');
    await until(async () => (await p.resend.webhooks.events.get({ webhookId, eventId })).data!.status === 'failed', 'failed after the replay');
    await drained(webhookId);
    expect(r.requests.length).toBe(5);
    expect((await attemptsOf(webhookId, eventId)).length).toBe(5);
  });

  test('no answer, refused connections and redirects are failures with a short reason', async () => {
    const r = await receiver();
    r.answer(() => ({ status: 302, headers: { location: 'http://127.0.0.1:9/elsewhere' } }));
    const redirected = await register(r.url, ['contact.updated']);
    const closed = await startReceiver();
    const deadUrl = closed.url;
    await closed.close();
    const refused = await register(deadUrl, ['contact.updated']);
    await touchContact();
    const lastStatus = async (webhookId: string) => {
      const [ev] = (await p.resend.webhooks.events.list({ webhookId })).data!.data;
      return ev?.status === 'failed' ? ev : undefined;
    };
    const ev1 = await until(() => lastStatus(redirected.id), 'redirect failures');
    expect((await attemptsOf(redirected.id, ev1.id)).map((a) => a.http_status_code)).toEqual([302, 302, 302]);
    expect(r.requests.length).toBe(3); // three attempts, the redirect never followed
    const ev2 = await until(() => lastStatus(refused.id), 'refused failures');
    const refusedAttempts = await attemptsOf(refused.id, ev2.id);
    expect(refusedAttempts.map((a) => [a.http_status_code as number | null, a.response])).toEqual([
      [null, 'connection refused'],
      [null, 'connection refused'],
      [null, 'connection refused'],
    ]);
  });
});

describe('signing secret rotation', () => {
  test('after a rotation deliveries carry two signatures, each verifies with its secret', async () => {
    const r = await receiver();
    const { id, secret: oldSecret } = await register(r.url, ['contact.updated']);
    const rotated = await p.resend.webhooks.rotateSigningSecret(id);
    expect(rotated.error).toBeNull();
    const newSecret = rotated.data!.signing_secret;
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(oldSecret);
    expect((await p.resend.webhooks.get(id)).data!.signing_secret).toBe(newSecret);
    await touchContact();
    await r.waitFor((reqs) => reqs.length === 1, 'a delivery');
    const [h] = r.requests;
    const sigs = h.signature.split(' ');
    expect(sigs.length).toBe(2);
    expect(sigs.every((s) => s.startsWith('v1,'))).toBe(true);
    verifyBoth(h, newSecret);
    verifyBoth(h, oldSecret);
    expect(() =>
      new SvixWebhook(`whsec_${Buffer.alloc(24, 7).toString('base64')}`).verify(h.body, {
        'svix-id': h.id,
        'svix-timestamp': h.timestamp,
        'svix-signature': h.signature,
      }),
    ).toThrow();
    // Once the overlap is over, only the new secret signs.
    const w = (await p.svc.store.webhooks.get(p.creds.team_id, id))!;
    await p.svc.store.write(async (tx) =>
      tx.webhooks.put({ ...w, previous_secret_expires_at: new Date(Date.now() - 1000).toISOString() } satisfies WebhookRec),
    );
    await touchContact();
    await r.waitFor((reqs) => reqs.length === 2, 'a second delivery');
    expect(r.requests[1].signature.split(' ').length).toBe(1);
    verifyBoth(r.requests[1], newSecret);
  });
});

describe('disabled and deleted endpoints', () => {
  test('a disabled endpoint gets no new events; re-enabled it gets the next ones', async () => {
    const on = await receiver();
    const off = await receiver();
    await register(on.url, ['contact.updated']);
    const disabled = await register(off.url, ['contact.updated']);
    expect((await p.resend.webhooks.update(disabled.id, { status: 'disabled' })).error).toBeNull();
    await touchContact('First');
    await on.waitFor((reqs) => reqs.length === 1, 'the enabled endpoint');
    // No event was even created for the disabled endpoint (fan-out commits with the change).
    expect((await p.resend.webhooks.events.list({ webhookId: disabled.id })).data!.data).toEqual([]);
    await drained(disabled.id);
    expect(off.requests.length).toBe(0);
    await p.resend.webhooks.update(disabled.id, { status: 'enabled' });
    await touchContact('Second');
    await off.waitFor((reqs) => reqs.length === 1, 'the re-enabled endpoint');
    expect(off.requests[0].payload.data.first_name).toBe('Second');
  });

  test('a slow endpoint holds at most 4 attempts and delays no other endpoint; disabling drops its backlog', async () => {
    const stuck = await receiver();
    stuck.answer(() => ({ hold: true }));
    const fine = await receiver();
    const s = await register(stuck.url, ['contact.updated']);
    await register(fine.url, ['contact.updated']);
    for (let i = 0; i < 10; i++) await touchContact(`n${i}`);
    await fine.waitFor((reqs) => reqs.length === 10, 'every event at the healthy endpoint');
    await stuck.waitFor(() => stuck.held() >= 4, 'four attempts held at the slow endpoint');
    expect(stuck.held()).toBe(4);
    expect(stuck.requests.length).toBe(4);
    expect((await p.resend.webhooks.update(s.id, { status: 'disabled' })).error).toBeNull();
    const events = (await p.resend.webhooks.events.list({ webhookId: s.id })).data!.data;
    expect(events.length).toBe(10);
    const queued = events.filter((e) => !stuck.requests.some((h) => h.id === e.id));
    expect(queued.length).toBe(6);
    for (const e of queued) {
      const full = (await p.resend.webhooks.events.get({ webhookId: s.id, eventId: e.id })).data!;
      expect(full).toMatchObject({ status: 'failed', next_attempt_at: null });
    }
    stuck.release({ status: 200 });
    await drained(s.id);
    // The attempts in flight finished and count as delivered; nothing else was sent.
    expect(stuck.requests.length).toBe(4);
    const statuses = await Promise.all(events.map(async (e) => (await p.resend.webhooks.events.get({ webhookId: s.id, eventId: e.id })).data!.status));
    expect(statuses.filter((x) => x === 'success').length).toBe(4);
    expect(statuses.filter((x) => x === 'failed').length).toBe(6);
  });

  test('deleting a webhook drops its outstanding events', async () => {
    const stuck = await receiver();
    stuck.answer(() => ({ hold: true }));
    const { id } = await register(stuck.url, ['contact.updated']);
    for (let i = 0; i < 6; i++) await touchContact(`d${i}`);
    await stuck.waitFor(() => stuck.held() === 4, 'four attempts in flight');
    const team = p.creds.team_id;
    const open = () => p.svc.store.webhookEvents.findAll('outstanding', id, team);
    expect((await open()).length).toBe(6);
    expect((await p.resend.webhooks.remove(id)).error).toBeNull();
    expect(await open()).toEqual([]);
    const all = await p.svc.store.webhookEvents.findAll('webhook', id, team);
    expect(all.map((e) => e.status)).toEqual(Array(6).fill('failed'));
    stuck.release({ status: 500 });
    await drained(id);
    expect(stuck.requests.length).toBe(4);
    const after = await p.svc.store.webhookEvents.findAll('webhook', id, team);
    expect(after).toHaveLength(6);
    expect(after.every((e) => e.status === 'failed' && e.due === null)).toBe(true);
  });
});

describe('private networks (SSRF guard)', () => {
  test('loopback endpoints are refused unless security.allow_private_networks; checked again at delivery', async () => {
    const strict = await startPosthorn({ 'security.allow_private_networks': false });
    try {
      for (const endpoint of [
        'http://127.0.0.1:8080/hook',
        'http://[::1]/hook',
        'http://169.254.169.254/latest',
        'http://10.1.2.3/x',
        'http://localhost:3000/x',
      ]) {
        const r = await strict.api('POST', '/webhooks', { body: { endpoint, events: ['contact.updated'] } });
        expect(r.status).toBe(422);
        expect(r.body.name).toBe('validation_error');
        expect(r.body.message).toContain('`endpoint`');
      }
      const ok = await strict.api('POST', '/webhooks', { body: { endpoint: 'http://93.184.215.14/hook', events: ['contact.updated'] } });
      expect(ok.status).toBe(201);
      expect((await strict.api('PATCH', `/webhooks/${ok.body.id}`, { body: { endpoint: 'http://127.0.0.1/x' } })).body.name).toBe('validation_error');

      // A webhook that points at loopback anyway (e.g. its host re-resolved) is refused at delivery.
      const r = await startReceiver();
      try {
        const w = (await strict.svc.store.webhooks.get(strict.creds.team_id, ok.body.id))!;
        await strict.svc.store.write(async (tx) => tx.webhooks.put({ ...w, endpoint: r.url }));
        const email = `x-${Date.now()}@people.test`;
        const c = (await strict.resend.contacts.create({ email })).data!.id;
        await strict.resend.contacts.update({ id: c, firstName: 'X' });
        const webhookId = ok.body.id as string;
        const ev = await until(async () => {
          const [e] = (await strict.resend.webhooks.events.list({ webhookId })).data!.data;
          return e;
        }, 'the event');
        const attempts = await until(async () => {
          const a = (await strict.resend.webhooks.events.attempts.list({ webhookId, eventId: ev.id })).data!.data;
          return a.length > 0 && a;
        }, 'an attempt');
        expect(attempts[0]).toMatchObject({ http_status_code: null, response: 'refused: private or loopback address' });
        expect(r.requests.length).toBe(0);
      } finally {
        await r.close();
      }
    } finally {
      await strict.stop();
    }
  });
});
