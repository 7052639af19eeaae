// Bounce classes in the delivery engine, end to end against a sink (README.md, "Bounce classes and
// incidents"): a `550 5.7.1` reputation reply still bounces the recipient as Resend reports it, but
// suppresses nobody — the site is suspended, an incident is recorded with the reply, the remote
// host, the sending IP and the link the reply names, the webhook subscribed to
// `deliverability.incident` is sent it (one that did not subscribe is not), GET /metrics counts it,
// and GET /emails/{id} shows the reply's class; a further reply counts on the same incident. A
// `550 5.1.1` still suppresses, with its class and reply.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { startMailWorld, type MailWorld } from '../helpers/world';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { queueEmail, waitForEmail, settled, eventsOf } from '../helpers/emails';
import { until } from '../helpers/wait';

const TOKEN = 'metrics-token-for-incidents';
const GMAIL_REPUTATION =
  '5.7.1 [127.0.0.1 18] Our system has detected that this message is likely suspicious due to the very low reputation of the sending IP address. To best protect our users from spam, the message has been blocked. Please visit https://support.google.com/mail/answer/188131 for more information.';

let w: MailWorld;
let subscribed: Receiver;
let other: Receiver;

beforeAll(async () => {
  w = await startMailWorld({
    'delivery.retry_schedule': ['1s'],
    'delivery.shaping.sites': { dest: { mx: ['*.dest.test'], backoff: '1s', max_backoff: '2s' } },
    'metrics.token': TOKEN,
    'security.allow_private_networks': true,
  });
  subscribed = await startReceiver();
  other = await startReceiver();
  for (const [r, events] of [
    [subscribed, ['deliverability.incident', 'email.bounced']],
    [other, ['email.bounced']],
  ] as const) {
    const res = await w.p.api('POST', '/webhooks', { body: { endpoint: r.url, events } });
    expect(res.status).toBe(201);
  }
});
afterAll(async () => {
  await w.stop();
  await subscribed.close();
  await other.close();
});

