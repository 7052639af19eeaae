// Custom events and automations (docs/api.md §23–§24) through the official SDK against a running
// Posthorn: every method of `resend.events`, `resend.automations` and `resend.automations.runs`,
// its answer's exact shape, and its bad input — the documented error, and nothing changed in the
// store (no definition, automation or trigger written).
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import type { Running } from '../helpers/posthorn';
import { until } from '../helpers/wait';
import { markVerified } from '../helpers/emails';
import { startMailWorld, type MailWorld } from '../helpers/world';

let world: MailWorld;
let p: Running;
let seq = 0;
const uniq = (label: string) => `${label}-${process.pid}-${seq++}`;
const UNKNOWN = '0195608a-51e4-70ed-a079-d3bde8e25d94';
const ISO = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
const UUID = expect.stringMatching(/^[0-9a-f-]{36}$/);

beforeAll(async () => {
  world = await startMailWorld();
  p = world.p;
});
afterAll(() => world.stop());

const team = () => p.creds.team_id;

/** Everything an events or automations request could have written. */
async function snapshot() {
  const s = p.svc.store;
  return JSON.stringify({
    events: await s.customEvents.all(team()),
    automations: await s.automations.all(team()),
    runs: await s.automationRuns.all(team()),
    triggers: await s.automationTriggers.next(1000),
    contacts: (await s.contacts.all(team())).length,
  });
}

/** `call` answers the documented error and writes nothing. */
async function refused(call: () => Promise<{ data: unknown; error: unknown }>, statusCode: number, name: string, message?: string | RegExp) {
  // Work committed before (triggers of accepted sends) is the back office's to take first.
  await p.svc.backOffice.idle('automations');
  const before = await snapshot();
  const { data, error } = await call();
  expect(data).toBeNull();
  expect(error).toMatchObject({ statusCode, name });
  if (message) expect((error as { message: string }).message).toMatch(message);
  expect(await snapshot()).toBe(before);
}

async function template(published = true) {
  const t = p.resend.templates.create({
    name: uniq('t'),
    from: 'Acme <hello@example.test>',
    subject: 'Hello {{{NAME}}}',
    html: '<p>{{{NAME}}} {{{CODE}}}</p>',
    variables: [
      { key: 'NAME', type: 'string', fallbackValue: 'there' },
      { key: 'CODE', type: 'number' },
    ],
  } as never);
  const { data } = published ? await t.publish() : await t;
  return data!.id;
}

async function event(schema: Record<string, 'string' | 'number' | 'boolean' | 'date'> | null = null) {
  const name = uniq('evt');
  expect((await p.resend.events.create({ name, schema })).error).toBeNull();
  return name;
}

