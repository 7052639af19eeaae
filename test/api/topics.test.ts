// Topics (docs/api.md §12.8, §7.1, §13, docs/mail.md §6): the official SDK's `topics.*` and
// `contacts.topics.*` against a running server, each with its bad input (the documented error,
// nothing changed in the store); `topic_id` on sends, batches and broadcasts delivered to a
// loopback MTA, honouring each topic's default and each contact's choice; and the preference page
// behind the unsubscribe link.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { startMailWorld, type MailWorld } from '../helpers/world';
import { waitForEmail, storedEmails } from '../helpers/emails';
import { until } from '../helpers/wait';
import type { EmailRec } from '../../src/store';
import { SignedLinks } from '../../src/links/signed';

let w: MailWorld;
const team = () => w.p.creds.team_id;
const UNKNOWN = '0195608a-51e4-70ed-a079-d3bde8e25d94';
let seq = 0;
const addr = (local = 't') => `${local}${++seq}@dest.test`;

beforeAll(async () => {
  w = await startMailWorld();
});
afterAll(() => w.stop());

/** Everything topics can change: topics, contacts, and every contact's choices. */
async function snapshot() {
  const { store } = w.p.svc;
  // First: what a batch left in the incoming queue is written, as every read through the API does.
  const emails = (await storedEmails(w.p.svc, team())).length;
  const contacts = await store.contacts.all(team());
  return JSON.stringify({
    topics: await store.topics.all(team()),
    contacts,
    choices: await Promise.all(contacts.map((c) => store.topicChoices.of(team(), c.id))),
    emails,
  });
}

async function topic(body: Record<string, unknown>): Promise<string> {
  const r = await w.p.api('POST', '/topics', { body });
  expect(r.status).toBe(201);
  return r.body.id;
}

async function contact(body: Record<string, unknown>): Promise<string> {
  const r = await w.p.api('POST', '/contacts', { body });
  expect(r.status).toBe(201);
  return r.body.id;
}

const topicEvents = async (contactId: string) =>
  (await w.p.svc.events.log(w.p.svc.store, team(), contactId)).filter((e) => e.type === 'contact.topics.updated');

