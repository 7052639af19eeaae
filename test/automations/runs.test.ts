// Automation runs end to end (docs/api.md §24): events sent through the official SDK start runs
// that the back office advances — emails through the sending core to a loopback MTA (template
// rendered with event and contact values, List-Unsubscribe and its one-click unsubscribe,
// suppressions, topics), delays, waits for another event with a timeout and a filter, conditions
// on the payload and on contact properties, contact updates, segment memberships, a contact's
// deletion — each step in the run's history with its times and outcome; system triggers (a contact
// created, added to a segment); stop cancels runs in progress, disabling pauses them and enabling
// resumes them; a step the automation no longer has, or a template unpublished since, fails the run.
import { describe, test, expect, beforeAll, afterAll } from 'bun:test';
import { simpleParser } from 'mailparser';
import type { Running } from '../helpers/posthorn';
import type { Sink } from '../helpers/sink';
import { until } from '../helpers/wait';
import { messageHeader } from '../helpers/emails';
import { startMailWorld, type MailWorld } from '../helpers/world';

let world: MailWorld;
let p: Running;
let sink: Sink;
let seq = 0;
const uniq = (label: string) => `${label}-${process.pid}-${seq++}`;
const address = (label: string) => `${uniq(label)}@dest.test`;

beforeAll(async () => {
  world = await startMailWorld();
  ({ p, sink } = world);
});
afterAll(() => world.stop());

const team = () => p.creds.team_id;

/** A published template: subject `Hello {{{NAME}}}`, html `html`. */
async function template(html = '<p>Hi {{{NAME}}}, plan {{{PLAN}}}</p>') {
  const { data, error } = await p.resend.templates
    .create({
      name: uniq('t'),
      from: 'Acme <hello@example.test>',
      subject: 'Hello {{{NAME}}}',
      html,
      variables: [
        { key: 'NAME', type: 'string', fallbackValue: 'there' },
        { key: 'PLAN', type: 'string', fallbackValue: 'free' },
      ],
    } as never)
    .publish();
  expect(error).toBeNull();
  return data!.id;
}

async function event(schema: Record<string, 'string' | 'number' | 'boolean' | 'date'> | null = null) {
  const name = uniq('evt');
  const { error } = await p.resend.events.create({ name, schema });
  expect(error).toBeNull();
  return name;
}

async function automation(def: { steps: unknown[]; connections: unknown[] }, status: 'enabled' | 'disabled' = 'enabled') {
  const { data, error } = await p.resend.automations.create({ name: uniq('auto'), status, ...def } as never);
  expect(error).toBeNull();
  return data!.id;
}

async function send(name: string, who: { email: string } | { contactId: string }, payload: Record<string, unknown> = {}) {
  const { error } = await p.resend.events.send({ event: name, ...who, payload } as never);
  expect(error).toBeNull();
}

async function runsOf(automationId: string, status?: string) {
  const { data, error } = await p.resend.automations.runs.list({ automationId, ...(status ? { status: status as never } : {}) });
  expect(error).toBeNull();
  return data!.data;
}

async function runOf(automationId: string, runId: string) {
  const { data, error } = await p.resend.automations.runs.get({ automationId, runId });
  expect(error).toBeNull();
  return data!;
}

/** The newest run of the automation, once `n` runs have reached `status`. */
async function finished(automationId: string, status = 'completed', n = 1) {
  await until(async () => (await runsOf(automationId, status)).length >= n, `${n} ${status} run(s)`);
  const [r] = await runsOf(automationId, status);
  return runOf(automationId, r!.id);
}

const trail = (r: { steps: { key: string; status: string }[] }) => r.steps.map((s) => `${s.key}:${s.status}`);

/** Messages the sink got for `to`, once there are `n`. */
async function received(to: string, n = 1) {
  await until(() => sink.to(to).length >= n, `${n} message(s) to ${to}`);
  return sink.to(to);
}