const metric = async (name: string, labels: string) => {
  const text = await (await fetch(`${w.p.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line ? Number(line.split(' ').at(-1)) : 0;
};

describe('a reputation reply: an incident of the sender, nobody suppressed', () => {
  test('bounced as Resend reports it, the site suspended, the incident recorded, visible and sent once', async () => {
    const { p, sink, domain } = w;
    sink.respond('ann@dest.test', { code: 550, message: GMAIL_REPUTATION });
    const email = await queueEmail(p.svc, domain, { to: ['ann@dest.test'] });
    const done = await waitForEmail(p.svc, email, settled);
    expect(done.recipients).toEqual({ 'ann@dest.test': 'bounced' });

    // The event contract does not change: Permanent, with Resend's sub-type.
    const bounce = (await eventsOf(p.svc, email)).find((e) => e.type === 'email.bounced')!.data.bounce;
    expect(bounce).toMatchObject({ type: 'Permanent', subType: 'ContentRejected', diagnosticCode: [`smtp; 550 ${GMAIL_REPUTATION}`] });
    // Nobody suppressed.
    expect((await p.api('GET', '/suppressions/ann%40dest.test')).status).toBe(404);
    // The attempt carries the reply's class.
    const shown = await p.api('GET', `/emails/${email.id}`);
    expect(shown.body.attempts[0].results[0]).toMatchObject({ recipient: 'ann@dest.test', code: 550, enhanced_code: '5.7.1', class: 'reputation' });
    // The site is suspended through shaping, for the reply.
    const site = await p.svc.store.sites.get('dest');
    expect(site).toMatchObject({ strikes: 1, reply: `550 ${GMAIL_REPUTATION}` });
    expect(site!.suspended_until).toBeGreaterThan(Date.now() - 5_000);

    // The incident, on the API.
    const list = await p.api('GET', '/deliverability/incidents');
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ object: 'list', has_more: false });
    expect(list.body.data).toHaveLength(1);
    const incident = list.body.data[0];
    expect(incident).toMatchObject({
      object: 'incident',
      class: 'reputation',
      site: 'dest',
      status: 'open',
      closed_at: null,
      count: 1,
      reply: `550 ${GMAIL_REPUTATION}`,
      code: 550,
      enhanced_code: '5.7.1',
      remote_host: 'mx.dest.test',
      remote_ip: '127.0.0.1',
      sending_ip: '127.0.0.1',
      domain: 'example.test',
      email_id: email.id,
      links: ['https://support.google.com/mail/answer/188131'],
      suspended_until: new Date(site!.suspended_until!).toISOString(),
    });
    expect((await p.api('GET', '/deliverability/incidents?status=closed')).body.data).toEqual([]);

    // The webhook that subscribed is sent it, once; the other is not.
    await subscribed.waitFor(
      (reqs) => reqs.some((r) => r.payload.type === 'deliverability.incident') && reqs.some((r) => r.payload.type === 'email.bounced'),
      'the incident and the bounce',
    );
    await other.waitFor((reqs) => reqs.some((r) => r.payload.type === 'email.bounced'), 'the bounce');
    const sent = subscribed.requests.filter((r) => r.payload.type === 'deliverability.incident');
    expect(sent).toHaveLength(1);
    expect(sent[0]!.payload.data).toEqual(incident);
    expect(other.requests.map((r) => r.payload.type)).toEqual(['email.bounced']);

    // Prometheus: the reply by class and site, the incident opened.
    expect(await metric('posthorn_delivery_replies_total', 'class="reputation",site="dest"')).toBe(1);
    expect(await metric('posthorn_deliverability_incidents_total', 'class="reputation",site="dest"')).toBe(1);
  });

  test('a further reputation reply of the site counts on the same incident: no second event', async () => {
    const { p, sink, domain } = w;
    sink.respond('bob@dest.test', { code: 550, message: GMAIL_REPUTATION });
    const email = await queueEmail(p.svc, domain, { to: ['bob@dest.test'] });
    // Queued while the site is suspended, it waits out the suspension, then bounces the same way.
    const done = await waitForEmail(p.svc, email, settled, 30_000);
    expect(done.recipients).toEqual({ 'bob@dest.test': 'bounced' });
    await until(async () => (await p.api('GET', '/deliverability/incidents')).body.data[0]?.count === 2, 'the reply counted on the incident');
    const { data } = (await p.api('GET', '/deliverability/incidents')).body;
    expect(data).toHaveLength(1);
    expect(data[0].last_reply).toBe(`550 ${GMAIL_REPUTATION}`);
    expect((await p.api('GET', '/suppressions/bob%40dest.test')).status).toBe(404);
    await subscribed.waitFor((reqs) => reqs.filter((r) => r.payload.type === 'email.bounced').length >= 2, 'the second bounce');
    expect(subscribed.requests.filter((r) => r.payload.type === 'deliverability.incident')).toHaveLength(1);
  });
});

test('a 550 5.1.1 still suppresses the address, with its class and reply', async () => {
  const { p, sink, domain, dns } = w;
  // Another destination (a site of its own), so the suspended one does not hold it up.
  dns.zone.set('other.test', 'MX', [{ exchange: 'mx.other.test', priority: 10 }]);
  dns.zone.set('mx.other.test', 'A', ['127.0.0.1']);
  sink.respond('gone@other.test', { code: 550, message: '5.1.1 <gone@other.test>: Recipient address rejected: User unknown in local recipient table' });
  const email = await queueEmail(p.svc, domain, { to: ['gone@other.test'] });
  expect((await waitForEmail(p.svc, email, settled)).recipients).toEqual({ 'gone@other.test': 'bounced' });
  const s = await p.api('GET', '/suppressions/gone%40other.test');
  expect(s.body).toMatchObject({
    object: 'suppression',
    email: 'gone@other.test',
    origin: 'bounce',
    source_id: email.id,
    class: 'recipient',
    reply: '550 5.1.1 <gone@other.test>: Recipient address rejected: User unknown in local recipient table',
  });
  // Not the sender's: no incident, and the site is not suspended for it.
  expect((await p.api('GET', '/deliverability/incidents')).body.data.map((i: { site: string }) => i.site)).toEqual(['dest']);
  expect(await p.svc.store.sites.get('other.test')).toBeUndefined();
});