describe('topics (SDK)', () => {
  test('create, get, list, update, remove; exact shapes', async () => {
    const created = await w.p.resend.topics.create({ name: 'Weekly Newsletter', defaultSubscription: 'opt_in', description: 'Every Monday' });
    expect(created.error).toBeNull();
    expect(created.data).toEqual({ object: 'topic', id: expect.any(String) } as never);
    const id = created.data!.id;

    const got = await w.p.resend.topics.get(id);
    expect(got.error).toBeNull();
    expect(got.data).toEqual({
      object: 'topic',
      id,
      name: 'Weekly Newsletter',
      description: 'Every Monday',
      default_subscription: 'opt_in',
      visibility: 'private',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    } as never);

    const list = await w.p.resend.topics.list();
    expect(list.error).toBeNull();
    expect(list.data).toMatchObject({ object: 'list', has_more: false });
    expect(list.data!.data[0]).toEqual(got.data!);

    // The SDK sends the whole payload, `id` included: it is ignored.
    const updated = await w.p.resend.topics.update({ id, name: 'Weekly news', description: 'Mondays' });
    expect(updated.error).toBeNull();
    expect(updated.data).toEqual({ object: 'topic', id } as never);
    expect((await w.p.api('PATCH', `/topics/${id}`, { body: { visibility: 'public', default_subscription: 'opt_in' } })).status).toBe(200);
    expect((await w.p.resend.topics.get(id)).data).toMatchObject({
      name: 'Weekly news',
      description: 'Mondays',
      visibility: 'public',
      default_subscription: 'opt_in',
    });

    const removed = await w.p.resend.topics.remove(id);
    expect(removed.error).toBeNull();
    expect(removed.data).toEqual({ object: 'topic', id, deleted: true });
    expect((await w.p.resend.topics.get(id)).error).toMatchObject({ statusCode: 404, name: 'not_found', message: 'Topic not found' });
  });

  test('bad input: the documented error, nothing changes', async () => {
    const id = await topic({ name: 'Keep', default_subscription: 'opt_out' });
    const before = await snapshot();
    const create: [unknown, number, string, string][] = [
      [{ default_subscription: 'opt_in' }, 422, 'missing_required_field', 'Missing `name` field.'],
      [{ name: 'x' }, 422, 'missing_required_field', 'Missing `default_subscription` field.'],
      [{ name: 'x'.repeat(51), default_subscription: 'opt_in' }, 422, 'validation_error', 'Invalid `name` field: must be 1 to 50 characters.'],
      [{ name: 7, default_subscription: 'opt_in' }, 422, 'validation_error', 'Invalid `name` field: must be a string.'],
      [{ name: 'x', default_subscription: 'maybe' }, 422, 'validation_error', 'Invalid `default_subscription` field: must be `opt_in` or `opt_out`.'],
      [
        { name: 'x', default_subscription: 'opt_in', description: 'd'.repeat(201) },
        422,
        'validation_error',
        'Invalid `description` field: must be at most 200 characters.',
      ],
      [
        { name: 'x', default_subscription: 'opt_in', visibility: 'secret' },
        422,
        'validation_error',
        'Invalid `visibility` field: must be `public` or `private`.',
      ],
      [[{ name: 'x' }], 400, 'validation_error', 'The request body must be a JSON object.'],
    ];
    for (const [body, statusCode, name, message] of create)
      expect({ body, res: (await w.p.api('POST', '/topics', { body })).body }).toEqual({ body, res: { statusCode, name, message } });
    // Through the SDK too.
    expect((await w.p.resend.topics.create({ name: '', defaultSubscription: 'opt_in' })).error).toMatchObject({ statusCode: 422, name: 'validation_error' });

    const update: [string, unknown, number, string][] = [
      [id, { default_subscription: 'opt_in' }, 422, 'Invalid `default_subscription` field: cannot be changed after the topic is created.'],
      [id, { name: '' }, 422, 'Invalid `name` field: must be 1 to 50 characters.'],
      [UNKNOWN, { name: 'x' }, 404, 'Topic not found'],
      ['nope', { name: 'x' }, 422, 'The `id` must be a valid UUID.'],
    ];
    for (const [tid, body, status, message] of update) {
      const r = await w.p.api('PATCH', `/topics/${tid}`, { body });
      expect({ tid, status: r.status, message: r.body.message }).toEqual({ tid, status, message });
    }
    expect((await w.p.resend.topics.update({ id: UNKNOWN, name: 'x' })).error).toMatchObject({ statusCode: 404, name: 'not_found' });
    expect((await w.p.resend.topics.remove(UNKNOWN)).error).toMatchObject({ statusCode: 404, name: 'not_found', message: 'Topic not found' });
    expect((await w.p.resend.topics.get('nope')).error).toMatchObject({ statusCode: 422, name: 'invalid_parameter' });
    expect(await snapshot()).toBe(before);
  });

  test("another team's topics are out of sight", async () => {
    const id = await topic({ name: 'Mine', default_subscription: 'opt_in' });
    const other = await w.p.newTeam();
    const theirs = w.p.client(other.api_key);
    expect((await theirs.topics.get(id)).error).toMatchObject({ statusCode: 404 });
    expect((await theirs.topics.list()).data!.data).toEqual([]);
    expect((await theirs.topics.remove(id)).error).toMatchObject({ statusCode: 404 });
    expect((await w.p.resend.topics.get(id)).error).toBeNull();
  });
});

