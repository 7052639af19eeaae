// Queue controls (docs/api.md §19.6, §19.7, §7.6) through the API, against a real delivery engine
// and a sink MTA: GET /queue by destination, hold / release / retry / cancel of a destination and of
// one email, with the documented errors for bad input, and no effect across teams.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { startMailWorld, type MailWorld } from '../helpers/world';
import { waitForEmail, settled, eventTypes } from '../helpers/emails';
import { until } from '../helpers/wait';

let world: MailWorld;
const send = async (to: string) => {
  const { data, error } = await world.p.resend.emails.send({ from: 'hello@example.test', to, subject: `to ${to}`, text: 'queue controls' });
  if (error) throw new Error(JSON.stringify(error));
  return { id: data!.id, team_id: world.p.creds.team_id };
};
/** A row of GET /queue, as far as these tests read it. */
interface QueueRow {
  destination: string;
  held_emails: number;
  suspended_until: string | null;
  next_attempt_at: string;
}
const row = async (destination: string) => ((await world.p.api('GET', '/queue')).body.data as QueueRow[]).find((d) => d.destination === destination);

beforeAll(async () => {
  // A temporary failure waits an hour: queued mail stays queued until a control moves it.
  world = await startMailWorld({ 'delivery.retry_schedule': ['1h'] });
});
afterAll(() => world.stop());

describe('bad input', () => {
  test('a destination that is not a domain name → 422 invalid_parameter; nothing queued there → 404; wrong state → 422', async () => {
    const { p } = world;
    for (const bad of ['not%20a%20domain', 'localhost', 'a..b', `${'x'.repeat(64)}.test`]) {
      const r = await p.api('POST', `/queue/${bad}/hold`);
      expect([bad, r.status, r.body.name]).toEqual([bad, 422, 'invalid_parameter']);
    }
    expect((await p.api('POST', '/queue/nothing.test/retry')).body).toEqual({
      statusCode: 404,
      name: 'not_found',
      message: 'Queued mail to this destination not found',
    });
    expect((await p.api('POST', '/queue/nothing.test/cancel')).status).toBe(404);
    expect((await p.api('POST', '/queue/nothing.test/release')).body).toEqual({
      statusCode: 422,
      name: 'validation_error',
      message: 'The destination `nothing.test` is not held.',
    });
  });

  test('an email id that is not a UUID → 422, unknown → 404, an email not queued → 422', async () => {
    const { p } = world;
    for (const action of ['hold', 'release', 'retry', 'cancel']) {
      expect((await p.api('POST', `/emails/nope/${action}`)).body.name).toBe('invalid_parameter');
      expect((await p.api('POST', `/emails/0195608a-51e4-70ed-a079-d3bde8e25d94/${action}`)).body).toEqual({
        statusCode: 404,
        name: 'not_found',
        message: 'Email not found',
      });
    }
    const done = await send('done@dest.test');
    await waitForEmail(p.svc, done, settled);
    const expected = {
      hold: 'Only queued emails can be held.',
      release: 'The email is not held.',
      retry: 'Only queued emails can be retried.',
      cancel: 'Only scheduled or queued emails can be canceled.',
    };
    for (const [action, message] of Object.entries(expected))
      expect((await p.api('POST', `/emails/${done.id}/${action}`)).body).toEqual({ statusCode: 422, name: 'validation_error', message });
  });
});

test('a held destination keeps new mail waiting, untried, until it is released', async () => {
  const { p, sink } = world;
  const before = sink.messages.length;
  const held = await p.api('POST', '/queue/dest.test/hold');
  expect(held.status).toBe(200);
  expect(held.body).toMatchObject({ object: 'queue_destination', destination: 'dest.test', site: 'dest.test', held: true, queued: 0, affected: 0 });
  expect((await p.api('POST', '/queue/dest.test/hold')).body).toEqual({
    statusCode: 422,
    name: 'validation_error',
    message: 'The destination `dest.test` is already held.',
  });
  const a = await send('a@dest.test');
  const b = await send('b@dest.test');
  // Queued held: counted so as soon as they are accepted (docs/api.md §19.7).
  expect(await row('dest.test')).toMatchObject({ queued: 2, held: true, held_emails: 2, next_attempt_at: null, recipients: 2 });
  expect((await p.api('POST', `/emails/${a.id}/retry`)).body.message).toBe('The email is held: release it first.');
  expect((await p.api('POST', '/queue/dest.test/retry')).body.message).toBe('The destination `dest.test` is held: release it first.');
  expect(sink.messages.length).toBe(before);
  expect((await p.resend.emails.get(a.id)).data!.last_event).toBe('queued');

  const released = await p.api('POST', '/queue/dest.test/release');
  expect(released.body).toMatchObject({ destination: 'dest.test', held: false, affected: 2 });
  for (const e of [a, b]) expect((await waitForEmail(p.svc, e, settled)).last_event).toBe('delivered');
  expect(await row('dest.test')).toBeUndefined();
});