describe('resend.events', () => {
  test('create → 201 {object, id}; get by id and by name; list; update the schema; remove', async () => {
    await event();
    const name = uniq('user.created');
    const created = await p.resend.events.create({ name, schema: { plan: 'string', seats: 'number', trial: 'boolean', ends: 'date' } });
    expect(created.error).toBeNull();
    expect(created.data).toEqual({ object: 'event', id: UUID });
    const id = created.data!.id;
    const view = { object: 'event', id, name, schema: { plan: 'string', seats: 'number', trial: 'boolean', ends: 'date' }, created_at: ISO, updated_at: null };
    expect((await p.resend.events.get(id)).data).toEqual(view as never);
    expect((await p.resend.events.get(name)).data).toEqual(view as never);
    // Plain HTTP: 201, and names with characters a path must encode.
    const odd = uniq('a/b c?');
    const res = await p.api('POST', '/events', { body: { name: odd } });
    expect(res.status).toBe(201);
    expect((await p.resend.events.get(odd)).data).toMatchObject({ name: odd, schema: null });

    const list = await p.resend.events.list({ limit: 2 });
    expect(list.error).toBeNull();
    expect(list.data!.object).toBe('list');
    expect(list.data!.has_more).toBe(true);
    expect(list.data!.data.map((e) => e.id)).toEqual([res.body.id, id]);
    expect(list.data!.data[1]).toEqual({ id, name, schema: view.schema, created_at: ISO, updated_at: null } as never);
    expect((await p.resend.events.list({ after: id, limit: 100 })).data!.data.every((e) => e.id < id)).toBe(true);

    const up = await p.resend.events.update(name, { schema: { plan: 'string' } });
    expect(up.data).toEqual({ object: 'event', id });
    expect((await p.resend.events.get(id)).data).toMatchObject({ schema: { plan: 'string' }, updated_at: ISO });
    expect((await p.resend.events.update(id, { schema: null })).error).toBeNull();
    expect((await p.resend.events.get(id)).data!.schema).toBeNull();

    expect((await p.resend.events.remove(name)).data).toEqual({ object: 'event', id, deleted: true });
    expect((await p.resend.events.get(id)).error).toMatchObject({ statusCode: 404, name: 'not_found', message: 'Event not found' });
  });

  test('create: bad input is refused, nothing stored', async () => {
    const taken = await event();
    await refused(() => p.resend.events.create({} as never), 422, 'missing_required_field', 'Missing `name` field.');
    await refused(() => p.resend.events.create({ name: 'resend:contact.created' }), 422, 'validation_error', /resend:/);
    await refused(() => p.resend.events.create({ name: taken }), 422, 'validation_error', /already exists/);
    await refused(() => p.resend.events.create({ name: '' }), 422, 'validation_error');
    await refused(() => p.resend.events.create({ name: 'x'.repeat(257) }), 422, 'validation_error');
    await refused(() => p.resend.events.create({ name: UNKNOWN }), 422, 'validation_error', /UUID/);
    await refused(() => p.resend.events.create({ name: uniq('e'), schema: { plan: 'text' } as never }), 422, 'validation_error', /schema\.plan/);
    await refused(() => p.resend.events.create({ name: uniq('e'), schema: ['string'] as never }), 422, 'validation_error', /schema/);
    await refused(() => p.resend.events.create({ name: uniq('e'), schema: { 'a b': 'string' } }), 422, 'validation_error');
  });

  test('get, list, update, remove: unknown ids and names, bad pagination, missing schema', async () => {
    await refused(() => p.resend.events.get(UNKNOWN), 404, 'not_found', 'Event not found');
    await refused(() => p.resend.events.get('no-such-event'), 404, 'not_found');
    await refused(() => p.resend.events.list({ limit: 0 }), 422, 'validation_error');
    await refused(() => p.resend.events.list({ after: 'nope' }), 422, 'validation_error');
    await refused(() => p.resend.events.update(UNKNOWN, { schema: null }), 404, 'not_found');
    const name = await event();
    await refused(() => p.resend.events.update(name, {} as never), 422, 'missing_required_field', 'Missing `schema` field.');
    await refused(() => p.resend.events.update(name, { schema: { a: 'object' } as never }), 422, 'validation_error');
    await refused(() => p.resend.events.remove('no-such-event'), 404, 'not_found');
  });

  test('remove: allowed while an automation triggers on the event or waits for it (a definition only adds a schema)', async () => {
    const start = await event();
    const later = await event();
    const { data } = await p.resend.automations.create({
      name: uniq('a'),
      steps: [
        { key: 'start', type: 'trigger', config: { eventName: start } },
        { key: 'w', type: 'wait_for_event', config: { eventName: later, timeout: '1 hour' } },
      ],
      connections: [{ from: 'start', to: 'w' }],
    });
    const before = (await p.resend.automations.get(data!.id)).data;
    expect((await p.resend.events.remove(start)).error).toBeNull();
    expect((await p.resend.events.remove(later)).error).toBeNull();
    // The automation still starts on the event and waits for the other: they are names.
    expect((await p.resend.automations.get(data!.id)).data).toEqual(before!);
    await p.resend.automations.remove(data!.id);
  });

  test('send → 202 {object, event}, committed as a trigger; bad input is refused, nothing committed', async () => {
    const name = await event({ seats: 'number', trial: 'boolean', ends: 'date' });
    const { data: c } = await p.resend.contacts.create({ email: `${uniq('c')}@dest.test` });
    const res = await p.api('POST', '/events/send', { body: { event: name, contact_id: c!.id, payload: { seats: '2' } } });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ object: 'event', event: name });
    const sdk = await p.resend.events.send({ event: name, email: 'someone@dest.test', payload: { trial: 'true', ends: '2025-03-04' } });
    expect(sdk.error).toBeNull();
    expect(sdk.data).toEqual({ object: 'event', event: name });

    await refused(() => p.resend.events.send({ contactId: c!.id } as never), 422, 'missing_required_field', 'Missing `event` field.');
    await refused(() => p.resend.events.send({ event: name } as never), 422, 'missing_required_field', /contact_id.*email/);
    await refused(() => p.resend.events.send({ event: name, contactId: c!.id, email: 'a@dest.test' } as never), 422, 'validation_error', /not both/);
    // A name a definition could not have.
    await refused(() => p.resend.events.send({ event: UNKNOWN, contactId: c!.id }), 422, 'validation_error', /UUID/);
    await refused(() => p.resend.events.send({ event: 'send', contactId: c!.id }), 422, 'validation_error', /POST \/events\/send/);
    await refused(() => p.resend.events.send({ event: 'x'.repeat(257), contactId: c!.id }), 422, 'validation_error', /256 characters/);
    await refused(() => p.resend.events.send({ event: 'a\u0001b', contactId: c!.id }), 422, 'validation_error', /control characters/);
    await refused(() => p.resend.events.send({ event: '   ', contactId: c!.id }), 422, 'validation_error', /256 characters/);
    await refused(() => p.resend.events.send({ event: 'resend:contact.created', contactId: c!.id }), 422, 'validation_error', /system events/);
    await refused(() => p.resend.events.send({ event: name, contactId: UNKNOWN }), 422, 'validation_error', /contact_id/);
    await refused(() => p.resend.events.send({ event: name, contactId: 'nope' }), 422, 'validation_error', /contact_id/);
    await refused(() => p.resend.events.send({ event: name, email: 'not an address' }), 422, 'validation_error', /email/);
    await refused(() => p.resend.events.send({ event: name, contactId: c!.id, payload: ['x'] as never }), 422, 'validation_error', /payload/);
    await refused(() => p.resend.events.send({ event: name, contactId: c!.id, payload: { seats: 'many' } }), 422, 'validation_error', /payload\.seats/);
    await refused(() => p.resend.events.send({ event: name, contactId: c!.id, payload: { trial: 'maybe' } }), 422, 'validation_error', /payload\.trial/);
    await refused(() => p.resend.events.send({ event: name, contactId: c!.id, payload: { ends: 'soon' } }), 422, 'validation_error', /payload\.ends/);
    await refused(() => p.resend.events.send({ event: name, contactId: c!.id, payload: { big: 'x'.repeat(70_000) } }), 422, 'validation_error', /64 KB/);
  });

  test('send: an event without a definition → 202, its payload as given; bad input still refused', async () => {
    const name = uniq('never.defined');
    const { data: c } = await p.resend.contacts.create({ email: `${uniq('c')}@dest.test` });
    await p.svc.backOffice.idle('automations');
    const sent = await p.resend.events.send({ event: name, contactId: c!.id, payload: { seats: 'many', nested: { a: [1] } } });
    expect(sent.error).toBeNull();
    expect(sent.data).toEqual({ object: 'event', event: name });
    // Still no definition: sending defines nothing.
    expect((await p.resend.events.get(name)).error).toMatchObject({ statusCode: 404 });
    await refused(() => p.resend.events.send({ event: name, contactId: UNKNOWN }), 422, 'validation_error', /contact_id/);
    await refused(() => p.resend.events.send({ event: name, contactId: c!.id, payload: { big: 'x'.repeat(70_000) } }), 422, 'validation_error', /64 KB/);
  });
});