describe('contact topics (SDK)', () => {
  test("list shows every topic with the contact's subscription (its choice or the default); update by id and by email", async () => {
    const news = await topic({ name: 'News', default_subscription: 'opt_in', description: 'd' });
    const offers = await topic({ name: 'Offers', default_subscription: 'opt_out' });
    const email = addr('ct');
    const id = await contact({ email });

    const list = await w.p.resend.contacts.topics.list({ id });
    expect(list.error).toBeNull();
    const mine = <T extends { id: string }>(data: T[]) => data.filter((x) => x.id === news || x.id === offers);
    expect(mine(list.data!.data)).toEqual([
      { id: offers, name: 'Offers', description: null, subscription: 'opt_out' },
      { id: news, name: 'News', description: 'd', subscription: 'opt_in' },
    ]);

    const r = await w.p.resend.contacts.topics.update({
      id,
      topics: [
        { id: news, subscription: 'opt_out' },
        { id: offers, subscription: 'opt_in' },
      ],
    });
    expect(r.error).toBeNull();
    expect(r.data).toMatchObject({
      id,
      object: 'contact_topics',
      contact_id: id,
      topics: [
        { id: news, subscription: 'opt_out' },
        { id: offers, subscription: 'opt_in' },
      ],
    });
    const byEmail = await w.p.resend.contacts.topics.list({ email });
    expect(mine(byEmail.data!.data).map((x) => [x.id, x.subscription])).toEqual([
      [offers, 'opt_in'],
      [news, 'opt_out'],
    ]);
    // Resend's documented body `{topics}` works too; by email, with the address in the path as given.
    expect((await w.p.api('PATCH', `/contacts/${email}/topics`, { body: { topics: [{ id: news, subscription: 'opt_in' }] } })).status).toBe(200);
    expect(await w.p.svc.store.topicChoices.of(team(), id)).toEqual({ [news]: 'opt_in', [offers]: 'opt_in' });

    // One contact.topics.updated per change that changed something (webhooks, docs/api.md §14.2).
    const events = await topicEvents(id);
    expect(events.map((e) => e.data.topics)).toEqual([
      [
        { id: news, subscription: 'opt_out' },
        { id: offers, subscription: 'opt_in' },
      ],
      [{ id: news, subscription: 'opt_in' }],
    ]);
    expect((await w.p.api('PATCH', `/contacts/${id}/topics`, { body: [{ id: news, subscription: 'opt_in' }] })).status).toBe(200);
    expect((await topicEvents(id)).length).toBe(2);

    // Deleting a topic takes the choices about it along; deleting a contact takes theirs.
    await w.p.resend.topics.remove(offers);
    expect(await w.p.svc.store.topicChoices.of(team(), id)).toEqual({ [news]: 'opt_in' });
    await w.p.resend.contacts.remove(id);
    expect(await w.p.svc.store.topicChoices.of(team(), id)).toEqual({});
  });

  test('POST /contacts takes `topics`', async () => {
    const t = await topic({ name: 'Launches', default_subscription: 'opt_out' });
    const created = await w.p.resend.contacts.create({ email: addr('cc'), topics: [{ id: t, subscription: 'opt_in' }] });
    expect(created.error).toBeNull();
    expect(await w.p.svc.store.topicChoices.of(team(), created.data!.id)).toEqual({ [t]: 'opt_in' });
  });

  test('bad input: the documented error, nothing changes', async () => {
    const t = await topic({ name: 'Guarded', default_subscription: 'opt_in' });
    const email = addr('bad');
    const id = await contact({ email });
    const before = await snapshot();
    const cases: [string, unknown, number, string, string][] = [
      [id, [{ id: UNKNOWN, subscription: 'opt_in' }], 422, 'validation_error', 'Invalid `topics[0].id` field: no topic with this id exists.'],
      [
        id,
        [
          { id: t, subscription: 'opt_in' },
          { id: t, subscription: 'sometimes' },
        ],
        422,
        'validation_error',
        'Invalid `topics[1].subscription` field: must be `opt_in` or `opt_out`.',
      ],
      [id, [{ subscription: 'opt_in' }], 422, 'missing_required_field', 'Missing `topics[0].id` field.'],
      [id, [{ id: t }], 422, 'missing_required_field', 'Missing `topics[0].subscription` field.'],
      [id, { topics: 'all' }, 422, 'validation_error', 'Invalid `topics` field: must be an array of `{ id, subscription }` objects.'],
      [id, {}, 422, 'missing_required_field', 'Missing `topics` field.'],
      [UNKNOWN, [{ id: t, subscription: 'opt_in' }], 404, 'not_found', 'Contact not found'],
      ['nobody@dest.test', [{ id: t, subscription: 'opt_in' }], 404, 'not_found', 'Contact not found'],
      ['garbage', [{ id: t, subscription: 'opt_in' }], 422, 'invalid_parameter', 'The `id` must be a valid UUID or an email address.'],
    ];
    for (const [who, body, statusCode, name, message] of cases)
      expect({ who, body, res: (await w.p.api('PATCH', `/contacts/${who}/topics`, { body })).body }).toEqual({ who, body, res: { statusCode, name, message } });
    // Through the SDK: a valid topic beside an unknown one changes nothing either.
    const sdk = await w.p.resend.contacts.topics.update({
      email,
      topics: [
        { id: t, subscription: 'opt_out' },
        { id: UNKNOWN, subscription: 'opt_out' },
      ],
    });
    expect(sdk.error).toMatchObject({ statusCode: 422, name: 'validation_error' });
    expect((await w.p.resend.contacts.topics.list({ id: UNKNOWN })).error).toMatchObject({ statusCode: 404, name: 'not_found' });
    expect((await w.p.api('GET', `/contacts/${id}/topics?limit=0`)).body.name).toBe('validation_error');
    expect((await w.p.api('POST', '/contacts', { body: { email: addr(), topics: [{ id: UNKNOWN, subscription: 'opt_in' }] } })).body).toMatchObject({
      statusCode: 422,
      message: 'Invalid `topics[0].id` field: no topic with this id exists.',
    });
    expect(await snapshot()).toBe(before);
  });
});