describe('a run through its steps', () => {
  test('send_email with event and contact values, a condition on the payload, a contact update, a segment; one-click unsubscribe works', async () => {
    const tpl = await template();
    const name = await event({ plan: 'string', seats: 'number' });
    const { data: seg } = await p.resend.segments.create({ name: uniq('seg') });
    const email = address('ann');
    await p.resend.contacts.create({ email, firstName: 'Ann' });
    const id = await automation({
      steps: [
        { key: 'start', type: 'trigger', config: { eventName: name } },
        { key: 'is_pro', type: 'condition', config: { type: 'rule', field: 'event.plan', operator: 'eq', value: 'pro' } },
        {
          key: 'welcome',
          type: 'send_email',
          config: { template: { id: tpl, variables: { NAME: { var: 'contact.first_name' }, PLAN: { var: 'event.plan' } } } },
        },
        { key: 'rename', type: 'contact_update', config: { lastName: { var: 'event.plan' } } },
        { key: 'vip', type: 'add_to_segment', config: { segmentId: seg!.id } },
      ],
      connections: [
        { from: 'start', to: 'is_pro' },
        { from: 'is_pro', to: 'welcome', type: 'condition_met' },
        { from: 'welcome', to: 'rename' },
        { from: 'rename', to: 'vip' },
      ],
    });
    const sent = await p.resend.events.send({ event: name, email, payload: { plan: 'pro', seats: '3' } });
    expect(sent.data).toEqual({ object: 'event', event: name });
    const r = await finished(id);
    expect(trail(r)).toEqual(['start:completed', 'is_pro:completed', 'welcome:completed', 'rename:completed', 'vip:completed']);
    // The payload as the schema coerced it: "3" became 3.
    expect(r.steps[0]!.output).toEqual({ event_name: name, payload: { plan: 'pro', seats: 3 } });
    expect(r.steps[1]!.output).toEqual({ result: true });
    expect(r.started_at! <= r.completed_at!).toBe(true);
    for (const s of r.steps) expect(s.started_at! <= s.completed_at!).toBe(true);
    const emailId = r.steps[2]!.output!.email_id as string;

    const [msg] = await received(email);
    const parsed = await simpleParser(msg!.raw);
    expect(parsed.subject).toBe('Hello Ann');
    expect(parsed.html).toContain('plan pro');
    expect(messageHeader(msg!.raw, 'Message-ID')).toContain(emailId);
    expect(messageHeader(msg!.raw, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
    const contact = (await p.resend.contacts.get({ email })).data!;
    expect(contact.last_name).toBe('pro');
    expect((await p.resend.contacts.segments.list({ email })).data!.data.map((s) => s.id)).toContain(seg!.id);
    // The email is an ordinary one: listed, for the contact.
    const stored = (await p.svc.store.emails.get(team(), emailId))!;
    expect(stored.contact_id).toBe(contact.id);
    expect(stored.template_id).toBe(tpl);

    // RFC 8058 one-click on the email's List-Unsubscribe: the contact is unsubscribed.
    const url = new URL(/^<([^>]+)>$/.exec(messageHeader(msg!.raw, 'List-Unsubscribe')!)![1]!);
    const res = await fetch(p.url + url.pathname, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    });
    expect(res.status).toBe(200);
    expect((await p.resend.contacts.get({ email })).data!.unsubscribed).toBe(true);

    // Unsubscribed now: the next run skips its email and goes on (docs/api.md §24.5).
    await send(name, { email }, { plan: 'pro' });
    const again = await finished(id, 'completed', 2);
    expect(trail(again)).toEqual(['start:completed', 'is_pro:completed', 'welcome:skipped', 'rename:completed', 'vip:completed']);
    expect(again.steps[2]!.output).toEqual({ reason: 'unsubscribed' });
    expect(sink.to(email)).toHaveLength(1);
  });

  test('a condition on a contact property branches; {{{RESEND_UNSUBSCRIBE_URL}}} renders; an unknown address becomes a contact', async () => {
    await p.resend.contactProperties.create({ key: uniq('tier').replace(/-/g, '_'), type: 'number' } as never);
    const key = (await p.svc.store.contactProperties.all(team())).at(-1)!.key;
    const big = await template('<p>big <a href="{{{RESEND_UNSUBSCRIBE_URL}}}">unsubscribe</a></p>');
    const small = await template('<p>small</p>');
    const name = await event();
    const id = await automation({
      steps: [
        { key: 'start', type: 'trigger', config: { eventName: name } },
        {
          key: 'tier',
          type: 'condition',
          config: {
            type: 'and',
            rules: [
              { type: 'rule', field: `contact.${key}`, operator: 'gte', value: 10 },
              { type: 'rule', field: 'contact.email', operator: 'ends_with', value: '@dest.test' },
            ],
          },
        },
        { key: 'big', type: 'send_email', config: { template: { id: big }, subject: 'Big' } },
        { key: 'small', type: 'send_email', config: { template: { id: small }, subject: 'Small' } },
      ],
      connections: [
        { from: 'start', to: 'tier' },
        { from: 'tier', to: 'big', type: 'condition_met' },
        { from: 'tier', to: 'small', type: 'condition_not_met' },
      ],
    });
    const rich = address('rich');
    const poor = address('poor');
    await p.resend.contacts.create({ email: rich, properties: { [key]: 50 } });
    await send(name, { email: rich });
    // No contact with this address: one is made when the run starts.
    await send(name, { email: poor });
    await finished(id, 'completed', 2);
    const [bigMsg] = await received(rich);
    const [smallMsg] = await received(poor);
    expect((await simpleParser(bigMsg!.raw)).subject).toBe('Big');
    expect((await simpleParser(smallMsg!.raw)).subject).toBe('Small');
    const html = String((await simpleParser(bigMsg!.raw)).html);
    const link = /href="([^"]+)"/.exec(html)![1]!;
    expect(link).toBe(/^<([^>]+)>$/.exec(messageHeader(bigMsg!.raw, 'List-Unsubscribe')!)![1]!);
    expect((await p.resend.contacts.get({ email: poor })).data!.email).toBe(poor);
  });

  test('a delay holds the run, then it goes on; the history shows the wait', async () => {
    const tpl = await template();
    const name = await event();
    const id = await automation({
      steps: [
        { key: 'start', type: 'trigger', config: { eventName: name } },
        { key: 'wait', type: 'delay', config: { duration: '1 second' } },
        { key: 'mail', type: 'send_email', config: { template: { id: tpl } } },
      ],
      connections: [
        { from: 'start', to: 'wait' },
        { from: 'wait', to: 'mail' },
      ],
    });
    const email = address('delayed');
    await send(name, { email });
    await until(async () => (await runsOf(id)).length === 1, 'the run');
    const waiting = await runOf(id, (await runsOf(id))[0]!.id);
    if (waiting.status === 'running') expect(trail(waiting)).toEqual(['start:completed', 'wait:waiting']);
    const r = await finished(id);
    expect(trail(r)).toEqual(['start:completed', 'wait:completed', 'mail:completed']);
    expect(Date.parse(r.steps[1]!.completed_at!) - Date.parse(r.steps[1]!.started_at!)).toBeGreaterThanOrEqual(1000);
    expect(r.steps[1]!.output).toEqual({ duration: '1 second' });
    await received(email);
  });

  test('wait_for_event: the event (passing the filter) or the timeout decides the path; wait_events values reach the template', async () => {
    const tpl = await template();
    const start = await event();
    const paid = await event({ amount: 'number' });
    const id = await automation({
      steps: [
        { key: 'start', type: 'trigger', config: { eventName: start } },
        {
          key: 'pay',
          type: 'wait_for_event',
          config: { eventName: paid, timeout: '2 seconds', filterRule: { type: 'rule', field: 'event.amount', operator: 'gt', value: 10 } },
        },
        { key: 'thanks', type: 'send_email', config: { template: { id: tpl, variables: { PLAN: { var: `wait_events.${paid}.amount` } } }, subject: 'Thanks' } },
        { key: 'remind', type: 'send_email', config: { template: { id: tpl }, subject: 'Reminder' } },
      ],
      connections: [
        { from: 'start', to: 'pay' },
        { from: 'pay', to: 'thanks', type: 'event_received' },
        { from: 'pay', to: 'remind', type: 'timeout' },
      ],
    });
    const payer = address('payer');
    const waiter = address('waiter');
    await send(start, { email: payer });
    await send(start, { email: waiter });
    await until(async () => {
      const runs = await runsOf(id);
      return runs.length === 2 && (await Promise.all(runs.map((r) => runOf(id, r.id)))).every((r) => trail(r).includes('pay:waiting'));
    }, 'both runs waiting');
    // Too small for the filter: the run keeps waiting; then one that passes.
    await send(paid, { email: payer }, { amount: 5 });
    await send(paid, { email: payer }, { amount: '42' });
    await send(paid, { email: waiter }, { amount: 1 });
    const [thanks] = await received(payer);
    expect((await simpleParser(thanks!.raw)).subject).toBe('Thanks');
    expect((await simpleParser(thanks!.raw)).html).toContain('plan 42');
    const [reminder] = await received(waiter);
    expect((await simpleParser(reminder!.raw)).subject).toBe('Reminder');
    await until(async () => (await runsOf(id, 'completed')).length === 2, 'both runs completed');
    const outcomes = await Promise.all((await runsOf(id)).map(async (r) => (await runOf(id, r.id)).steps.find((s) => s.key === 'pay')!.output!.outcome));
    expect(outcomes.sort()).toEqual(['event_received', 'timeout']);
    expect(sink.to(payer)).toHaveLength(1);
    expect(sink.to(waiter)).toHaveLength(1);
  });

  test('a suppressed address: the email is recorded suppressed; a topic the contact left: the step is skipped', async () => {
    const tpl = await template();
    const name = await event();
    const { data: topic } = await p.resend.topics.create({ name: uniq('news').slice(0, 40), defaultSubscription: 'opt_in' } as never);
    const id = await automation({
      steps: [
        { key: 'start', type: 'trigger', config: { eventName: name } },
        { key: 'mail', type: 'send_email', config: { template: { id: tpl }, topicId: topic!.id } },
      ],
      connections: [{ from: 'start', to: 'mail' }],
    });
    const gone = address('gone');
    await p.api('POST', '/suppressions', { body: { email: gone } });
    await send(name, { email: gone });
    const r = await finished(id);
    const emailId = r.steps[1]!.output!.email_id as string;
    expect((await p.resend.emails.get(emailId)).data!.last_event).toBe('suppressed');

    const out = address('out');
    const { data: c } = await p.resend.contacts.create({ email: out });
    await p.resend.contacts.topics.update({ id: c!.id, topics: [{ id: topic!.id, subscription: 'opt_out' }] });
    await send(name, { contactId: c!.id });
    await until(async () => (await runsOf(id, 'completed')).length === 2, 'the second run');
    const second = await runOf(id, (await runsOf(id))[0]!.id);
    expect(second.steps[1]).toMatchObject({ key: 'mail', status: 'skipped', output: { reason: 'opted_out' } });
    expect(sink.to(out)).toHaveLength(0);
    expect(sink.to(gone)).toHaveLength(0);
  });
});