describe('events without a definition start and wake automations (SDK end to end)', () => {
  test('a trigger and a wait on undefined events run when the events are sent; a definition made later checks payloads', async () => {
    const tpl = await template();
    const start = uniq('signup.undefined');
    const later = uniq('paid.undefined');
    const created = await p.resend.automations.create({
      name: uniq('undefined-events'),
      status: 'enabled',
      steps: [
        { key: 'start', type: 'trigger', config: { eventName: start } },
        { key: 'w', type: 'wait_for_event', config: { eventName: later, timeout: '1 day' } },
        { key: 'mail', type: 'send_email', config: { template: { id: tpl, variables: { CODE: { var: `wait_events.${later}.code` } } } } },
      ],
      connections: [
        { from: 'start', to: 'w' },
        { from: 'w', to: 'mail', type: 'event_received' },
      ],
    } as never);
    expect(created.error).toBeNull();
    const id = created.data!.id;
    // Neither event has a definition, before or after.
    expect((await p.resend.events.get(start)).error).toMatchObject({ statusCode: 404 });
    const to = `${uniq('undefined')}@dest.test`;
    expect((await p.resend.events.send({ event: start, email: to, payload: { plan: 'pro' } })).error).toBeNull();
    await until(async () => (await p.resend.automations.runs.list({ automationId: id, status: 'running' })).data!.data.length === 1, 'a run started');
    const [run] = (await p.resend.automations.runs.list({ automationId: id })).data!.data;
    await until(
      async () => (await p.resend.automations.runs.get({ automationId: id, runId: run!.id })).data!.steps.some((s) => s.key === 'w' && s.status === 'waiting'),
      'the run waiting',
    );
    expect((await p.resend.events.send({ event: later, email: to, payload: { code: 42 } })).error).toBeNull();
    await until(async () => (await p.resend.automations.runs.get({ automationId: id, runId: run!.id })).data!.status === 'completed', 'the run completed');
    const done = (await p.resend.automations.runs.get({ automationId: id, runId: run!.id })).data!;
    expect(done.steps.map((s) => `${s.key}:${s.status}`)).toEqual(['start:completed', 'w:completed', 'mail:completed']);
    expect(done.steps[0]!.output).toEqual({ event_name: start, payload: { plan: 'pro' } });
    const emailId = (done.steps[2]!.output as { email_id: string }).email_id;
    await until(() => world.sink.to(to).length === 1, 'the email delivered');
    expect((await p.resend.emails.get(emailId)).data).toMatchObject({ to: [to], subject: 'Hello there' });
    expect(world.sink.to(to)[0]!.raw.toString()).toContain('42');

    // A definition made now only adds a schema: payloads are checked against it, the automation unchanged.
    expect((await p.resend.events.create({ name: start, schema: { seats: 'number' } })).error).toBeNull();
    await refused(() => p.resend.events.send({ event: start, email: to, payload: { seats: 'many' } }), 422, 'validation_error', /payload\.seats/);
    expect((await p.resend.events.send({ event: start, email: to, payload: { seats: '3' } })).error).toBeNull();
    await until(async () => (await p.resend.automations.runs.list({ automationId: id })).data!.data.length === 2, 'a second run');
    const [second] = (await p.resend.automations.runs.list({ automationId: id })).data!.data;
    expect((await p.resend.automations.runs.get({ automationId: id, runId: second!.id })).data!.steps[0]!.output).toEqual({
      event_name: start,
      payload: { seats: 3 },
    });
    await p.resend.automations.stop(id);
  });
});