test('one email: held, released, retried now; the SDK cancels a queued email, its recipients canceled', async () => {
  const { p, sink } = world;
  sink.respond('slow@dest.test', { code: 450, message: '4.2.0 mailbox busy' });
  const slow = await send('slow@dest.test');
  await waitForEmail(p.svc, slow, (e) => e.recipients['slow@dest.test'] === 'delayed');
  expect(await row('dest.test')).toMatchObject({ queued: 1, retrying: 1, held: false, held_emails: 0, last_error: '450 4.2.0 mailbox busy' });

  expect((await p.api('POST', `/emails/${slow.id}/hold`)).body).toEqual({ object: 'email', id: slow.id });
  expect((await p.api('POST', `/emails/${slow.id}/hold`)).body.message).toBe('The email is already held.');
  expect(await row('dest.test')).toMatchObject({ held: false, held_emails: 1, next_attempt_at: null });
  // Released: due at once, tried again (still refused).
  expect((await p.api('POST', `/emails/${slow.id}/release`)).status).toBe(200);
  await waitForEmail(p.svc, slow, (e) => (e.attempts ?? []).length === 2);
  // Retried now once the mailbox takes it: delivered without waiting the hour.
  sink.respond('slow@dest.test', null);
  expect((await p.api('POST', `/emails/${slow.id}/retry`)).body).toEqual({ object: 'email', id: slow.id });
  expect((await waitForEmail(p.svc, slow, settled)).recipients).toEqual({ 'slow@dest.test': 'delivered' });

  sink.respond('never@dest.test', { code: 451, message: '4.3.0 try later' });
  const never = await send('never@dest.test');
  await waitForEmail(p.svc, never, (e) => e.recipients['never@dest.test'] === 'delayed');
  const { data, error } = await p.resend.emails.cancel(never.id);
  expect(error).toBeNull();
  expect(data).toEqual({ object: 'email', id: never.id } as never);
  const canceled = (await p.resend.emails.get(never.id)).data!;
  expect(canceled.last_event).toBe('canceled');
  expect((await p.svc.store.emails.get(never.team_id, never.id))!.recipients).toEqual({ 'never@dest.test': 'canceled' });
  expect(await eventTypes(p.svc, never)).toEqual(['email.queued', 'email.sent', 'email.delivery_delayed', 'email.canceled']);
  expect(await p.svc.store.queue.entriesOf(never.team_id, never.id)).toEqual([]);
  expect((await p.api('POST', `/emails/${never.id}/cancel`)).status).toBe(422);
  sink.respond('never@dest.test', null);
});

test('a destination: cancel ends every queued recipient there (held ones too); retry lifts its suspension', async () => {
  const { p, dns, sink } = world;
  // far.test is held: its mail waits, then is canceled.
  await p.api('POST', '/queue/far.test/hold');
  const x = await send('x@far.test');
  const y = await send('y@far.test');
  await until(async () => (await row('far.test'))?.held_emails === 2, 'far.test mail to be held');
  const canceled = await p.api('POST', '/queue/far.test/cancel');
  expect(canceled.body).toMatchObject({ destination: 'far.test', queued: 0, held: true, affected: 2 });
  for (const e of [x, y]) expect((await p.resend.emails.get(e.id)).data!.last_event).toBe('canceled');
  expect((await p.api('POST', '/queue/far.test/release')).body).toMatchObject({ held: false, affected: 0 });
  expect(await row('far.test')).toBeUndefined();

  // near.test's site is suspended (as a throttling reply leaves it): its mail waits out of the way.
  dns.zone.set('near.test', 'MX', [{ exchange: 'mx.dest.test', priority: 10 }]);
  const until1h = Date.now() + 3_600_000;
  await p.svc.store.write(async (tx) =>
    tx.sites.put({ site: 'near.test', suspended_until: until1h, strikes: 1, throttled_at: Date.now(), reply: '421 4.7.0 slow down' }),
  );
  const z = await send('z@near.test');
  await until(async () => (await row('near.test'))?.suspended_until === new Date(until1h).toISOString(), 'GET /queue to show the suspension');
  expect(await row('near.test')).toMatchObject({ site: 'near.test', queued: 1, retrying: 0 });
  expect(Date.parse((await row('near.test'))!.next_attempt_at)).toBeGreaterThanOrEqual(until1h);
  const before = sink.messages.length;
  const retried = await p.api('POST', '/queue/near.test/retry');
  expect(retried.body).toMatchObject({ destination: 'near.test', suspended_until: null, affected: 1 });
  expect((await waitForEmail(p.svc, z, settled)).recipients).toEqual({ 'z@near.test': 'delivered' });
  expect(sink.messages.length).toBe(before + 1);
  expect(await p.svc.store.sites.get('near.test')).toMatchObject({ suspended_until: null, strikes: 1 });
});

test('another team sees none of it and can change none of it', async () => {
  const { p } = world;
  await p.api('POST', '/queue/other.test/hold');
  const other = await p.newTeam();
  expect((await p.api('GET', '/queue', { key: other.api_key })).body).toEqual({ object: 'list', has_more: false, data: [], truncated: false });
  expect((await p.api('POST', '/queue/other.test/release', { key: other.api_key })).status).toBe(422);
  const mine = await send('mine@other.test');
  await until(async () => (await row('other.test'))?.held_emails === 1, 'the mail to be held');
  for (const action of ['hold', 'release', 'retry', 'cancel'])
    expect((await p.api('POST', `/emails/${mine.id}/${action}`, { key: other.api_key })).status).toBe(404);
  expect((await p.api('POST', '/queue/other.test/cancel', { key: other.api_key })).status).toBe(404);
  expect(await row('other.test')).toMatchObject({ held: true, held_emails: 1 });
  await p.api('POST', '/queue/other.test/cancel');
});