describe('system triggers', () => {
  test('a contact created, a contact added to a segment (event.segment_id in a condition)', async () => {
    const tpl = await template();
    const { data: seg } = await p.resend.segments.create({ name: uniq('seg') });
    const { data: other } = await p.resend.segments.create({ name: uniq('other') });
    const created = await automation({
      steps: [
        { key: 'start', type: 'trigger', config: { eventName: 'resend:contact.created' } },
        { key: 'hi', type: 'send_email', config: { template: { id: tpl }, subject: 'Created' } },
      ],
      connections: [{ from: 'start', to: 'hi' }],
    });
    const joined = await automation({
      steps: [
        { key: 'start', type: 'trigger', config: { eventName: 'resend:contact.added_to_segment' } },
        { key: 'which', type: 'condition', config: { type: 'rule', field: 'event.segment_id', operator: 'eq', value: seg!.id } },
        { key: 'hi', type: 'send_email', config: { template: { id: tpl }, subject: 'Joined' } },
      ],
      connections: [
        { from: 'start', to: 'which' },
        { from: 'which', to: 'hi', type: 'condition_met' },
      ],
    });
    const email = address('new');
    const { data: c } = await p.resend.contacts.create({ email });
    await received(email);
    expect((await simpleParser(sink.to(email)[0]!.raw)).subject).toBe('Created');
    await p.resend.contacts.segments.add({ contactId: c!.id, segmentId: other!.id });
    await p.resend.contacts.segments.add({ contactId: c!.id, segmentId: seg!.id });
    // Added again: not new, no trigger.
    await p.resend.contacts.segments.add({ contactId: c!.id, segmentId: seg!.id });
    await until(async () => (await runsOf(joined, 'completed')).length === 2, 'two segment runs');
    await p.svc.backOffice.idle('automations');
    await received(email, 2);
    expect(sink.to(email).length).toBe(2);
    expect((await simpleParser(sink.to(email)[1]!.raw)).subject).toBe('Joined');
    expect(await runsOf(created)).toHaveLength(1);
    // Updating the contact creates nothing.
    await p.resend.contacts.update({ email, firstName: 'Changed' });
    await p.svc.backOffice.idle('automations');
    expect(await runsOf(created)).toHaveLength(1);
  });
});