/** Wait for an email's state after its send (queued mail is delivered to the sink). */
function settled(id: string, done: (e: EmailRec) => boolean): Promise<EmailRec> {
  return waitForEmail(w.p.svc, { team_id: team(), id }, done, 20_000);
}

describe('topic_id on sends', () => {
  let optIn: string;
  let optOut: string;
  let outContact: string;
  let inContact: string;
  let unsubscribed: string;

  beforeAll(async () => {
    optIn = await topic({ name: 'Product updates', default_subscription: 'opt_in' });
    optOut = await topic({ name: 'Deals', default_subscription: 'opt_out' });
    outContact = addr('out');
    inContact = addr('in');
    unsubscribed = addr('gone');
    // Opted out of the opt-in topic; opted in to the opt-out one.
    await contact({ email: outContact, topics: [{ id: optIn, subscription: 'opt_out' }] });
    await contact({ email: inContact, topics: [{ id: optOut, subscription: 'opt_in' }] });
    // Unsubscribed from everything: no topic's email, whatever the choices.
    await contact({ email: unsubscribed, unsubscribed: true, topics: [{ id: optOut, subscription: 'opt_in' }] });
  });

  const send = (body: Record<string, unknown>) =>
    w.p.resend.emails.send({ from: 'Acme <news@example.test>', subject: 'Topical', text: 'Hi', ...body } as never);

  test('an opted-out contact is skipped: alone, the email is `failed` and nothing is sent', async () => {
    const r = await send({ to: outContact, topicId: optIn });
    expect(r.error).toBeNull();
    const e = await settled(r.data!.id, (x) => x.last_event === 'failed');
    expect(e.recipients).toEqual({ [outContact]: 'opted_out' });
    expect(e.topic_id).toBe(optIn);
    expect((await w.p.resend.emails.get(r.data!.id)).data).toMatchObject({ last_event: 'failed', topic_id: optIn });
    expect(w.sink.to(outContact)).toEqual([]);
  });

  test('defaults: anyone not opted out gets an opt-in topic; only those opted in get an opt-out topic; each of to, cc and bcc is checked', async () => {
    const stranger = addr('stranger');
    const a = await send({ to: [outContact, stranger], cc: inContact, bcc: unsubscribed, topicId: optIn });
    const ea = await settled(a.data!.id, (x) => x.recipients[stranger] === 'delivered' && x.recipients[inContact] === 'delivered');
    expect(ea.recipients).toEqual({ [outContact]: 'opted_out', [stranger]: 'delivered', [inContact]: 'delivered', [unsubscribed]: 'opted_out' });

    const b = await send({ to: [inContact, stranger, outContact], topicId: optOut });
    const eb = await settled(b.data!.id, (x) => x.recipients[inContact] === 'delivered');
    expect(eb.recipients).toEqual({ [inContact]: 'delivered', [stranger]: 'opted_out', [outContact]: 'opted_out' });
    // The message itself went only to the recipients let through.
    const got = w.sink.messages.filter((m) => m.raw.toString().includes(b.data!.id));
    expect(got.flatMap((m) => m.rcptTo).sort()).toEqual([inContact]);
  });

  test('in a batch, per item; a scheduled email is checked when it goes out', async () => {
    const r = await w.p.resend.batch.send([
      { from: 'news@example.test', to: outContact, subject: 'b1', text: 'x', topicId: optIn },
      { from: 'news@example.test', to: inContact, subject: 'b2', text: 'x', topicId: optOut },
    ] as never);
    expect(r.error).toBeNull();
    const [first, second] = r.data!.data;
    expect((await settled(first.id, (x) => x.last_event === 'failed')).recipients).toEqual({ [outContact]: 'opted_out' });
    expect((await settled(second.id, (x) => x.recipients[inContact] === 'delivered')).topic_id).toBe(optOut);

    const later = addr('later');
    const laterId = await contact({ email: later, topics: [{ id: optOut, subscription: 'opt_in' }] });
    const s = await send({ to: later, topicId: optOut, scheduledAt: new Date(Date.now() + 1500).toISOString() });
    expect(s.error).toBeNull();
    // Opts out before the send time: the choice at send time counts.
    await w.p.resend.contacts.topics.update({ id: laterId, topics: [{ id: optOut, subscription: 'opt_out' }] });
    expect((await settled(s.data!.id, (x) => x.last_event !== 'scheduled')).last_event).toBe('failed');
  });

  test('an unknown or malformed topic_id is refused and nothing is stored', async () => {
    const before = await snapshot();
    expect((await send({ to: inContact, topicId: UNKNOWN })).error).toEqual({
      statusCode: 422,
      name: 'validation_error',
      message: 'Invalid `topic_id` field: no topic with this id exists.',
    });
    expect((await send({ to: inContact, topicId: 'weekly' })).error).toEqual({
      statusCode: 422,
      name: 'validation_error',
      message: 'Invalid `topic_id` field: must be the id of a topic.',
    });
    const other = await w.p.newTeam();
    const theirs = await w.p.client(other.api_key).topics.create({ name: 'Theirs', defaultSubscription: 'opt_in' });
    expect((await send({ to: inContact, topicId: theirs.data!.id })).error).toMatchObject({
      statusCode: 422,
      message: 'Invalid `topic_id` field: no topic with this id exists.',
    });
    const batch = await w.p.resend.batch.send([{ from: 'news@example.test', to: inContact, subject: 's', text: 'x', topicId: UNKNOWN }] as never);
    expect(batch.error).toMatchObject({ statusCode: 422, message: '[0] Invalid `topic_id` field: no topic with this id exists.' });
    expect(await snapshot()).toBe(before);
  });
});