describe('resend.automations', () => {
  test('create → 201; get shows steps (config in the API form) and connections; list; duplicate; stop; remove', async () => {
    const tpl = await template();
    const name = await event();
    const { data: seg } = await p.resend.segments.create({ name: uniq('s') });
    const steps = [
      { key: 'start', type: 'trigger', config: { eventName: name } },
      { key: 'wait', type: 'delay', config: { duration: '1 day' } },
      {
        key: 'mail',
        type: 'send_email',
        config: { template: { id: tpl, variables: { CODE: 7, NAME: { var: 'contact.first_name' } } }, subject: 'Hi', replyTo: 'help@example.test' },
      },
      { key: 'tag', type: 'add_to_segment', config: { segmentId: seg!.id } },
    ] as const;
    const connections = [
      { from: 'start', to: 'wait' },
      { from: 'wait', to: 'mail', type: 'default' },
      { from: 'mail', to: 'tag' },
    ] as const;
    const created = await p.resend.automations.create({ name: 'Welcome series', steps: steps as never, connections: connections as never });
    expect(created.error).toBeNull();
    expect(created.data).toEqual({ object: 'automation', id: UUID });
    const id = created.data!.id;
    const got = await p.resend.automations.get(id);
    // `updated_at` is the creation time until the first update (a string in Resend's document).
    expect(got.data!.updated_at).toBe(got.data!.created_at);
    expect(got.data).toEqual({
      object: 'automation',
      id,
      name: 'Welcome series',
      status: 'disabled',
      created_at: ISO,
      updated_at: ISO,
      steps: [
        { key: 'start', type: 'trigger', config: { event_name: name } },
        { key: 'wait', type: 'delay', config: { duration: '1 day' } },
        {
          key: 'mail',
          type: 'send_email',
          config: { template: { id: tpl, variables: { CODE: 7, NAME: { var: 'contact.first_name' } } }, subject: 'Hi', reply_to: 'help@example.test' },
        },
        { key: 'tag', type: 'add_to_segment', config: { segment_id: seg!.id } },
      ],
      connections: [
        { from: 'start', to: 'wait', type: 'default' },
        { from: 'wait', to: 'mail', type: 'default' },
        { from: 'mail', to: 'tag', type: 'default' },
      ],
    } as never);
    // Plain HTTP: 201.
    expect(
      (await p.api('POST', '/automations', { body: { name: 'x', steps: [{ key: 's', type: 'trigger', config: { event_name: name } }], connections: [] } }))
        .status,
    ).toBe(201);

    const list = await p.resend.automations.list({ limit: 1 });
    expect(list.error).toBeNull();
    expect(list.data!.has_more).toBe(true);
    expect(Object.keys(list.data!.data[0]!).sort()).toEqual(['created_at', 'id', 'name', 'status', 'updated_at']);
    const item = (await p.resend.automations.list({ limit: 100 })).data!.data.find((a) => a.id === id)!;
    expect(item).toEqual({ id, name: 'Welcome series', status: 'disabled', created_at: got.data!.created_at, updated_at: got.data!.created_at });

    const up = await p.resend.automations.update(id, { name: 'Renamed', status: 'enabled' });
    expect(up.data).toEqual({ object: 'automation', id });
    const renamed = (await p.resend.automations.get(id)).data!;
    const updatedAt = renamed.updated_at!;
    expect(renamed).toMatchObject({ name: 'Renamed', status: 'enabled', updated_at: ISO });
    expect(updatedAt >= renamed.created_at).toBe(true);
    expect((await p.resend.automations.list({ limit: 100 })).data!.data.find((a) => a.id === id)!.updated_at).toBe(updatedAt);
    expect((await p.resend.automations.list({ status: 'enabled' })).data!.data.map((a) => a.id)).toContain(id);
    expect((await p.resend.automations.list({ status: 'disabled' })).data!.data.map((a) => a.id)).not.toContain(id);

    const dup = await p.resend.automations.duplicate(id);
    expect(dup.data).toEqual({ object: 'automation', id: UUID });
    const copy = (await p.resend.automations.get(dup.data!.id)).data!;
    expect(copy).toMatchObject({ name: 'Renamed (copy)', status: 'disabled', steps: (await p.resend.automations.get(id)).data!.steps });

    expect((await p.resend.automations.stop(id)).data).toEqual({ object: 'automation', id, status: 'disabled' });
    expect((await p.resend.automations.get(id)).data!.status).toBe('disabled');
    expect((await p.resend.automations.remove(id)).data).toEqual({ object: 'automation', id, deleted: true });
    expect((await p.resend.automations.get(id)).error).toMatchObject({ statusCode: 404, name: 'not_found', message: 'Automation not found' });
  });

  describe('bad definitions are refused at create, nothing stored', () => {
    let name: string;
    let tpl: string;
    beforeAll(async () => {
      name = await event();
      tpl = await template();
    });
    const trigger = () => ({ key: 'start', type: 'trigger', config: { eventName: name } });
    const create =
      (steps: unknown[], connections: unknown[] = [], extra: Record<string, unknown> = {}) =>
      () =>
        p.resend.automations.create({ name: uniq('bad'), steps, connections, ...extra } as never);
    const mail = (config: Record<string, unknown> = {}) => ({
      key: 'mail',
      type: 'send_email',
      config: { template: { id: tpl, variables: { CODE: 1 } }, ...config },
    });
    const after = (...keys: string[]) => keys.slice(1).map((k, i) => ({ from: keys[i], to: k }));

    test('missing fields, the trigger', async () => {
      await refused(
        () => p.resend.automations.create({ steps: [trigger()], connections: [] } as never),
        422,
        'missing_required_field',
        'Missing `name` field.',
      );
      // The SDK cannot leave `steps` out (it maps them): plain HTTP can.
      const before = await snapshot();
      const res = await p.api('POST', '/automations', { body: { name: 'x', connections: [] } });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ statusCode: 422, name: 'missing_required_field', message: 'Missing `steps` field.' });
      expect(await snapshot()).toBe(before);
      await refused(create([]), 422, 'validation_error', /steps/);
      await refused(create([mail()]), 422, 'validation_error', /trigger/);
      await refused(create([trigger(), { ...trigger(), key: 'again' }]), 422, 'validation_error', /steps\[1\]\.type/);
      await refused(create([trigger()], [], { status: 'paused' }), 422, 'validation_error', /status/);
      await refused(create([{ key: 'start', type: 'trigger', config: {} }]), 422, 'missing_required_field', 'Missing `steps[0].config.event_name` field.');
      // Any event name, defined or not; but not a `resend:` name other than the system events, nor one no definition could have.
      await refused(
        create([{ key: 'start', type: 'trigger', config: { eventName: 'resend:contact.deleted' } }]),
        422,
        'validation_error',
        /steps\[0\]\.config\.event_name.*resend:contact\.created/,
      );
      await refused(
        create([{ key: 'start', type: 'trigger', config: { eventName: UNKNOWN } }]),
        422,
        'validation_error',
        /steps\[0\]\.config\.event_name.*UUID/,
      );
      await refused(
        create([{ key: 'start', type: 'trigger', config: { eventName: 'x'.repeat(257) } }]),
        422,
        'validation_error',
        /steps\[0\]\.config\.event_name/,
      );
      await refused(create([trigger(), { key: 'start', type: 'delay', config: { duration: '1 day' } }]), 422, 'validation_error', /steps\[1\]\.key/);
      // The SDK maps a type it does not know to null (steps[1] is then no object); plain HTTP sends it.
      await refused(create([trigger(), { key: 'x', type: 'teleport', config: {} }]), 422, 'validation_error', /steps\[1\]/);
      const teleport = await p.api('POST', '/automations', {
        body: {
          name: 'x',
          steps: [
            { key: 's', type: 'trigger', config: { event_name: name } },
            { key: 'x', type: 'teleport', config: {} },
          ],
        },
      });
      expect(teleport.body).toMatchObject({ statusCode: 422, name: 'validation_error', message: expect.stringContaining('steps[1].type') });
    });

    test('steps naming what does not exist: template, variables, segment, topic, property, event', async () => {
      await refused(
        create([trigger(), mail({ template: { id: UNKNOWN } })], after('start', 'mail')),
        422,
        'validation_error',
        /steps\[1\]\.config\.template\.id/,
      );
      const draft = await template(false);
      await refused(
        create([trigger(), mail({ template: { id: draft, variables: { CODE: 1 } } })], after('start', 'mail')),
        422,
        'validation_error',
        /not published/,
      );
      // CODE has no fallback: a value (static or dynamic) is needed.
      await refused(
        create([trigger(), mail({ template: { id: tpl } })], after('start', 'mail')),
        422,
        'missing_required_field',
        'Missing `steps[1].config.template.variables.CODE` field.',
      );
      await refused(
        create([trigger(), mail({ template: { id: tpl, variables: { CODE: 'seven' } } })], after('start', 'mail')),
        422,
        'validation_error',
        /CODE/,
      );
      await refused(create([trigger(), mail({ template: { id: tpl, variables: { CODE: [1] } } })], after('start', 'mail')), 422, 'validation_error', /CODE/);
      await refused(
        create([trigger(), mail({ template: { id: tpl, variables: { CODE: { var: 'order.id' } } } })], after('start', 'mail')),
        422,
        'validation_error',
        /var/,
      );
      await refused(
        create([trigger(), mail({ template: { id: tpl, variables: { CODE: { var: 'contact.shoe_size' } } } })], after('start', 'mail')),
        422,
        'validation_error',
        /shoe_size/,
      );
      await refused(create([trigger(), mail({ topicId: UNKNOWN })], after('start', 'mail')), 422, 'validation_error', /topic_id/);
      await refused(create([trigger(), mail({ from: 'not an address' })], after('start', 'mail')), 422, 'validation_error', /from/);
      await refused(
        create([trigger(), { key: 'seg', type: 'add_to_segment', config: { segmentId: UNKNOWN } }], after('start', 'seg')),
        422,
        'validation_error',
        /segment_id/,
      );
      await refused(create([trigger(), { key: 'seg', type: 'add_to_segment', config: {} }], after('start', 'seg')), 422, 'missing_required_field');
      await refused(
        create([trigger(), { key: 'up', type: 'contact_update', config: { properties: { nope: 1 } } }], after('start', 'up')),
        422,
        'validation_error',
        /properties\.nope/,
      );
      await refused(create([trigger(), { key: 'up', type: 'contact_update', config: {} }], after('start', 'up')), 422, 'validation_error', /contact_update/);
      await refused(
        create([trigger(), { key: 'up', type: 'contact_update', config: { unsubscribed: 'yes' } }], after('start', 'up')),
        422,
        'validation_error',
        /unsubscribed/,
      );
      await refused(
        create([trigger(), { key: 'w', type: 'wait_for_event', config: { eventName: 'send' } }], after('start', 'w')),
        422,
        'validation_error',
        /steps\[1\]\.config\.event_name/,
      );
      await refused(
        create([trigger(), { key: 'c', type: 'condition', config: { type: 'rule', field: 'event.plan', operator: 'like', value: 'x' } }], after('start', 'c')),
        422,
        'validation_error',
        /operator/,
      );
      await refused(
        create([trigger(), { key: 'c', type: 'condition', config: { type: 'rule', field: 'plan', operator: 'eq', value: 'x' } }], after('start', 'c')),
        422,
        'validation_error',
        /field/,
      );
      await refused(
        create([trigger(), { key: 'c', type: 'condition', config: { type: 'rule', field: 'event.n', operator: 'gt', value: 'x' } }], after('start', 'c')),
        422,
        'validation_error',
        /value/,
      );
      await refused(
        create([trigger(), { key: 'c', type: 'condition', config: { type: 'or', rules: [] } }], after('start', 'c')),
        422,
        'validation_error',
        /rules/,
      );
    });

    test('durations', async () => {
      await refused(create([trigger(), { key: 'd', type: 'delay', config: { duration: 'soon' } }], after('start', 'd')), 422, 'validation_error', /duration/);
      await refused(create([trigger(), { key: 'd', type: 'delay', config: { duration: '10' } }], after('start', 'd')), 422, 'validation_error', /duration/);
      await refused(create([trigger(), { key: 'd', type: 'delay', config: { duration: '31 days' } }], after('start', 'd')), 422, 'validation_error', /30 days/);
      await refused(
        create([trigger(), { key: 'w', type: 'wait_for_event', config: { eventName: name, timeout: '5 weeks' } }], after('start', 'w')),
        422,
        'validation_error',
        /30 days/,
      );
    });

    test('connections: unknown steps, wrong types, loops without a wait', async () => {
      const cond = { key: 'c', type: 'condition', config: { type: 'rule', field: 'event.plan', operator: 'exists' } };
      const wait = { key: 'w', type: 'delay', config: { duration: '1 hour' } };
      await refused(create([trigger()], [{ from: 'start', to: 'nowhere' }]), 422, 'validation_error', /connections\[0\]\.to/);
      await refused(create([trigger()], [{ from: 'nowhere', to: 'start' }]), 422, 'validation_error', /connections\[0\]\.from/);
      await refused(create([trigger(), cond], [{ from: 'start', to: 'c', type: 'condition_met' }]), 422, 'validation_error', /connections\[0\]\.type/);
      await refused(
        create(
          [trigger(), cond],
          [
            { from: 'start', to: 'c' },
            { from: 'c', to: 'start', type: 'condition_met' },
          ],
        ),
        422,
        'validation_error',
        /trigger/,
      );
      await refused(
        create(
          [trigger(), cond],
          [
            { from: 'start', to: 'c' },
            { from: 'c', to: 'c' },
          ],
        ),
        422,
        'validation_error',
        /connections\[1\]\.type/,
      );
      await refused(
        create(
          [trigger(), cond, mail()],
          [
            { from: 'start', to: 'c' },
            { from: 'c', to: 'mail', type: 'condition_met' },
            { from: 'c', to: 'mail', type: 'condition_met' },
          ],
        ),
        422,
        'validation_error',
        /already has/,
      );
      // condition → mail → condition: round for ever at once.
      await refused(
        create(
          [trigger(), cond, mail()],
          [
            { from: 'start', to: 'c' },
            { from: 'c', to: 'mail', type: 'condition_met' },
            { from: 'mail', to: 'c' },
          ],
        ),
        422,
        'validation_error',
        /loop \(c → mail → c\)/,
      );
      await refused(
        create(
          [trigger(), { key: 'bye', type: 'contact_delete', config: {} }, mail()],
          [
            { from: 'start', to: 'bye' },
            { from: 'bye', to: 'mail' },
          ],
        ),
        422,
        'validation_error',
        /ends the run/,
      );
      // The same loop through a delay is allowed.
      const ok = await create(
        [trigger(), cond, wait],
        [
          { from: 'start', to: 'c' },
          { from: 'c', to: 'w', type: 'condition_met' },
          { from: 'w', to: 'c' },
        ],
      )();
      expect(ok.error).toBeNull();
      await p.resend.automations.remove(ok.data!.id);
    });

    test('enabled: the from domain must be verified', async () => {
      const other = await p.resend.domains.create({ name: `${uniq('unverified')}.test` });
      expect(other.error).toBeNull();
      await refused(
        create([trigger(), mail({ from: `x@${other.data!.name}` })], after('start', 'mail'), { status: 'enabled' }),
        403,
        'validation_error',
        /not verified/,
      );
      // Disabled, it may wait for the domain.
      const { data, error } = await create([trigger(), mail({ from: `x@${other.data!.name}` })], after('start', 'mail'))();
      expect(error).toBeNull();
      await refused(() => p.resend.automations.update(data!.id, { status: 'enabled' }), 403, 'validation_error', /not verified/);
      await markVerified(p, team(), other.data!.id);
      expect((await p.resend.automations.update(data!.id, { status: 'enabled' })).error).toBeNull();
    });
  });

  test('get, list, update, duplicate, stop, remove: unknown and malformed ids, bad input', async () => {
    const name = await event();
    const { data } = await p.resend.automations.create({
      name: uniq('a'),
      steps: [{ key: 'start', type: 'trigger', config: { eventName: name } }],
      connections: [],
    });
    const id = data!.id;
    for (const call of [
      () => p.resend.automations.get(UNKNOWN),
      () => p.resend.automations.update(UNKNOWN, { name: 'x' }),
      () => p.resend.automations.duplicate(UNKNOWN),
      () => p.resend.automations.stop(UNKNOWN),
      () => p.resend.automations.remove(UNKNOWN),
    ])
      await refused(call, 404, 'not_found', 'Automation not found');
    await refused(() => p.resend.automations.get('nope'), 422, 'invalid_parameter');
    await refused(() => p.resend.automations.list({ status: 'paused' as never }), 422, 'validation_error', /status/);
    await refused(() => p.resend.automations.list({ limit: 101 }), 422, 'validation_error');
    await refused(() => p.resend.automations.update(id, { name: '' }), 422, 'validation_error', /name/);
    await refused(() => p.resend.automations.update(id, { steps: [] }), 422, 'validation_error', /steps/);
    await refused(() => p.resend.automations.update(id, { connections: [{ from: 'start', to: 'ghost' }] }), 422, 'validation_error', /connections\[0\]\.to/);
    await refused(
      () => p.resend.automations.update(id, { steps: [{ key: 'start', type: 'trigger', config: { eventName: 'resend:nope' } }] }),
      422,
      'validation_error',
      /event_name/,
    );
    // An event without a definition is a name like any other.
    expect(
      (await p.resend.automations.update(id, { steps: [{ key: 'start', type: 'trigger', config: { eventName: uniq('never.defined') } }] })).error,
    ).toBeNull();
  });
});