describe('stop, disable, enable, delete, change', () => {
  /** trigger → wait for an event (no timeout) → send. */
  async function waiter(status: 'enabled' | 'disabled' = 'enabled') {
    const tpl = await template();
    const start = await event();
    const go = await event();
    const id = await automation(
      {
        steps: [
          { key: 'start', type: 'trigger', config: { eventName: start } },
          { key: 'hold', type: 'wait_for_event', config: { eventName: go } },
          { key: 'mail', type: 'send_email', config: { template: { id: tpl } } },
        ],
        connections: [
          { from: 'start', to: 'hold' },
          { from: 'hold', to: 'mail', type: 'event_received' },
        ],
      },
      status,
    );
    return { id, start, go };
  }

  test('stop cancels every run in progress (in batches) and starts no new one', async () => {
    const { id, start, go } = await waiter();
    const emails = Array.from({ length: 5 }, () => address('stopped'));
    for (const email of emails) await send(start, { email });
    await until(async () => (await runsOf(id, 'running')).length === 5, 'five waiting runs');
    await p.svc.backOffice.idle('automations');
    const stopped = await p.resend.automations.stop(id);
    expect(stopped.data).toEqual({ object: 'automation', id, status: 'disabled' });
    await until(async () => (await runsOf(id, 'cancelled')).length === 5, 'five cancelled runs');
    const r = await runOf(id, (await runsOf(id))[0]!.id);
    expect(r.status).toBe('cancelled');
    expect(r.completed_at).not.toBeNull();
    expect(trail(r)).toEqual(['start:completed', 'hold:skipped']);
    for (const email of emails) await send(go, { email });
    await send(start, { email: emails[0]! });
    await p.svc.backOffice.idle('automations');
    expect(await runsOf(id)).toHaveLength(5);
    for (const email of emails) expect(sink.to(email)).toHaveLength(0);
    expect((await p.resend.automations.get(id)).data!.status).toBe('disabled');
  });

  test('disabled: a run whose step comes due pauses; enabled again, it resumes', async () => {
    const { id, start, go } = await waiter();
    const email = address('paused');
    await send(start, { email });
    await until(async () => (await runsOf(id, 'running')).length === 1, 'a waiting run');
    await p.svc.backOffice.idle('automations');
    expect((await p.resend.automations.update(id, { status: 'disabled' })).error).toBeNull();
    await send(go, { email });
    await p.svc.backOffice.idle('automations');
    const [paused] = await p.svc.store.automationRuns.all(team()).then((rs) => rs.filter((r) => r.automation_id === id));
    expect(paused!.state).toBe('paused');
    expect(sink.to(email)).toHaveLength(0);
    // Disabled: a new start event starts nothing.
    await send(start, { email });
    await p.svc.backOffice.idle('automations');
    expect(await runsOf(id)).toHaveLength(1);
    expect((await p.resend.automations.update(id, { status: 'enabled' })).error).toBeNull();
    const r = await finished(id);
    expect(trail(r)).toEqual(['start:completed', 'hold:completed', 'mail:completed']);
    await received(email);
  });

  test('delete: runs go in the background; a removed step fails its run; an unpublished template fails the send', async () => {
    const { id, start } = await waiter();
    await send(start, { email: address('deleted') });
    await until(async () => (await runsOf(id)).length === 1, 'a run');
    expect((await p.resend.automations.remove(id)).data).toEqual({ object: 'automation', id, deleted: true });
    await until(async () => (await p.svc.store.automationRuns.all(team())).every((r) => r.automation_id !== id), 'its runs deleted');
    expect((await p.resend.automations.runs.list({ automationId: id })).error).toMatchObject({ statusCode: 404, name: 'not_found' });

    // The wait step is replaced while a run waits at it.
    const w = await waiter();
    const email = address('changed');
    await send(w.start, { email });
    await until(async () => (await runsOf(w.id, 'running')).length === 1, 'a waiting run');
    const tpl = await template();
    const upd = await p.resend.automations.update(w.id, {
      steps: [
        { key: 'start', type: 'trigger', config: { eventName: w.start } },
        { key: 'later', type: 'wait_for_event', config: { eventName: w.go } },
        { key: 'mail', type: 'send_email', config: { template: { id: tpl } } },
      ],
      connections: [
        { from: 'start', to: 'later' },
        { from: 'later', to: 'mail', type: 'event_received' },
      ],
    });
    expect(upd.error).toBeNull();
    await send(w.go, { email });
    const failed = await finished(w.id, 'failed');
    expect(failed.steps.at(-1)).toMatchObject({ status: 'failed', error: { name: 'step_removed' } });

    // A template unpublished after the automation was made: the send step fails, with the sending core's error.
    const t = await template();
    const name = await event();
    const a = await automation({
      steps: [
        { key: 'start', type: 'trigger', config: { eventName: name } },
        { key: 'hold', type: 'delay', config: { duration: '1 second' } },
        { key: 'mail', type: 'send_email', config: { template: { id: t } } },
      ],
      connections: [
        { from: 'start', to: 'hold' },
        { from: 'hold', to: 'mail' },
      ],
    });
    await send(name, { email: address('unpublished') });
    await p.resend.templates.remove(t);
    const broken = await finished(a, 'failed');
    expect(broken.steps.at(-1)).toMatchObject({ key: 'mail', status: 'failed', error: { name: 'validation_error' } });
  });

  test('contact_delete and remove_from_segment (Posthorn, plain HTTP)', async () => {
    const { data: seg } = await p.resend.segments.create({ name: uniq('seg') });
    const name = await event();
    const res = await p.api('POST', '/automations', {
      body: {
        name: uniq('cleanup'),
        status: 'enabled',
        steps: [
          { key: 'start', type: 'trigger', config: { event_name: name } },
          { key: 'leave', type: 'remove_from_segment', config: { segment_id: seg!.id } },
          { key: 'forget', type: 'contact_delete', config: {} },
        ],
        connections: [
          { from: 'start', to: 'leave' },
          { from: 'leave', to: 'forget' },
        ],
      },
    });
    expect(res.status).toBe(201);
    const email = address('forgotten');
    const { data: c } = await p.resend.contacts.create({ email, segments: [{ id: seg!.id }] } as never);
    await send(name, { contactId: c!.id });
    const r = await finished(res.body.id);
    expect(trail(r)).toEqual(['start:completed', 'leave:completed', 'forget:completed']);
    expect(r.steps[1]!.output).toEqual({ segment_id: seg!.id, changed: true });
    expect((await p.resend.contacts.get({ email })).error).toMatchObject({ statusCode: 404 });
  });
});