describe('broadcasts with a topic', () => {
  test("only the segment's contacts subscribed to the topic receive it; an unknown topic is refused", async () => {
    const t = await topic({ name: 'Events', default_subscription: 'opt_out' });
    const seg = (await w.p.api('POST', '/segments', { body: { name: 'Everyone' } })).body.id;
    const yes = addr('yes');
    const no = addr('no');
    const quiet = addr('quiet');
    await contact({ email: yes, segments: [seg], topics: [{ id: t, subscription: 'opt_in' }] });
    await contact({ email: no, segments: [seg] });
    await contact({ email: quiet, segments: [seg], unsubscribed: true, topics: [{ id: t, subscription: 'opt_in' }] });

    const bad = await w.p.resend.broadcasts.create({ segmentId: seg, from: 'news@example.test', subject: 'x', text: 'x', topicId: UNKNOWN });
    expect(bad.error).toEqual({ statusCode: 422, name: 'validation_error', message: 'Invalid `topic_id` field: no topic with this id exists.' });

    const b = await w.p.resend.broadcasts.create({
      segmentId: seg,
      from: 'news@example.test',
      subject: 'Events',
      text: 'Hi {{{RESEND_UNSUBSCRIBE_URL}}}',
      topicId: t,
      send: true,
    });
    expect(b.error).toBeNull();
    const rec = await until(
      async () => {
        const cur = await w.p.svc.store.broadcasts.get(team(), b.data!.id);
        return cur?.status === 'sent' && cur;
      },
      'the broadcast sent',
      6_000,
    );
    expect(rec.topic_id).toBe(t);
    const emails = (await storedEmails(w.p.svc, team())).filter((e) => e.broadcast_id === b.data!.id);
    expect(emails.map((e) => e.to)).toEqual([[yes]]);
    expect(emails[0].topic_id).toBe(t);
    expect((await w.p.resend.broadcasts.get(b.data!.id)).data).toMatchObject({ topic_id: t });
  });
});