describe('resend.automations.runs', () => {
  test('list (status filters, pagination) and get; unknown automations and runs', async () => {
    const name = await event();
    const later = await event();
    const { data } = await p.resend.automations.create({
      name: uniq('runs'),
      status: 'enabled',
      steps: [
        { key: 'start', type: 'trigger', config: { eventName: name } },
        { key: 'c', type: 'condition', config: { type: 'rule', field: 'event.wait', operator: 'eq', value: true } },
        { key: 'w', type: 'wait_for_event', config: { eventName: later } },
      ],
      connections: [
        { from: 'start', to: 'c' },
        { from: 'c', to: 'w', type: 'condition_met' },
      ],
    });
    const id = data!.id;
    for (const wait of [true, false, false]) await p.resend.events.send({ event: name, email: `${uniq('r')}@dest.test`, payload: { wait } });
    await until(async () => (await p.resend.automations.runs.list({ automationId: id, status: 'completed' })).data!.data.length === 2, 'two completed runs');
    await until(async () => (await p.resend.automations.runs.list({ automationId: id, status: 'running' })).data!.data.length === 1, 'one running run');
    const all = await p.resend.automations.runs.list({ automationId: id });
    expect(all.error).toBeNull();
    expect(all.data!.data).toHaveLength(3);
    expect(all.data!.data[0]).toEqual({
      id: UUID,
      status: expect.any(String),
      started_at: ISO,
      completed_at: expect.anything(),
      created_at: ISO,
      contact_id: UUID,
    } as never);
    const both = await p.resend.automations.runs.list({ automationId: id, status: ['running', 'completed'] });
    expect(both.data!.data).toHaveLength(3);
    const page = await p.resend.automations.runs.list({ automationId: id, limit: 2 });
    expect(page.data!.has_more).toBe(true);
    const next = await p.resend.automations.runs.list({ automationId: id, limit: 2, after: page.data!.data[1]!.id });
    expect(next.data!.data).toHaveLength(1);

    const running = (await p.resend.automations.runs.list({ automationId: id, status: 'running' })).data!.data[0]!;
    const got = await p.resend.automations.runs.get({ automationId: id, runId: running.id });
    expect(got.error).toBeNull();
    expect(got.data).toEqual({
      object: 'automation_run',
      id: running.id,
      status: 'running',
      started_at: ISO,
      completed_at: null,
      created_at: ISO,
      contact_id: UUID,
      steps: [
        {
          key: 'start',
          type: 'trigger',
          status: 'completed',
          output: { event_name: name, payload: { wait: true } },
          error: null,
          started_at: ISO,
          completed_at: ISO,
          created_at: ISO,
        },
        { key: 'c', type: 'condition', status: 'completed', output: { result: true }, error: null, started_at: ISO, completed_at: ISO, created_at: ISO },
        {
          key: 'w',
          type: 'wait_for_event',
          status: 'waiting',
          output: { event_name: later, timeout: null },
          error: null,
          started_at: ISO,
          completed_at: null,
          created_at: ISO,
        },
      ],
    } as never);

    const other = (await p.resend.automations.create({ name: uniq('o'), steps: [{ key: 's', type: 'trigger', config: { eventName: name } }], connections: [] }))
      .data!.id;
    await refused(() => p.resend.automations.runs.get({ automationId: other, runId: running.id }), 404, 'not_found', 'Automation run not found');
    await refused(() => p.resend.automations.runs.get({ automationId: id, runId: UNKNOWN }), 404, 'not_found');
    await refused(() => p.resend.automations.runs.get({ automationId: id, runId: 'nope' }), 422, 'invalid_parameter');
    await refused(() => p.resend.automations.runs.list({ automationId: UNKNOWN }), 404, 'not_found', 'Automation not found');
    await refused(() => p.resend.automations.runs.list({ automationId: id, status: 'skipped' as never }), 422, 'validation_error', /status/);
    await refused(() => p.resend.automations.runs.list({ automationId: id, limit: 0 }), 422, 'validation_error');
    // Stopped: the run waiting is cancelled.
    await p.resend.automations.stop(id);
    await until(async () => (await p.resend.automations.runs.get({ automationId: id, runId: running.id })).data!.status === 'cancelled', 'the run cancelled');
  });
});