describe('the preference page', () => {
  const links = () => new SignedLinks(w.p.svc.store.secret('links'), w.p.svc.config.public_url);
  const path = (contactId: string) => new URL(links().unsubscribeUrl({ team: team(), contact: contactId })).pathname;
  const form = (p: string, body: string, type = 'application/x-www-form-urlencoded') =>
    fetch(w.p.url + p, { method: 'POST', headers: { 'content-type': type }, body });
  /** The checkboxes of the page: topic id → checked. */
  const boxes = (html: string) =>
    Object.fromEntries([...html.matchAll(/<input type="checkbox" name="topic" value="([0-9a-f-]{36})" id="[^"]+"( checked)?>/g)].map((m) => [m[1], !!m[2]]));

  test("lists the public topics with the contact's state, saves changes, and unsubscribes from everything", async () => {
    const weekly = await topic({ name: 'Weekly', default_subscription: 'opt_in', visibility: 'public', description: 'Our <best> news' });
    const deals = await topic({ name: 'Deals and offers', default_subscription: 'opt_out', visibility: 'public' });
    const secret = await topic({ name: 'Internal', default_subscription: 'opt_in', visibility: 'private' });
    const id = await contact({ email: addr('pref'), topics: [{ id: secret, subscription: 'opt_out' }] });
    const p = path(id);

    const page = await fetch(w.p.url + p);
    expect(page.status).toBe(200);
    // Issue 34: no <base> can redirect the form either.
    expect(page.headers.get('content-security-policy')).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    );
    const html = await page.text();
    expect(html).toContain('Our &lt;best&gt; news');
    expect(html).not.toContain('Internal');
    expect(html).not.toMatch(/<script|src=|href=/);
    const shown = boxes(html);
    expect(shown[weekly]).toBe(true);
    expect(shown[deals]).toBe(false);
    expect(shown[secret]).toBeUndefined();
    // A GET changes nothing.
    expect(await w.p.svc.store.topicChoices.of(team(), id)).toEqual({ [secret]: 'opt_out' });

    // Save: Deals ticked, Weekly not (the private topic's choice stays as it was).
    const saved = await form(p, `action=preferences&topic=${deals}`);
    expect(saved.status).toBe(200);
    const after = await saved.text();
    expect(after).toContain('Your preferences are saved.');
    expect(boxes(after)).toMatchObject({ [weekly]: false, [deals]: true });
    expect(await w.p.svc.store.topicChoices.of(team(), id)).toEqual({ [secret]: 'opt_out', [weekly]: 'opt_out', [deals]: 'opt_in' });
    // The page lists topics by name.
    expect((await topicEvents(id)).at(-1)!.data.topics).toEqual([
      { id: deals, subscription: 'opt_in' },
      { id: weekly, subscription: 'opt_out' },
    ]);
    expect((await w.p.svc.store.contacts.get(team(), id))!.unsubscribed).toBe(false);

    // RFC 8058 one-click (form-encoded or multipart) still unsubscribes from everything.
    const multipart = new FormData();
    multipart.set('List-Unsubscribe', 'One-Click');
    const one = await fetch(w.p.url + p, { method: 'POST', body: multipart });
    expect(await one.text()).toContain('You are unsubscribed');
    expect((await w.p.svc.store.contacts.get(team(), id))!.unsubscribed).toBe(true);
    const again = await (await fetch(w.p.url + p)).text();
    expect(again).toContain('You are unsubscribed from everything.');
    expect(Object.values(boxes(again))).toEqual([false, false]);
    expect(again).not.toContain('Unsubscribe from everything');

    // Saving preferences subscribes the contact again, to what they tick.
    await form(p, `action=preferences&topic=${weekly}`);
    expect((await w.p.svc.store.contacts.get(team(), id))!.unsubscribed).toBe(false);
    expect(await w.p.svc.store.topicChoices.of(team(), id)).toMatchObject({ [weekly]: 'opt_in', [deals]: 'opt_out' });
  });

  test('forged links and unknown topics change nothing', async () => {
    const t = await topic({ name: 'Public', default_subscription: 'opt_out', visibility: 'public' });
    const id = await contact({ email: addr('forged') });
    const before = await snapshot();
    const p = path(id);
    expect((await form(`${p.slice(0, -2)}xx`, `action=preferences&topic=${t}`)).status).toBe(404);
    expect(await snapshot()).toBe(before);
    // A topic that is not on the page (unknown, or private) cannot be ticked; nothing else changes
    // but the public topics the form leaves unticked (opt-in ones become opted out).
    const secret = await topic({ name: 'Private one', default_subscription: 'opt_out' });
    await form(p, `action=preferences&topic=${UNKNOWN}&topic=${secret}`);
    const choices = await w.p.svc.store.topicChoices.of(team(), id);
    expect(choices).not.toHaveProperty(UNKNOWN);
    expect(choices).not.toHaveProperty(secret);
    expect(choices).not.toHaveProperty(t);
    expect(Object.values(choices).every((s) => s === 'opt_out')).toBe(true);
  });
});
