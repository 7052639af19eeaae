// Resend's MCP server (`resend-mcp`, pinned in package.json) against a running Posthorn (issue 33,
// item 11; README, "Resend's MCP server"): started over stdio on the Bun running the tests with
// RESEND_BASE_URL and RESEND_API_KEY, it lists its tools, and its send, list and domain tools do
// what they say — checked through the API, and the mail delivered to the sink. Every other tool
// the README says works is called once and answers without an error; the ones it says do not are
// refused as it says.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMailWorld, type MailWorld } from '../helpers/world';
import { inboundProcessed, mta } from '../helpers/smtp';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { startResendMcp, type McpClient } from '../helpers/mcp';
import { waitForEmail } from '../helpers/emails';
import { until } from '../helpers/wait';
import type { Running } from '../helpers/posthorn';

let world: MailWorld;
let p: Running;
let mcp: McpClient;
let receiver: Receiver;
let files: ReturnType<typeof Bun.serve>;

/** The tools that need Resend's visual editor (its dashboard's `/editor/*` API), which Posthorn does not serve. */
const EDITOR_TOOLS = ['get-tiptap-json-content', 'connect-to-editor', 'compose-broadcast', 'compose-template'];

/** The tools that answered without an error, and those that answered with one: held against the README at the end. */
const answered = new Set<string>();
const refused = new Set<string>();

/** A tool's answer, error or not. */
async function call(name: string, args: Record<string, unknown>) {
  const r = await mcp.call(name, args);
  (r.isError ? refused : answered).add(name);
  return r;
}

/** A tool's answer, which must not be an error. */
async function ok(name: string, args: Record<string, unknown>): Promise<string> {
  const r = await call(name, args);
  expect({ name, isError: r.isError, text: r.isError ? r.text : '' }).toEqual({ name, isError: false, text: '' });
  return r.text;
}

/** The id a tool's text shows after `label` (`ID: …`, `Domain ID: …`). */
function idAfter(text: string, label = 'ID'): string {
  const m = new RegExp(`(?:^|\\s|\\|)${label}: ([0-9a-f]{8}-[0-9a-f-]{27})`, 'm').exec(text);
  if (!m) throw new Error(`no ${label} in: ${text}`);
  return m[1]!;
}

beforeAll(async () => {
  // Attachments by URL are fetched from this process's loopback server.
  world = await startMailWorld({ 'security.allow_private_networks': true }, { smtp: true });
  p = world.p;
  receiver = await startReceiver();
  files = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('price list', { headers: { 'content-type': 'text/plain' } }) });
  mcp = await startResendMcp(p.url, p.apiKey);
}, 60_000);

afterAll(async () => {
  await mcp?.close();
  files?.stop(true);
  await receiver?.close();
  await world?.stop();
});

test('it runs on Bun over stdio; every tool it lists is named in the README', async () => {
  expect(mcp.server.name).toBe('resend');
  const tools = (await mcp.tools()).map((t) => t.name);
  const readme = readFileSync(join(import.meta.dir, '../../README.md'), 'utf8');
  const section = readme.slice(readme.indexOf("### Resend's MCP server"), readme.indexOf('\n## ', readme.indexOf("### Resend's MCP server")));
  expect(Number(/\d+ of its (\d+) tools/.exec(section)![1])).toBe(tools.length);
  expect(tools.filter((t) => !section.includes(`\`${t}\``))).toEqual([]);
});

describe('domain tools', () => {
  test('create-domain, list-domains, get-domain, update-domain, verify-domain, remove-domain', async () => {
    const created = await ok('create-domain', { name: 'mcp.test', customReturnPath: 'bounces' });
    const id = idAfter(created);
    const domain = (await p.api('GET', `/domains/${id}`)).body;
    expect([domain.name, domain.status]).toEqual(['mcp.test', 'not_started']);
    // The return path it asked for names the SPF records.
    expect(domain.records.filter((r: { record: string }) => r.record === 'SPF').map((r: { name: string }) => r.name)).toEqual(['bounces', 'bounces']);
    // The records it shows are the API's.
    for (const r of domain.records) expect(created).toContain(r.value);
    const list = await ok('list-domains', {});
    for (const d of (await p.api('GET', '/domains')).body.data) expect(list).toContain(`ID: ${d.id}`);
    expect(await ok('get-domain', { id })).toContain('Name: mcp.test');
    await ok('update-domain', { id, openTracking: true, clickTracking: true, tls: 'enforced' });
    const updated = (await p.api('GET', `/domains/${id}`)).body;
    expect([updated.open_tracking, updated.click_tracking]).toEqual([true, true]);
    expect((await p.svc.store.domains.get(p.creds.team_id, id))?.tls).toBe('enforced');
    await ok('verify-domain', { id });
    await until(async () => (await p.api('GET', `/domains/${id}`)).body.status !== 'not_started', 'the verification to run');
    await ok('remove-domain', { id });
    expect((await p.api('GET', `/domains/${id}`)).status).toBe(404);
    // An error of the API is the tool's error, in the API's words.
    const missing = await call('get-domain', { id });
    expect(missing).toEqual({ isError: true, text: expect.stringContaining('Domain not found') });
  }, 30_000);
});

describe('send and list tools', () => {
  test('send-email: the email the API shows, delivered with its headers, tags and an attachment fetched by URL', async () => {
    const text = await ok('send-email', {
      from: 'Acme <hello@example.test>',
      to: ['ann@dest.test'],
      cc: ['cy@dest.test'],
      replyTo: ['support@example.test'],
      subject: 'Sent by resend-mcp',
      text: 'Hello from the MCP server',
      html: '<p>Hello from the MCP server</p>',
      tags: [{ name: 'source', value: 'mcp' }],
      headers: { 'X-Entity-Ref-ID': 'mcp-1' },
      attachments: [{ filename: 'prices.txt', url: `http://127.0.0.1:${files.port}/prices.txt` }],
    });
    const id = JSON.parse(text.slice(text.indexOf('{'))).id as string;
    const email = (await p.api('GET', `/emails/${id}`)).body;
    expect(email).toMatchObject({
      from: 'Acme <hello@example.test>',
      to: ['ann@dest.test'],
      cc: ['cy@dest.test'],
      reply_to: ['support@example.test'],
      subject: 'Sent by resend-mcp',
      text: 'Hello from the MCP server',
      html: '<p>Hello from the MCP server</p>',
      tags: [{ name: 'source', value: 'mcp' }],
    });
    expect((await p.api('GET', `/emails/${id}/attachments`)).body.data.map((a: { filename: string; size: number }) => [a.filename, a.size])).toEqual([
      ['prices.txt', 10],
    ]);
    await waitForEmail(p.svc, { team_id: p.creds.team_id, id }, (e) => e.last_event === 'delivered');
    const delivered = world.sink.messages.find((m) => m.raw.toString().includes('Sent by resend-mcp'))!;
    expect(delivered.raw.toString()).toContain('X-Entity-Ref-ID: mcp-1');
    // The SDK inside names itself: the request log shows who called.
    expect((await p.api('GET', '/logs?limit=100')).body.data.some((l: { user_agent: string }) => l.user_agent?.startsWith('resend-mcp:'))).toBe(true);
    expect(await ok('get-email', { id })).toContain('Sent by resend-mcp');
  }, 30_000);

  test('scheduled in plain English, rescheduled with update-email, canceled with cancel-email', async () => {
    const text = await ok('send-email', { from: 'hello@example.test', to: ['bob@dest.test'], subject: 'Later', text: 'x', scheduledAt: 'tomorrow at 10am' });
    const id = JSON.parse(text.slice(text.indexOf('{'))).id as string;
    const scheduled = (await p.api('GET', `/emails/${id}`)).body;
    expect([scheduled.last_event, new Date(scheduled.scheduled_at).getUTCHours()]).toEqual(['scheduled', 10]);
    const at = new Date(Date.now() + 7_200_000).toISOString();
    await ok('update-email', { id, scheduledAt: at });
    expect((await p.api('GET', `/emails/${id}`)).body.scheduled_at).toBe(at);
    await ok('cancel-email', { id });
    expect((await p.api('GET', `/emails/${id}`)).body.last_event).toBe('canceled');
  }, 20_000);

  test('send-batch-emails, then list-emails shows what the API lists', async () => {
    const text = await ok('send-batch-emails', {
      emails: [
        { from: 'hello@example.test', to: ['b1@dest.test'], subject: 'Batch 1', text: 'one' },
        { from: 'hello@example.test', to: ['b2@dest.test'], subject: 'Batch 2', text: 'two', tags: [{ name: 'n', value: '2' }] },
      ],
    });
    const ids = text
      .slice(text.indexOf('IDs: ') + 5)
      .split(', ')
      .map((s) => s.trim());
    expect(await Promise.all(ids.map(async (id) => (await p.api('GET', `/emails/${id}`)).body.subject))).toEqual(['Batch 1', 'Batch 2']);
    const listed = await ok('list-emails', { limit: 10 });
    for (const e of (await p.api('GET', '/emails?limit=10')).body.data) expect(listed).toContain(`ID: ${e.id}`);
    // Its pagination is the API's.
    const page = await ok('list-emails', { limit: 1, after: ids[1] });
    expect(page).toContain(`ID: ${ids[0]}`);
  }, 20_000);
  test('send-email with attachments by content and by filePath: sent as Node Buffers, stored byte for byte', async () => {
    const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const dir = mkdtempSync(join(tmpdir(), 'mcp-file-'));
    const file = join(dir, 'notes.txt');
    writeFileSync(file, 'notes from a file\n');
    try {
      const text = await ok('send-email', {
        from: 'hello@example.test',
        to: ['buf@dest.test'],
        subject: 'Buffers',
        text: 'x',
        attachments: [
          { filename: 'bytes.bin', content: bytes.toString('base64') },
          { filename: 'notes.txt', filePath: file },
        ],
      });
      const id = JSON.parse(text.slice(text.indexOf('{'))).id as string;
      const list = (await p.api('GET', `/emails/${id}/attachments`)).body.data as { filename: string; download_url: string }[];
      const stored = await Promise.all(
        list.map(async (a) => [a.filename, Buffer.from(await (await fetch(`${p.url}${new URL(a.download_url).pathname}`)).arrayBuffer()).toString('hex')]),
      );
      expect(stored.sort()).toEqual([
        ['bytes.bin', bytes.toString('hex')],
        ['notes.txt', Buffer.from('notes from a file\n').toString('hex')],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 20_000);
});

describe('every other tool', () => {
  test('answers without an error, as the README says; the editor tools are refused', async () => {
    // API keys
    const key = idAfter(await ok('create-api-key', { name: 'mcp key', permission: 'sending_access' }));
    await ok('list-api-keys', {});
    await ok('update-api-key', { id: key, name: 'renamed' });
    await ok('remove-api-key', { id: key });
    // A domain claim: another team's domain, its TXT record published in the test DNS.
    const other = await p.newTeam();
    await p.api('POST', '/domains', { body: { name: 'claimed.test' }, key: other.api_key });
    const claim = await ok('create-domain-claim', { name: 'claimed.test' });
    const placeholder = idAfter(claim, 'Domain ID');
    world.dns.zone.set('claimed.test', 'TXT', [/Value: (posthorn-domain-verification=\S+)/.exec(claim)![1]!]);
    await ok('verify-domain-claim', { id: placeholder });
    await until(async () => (await ok('get-domain-claim', { id: placeholder })).includes('Status: completed'), 'the claim to complete');
    // Emails: share, metrics, attachments of sent and received mail.
    const sent = (await p.api('GET', '/emails?limit=100')).body.data.find((e: { subject: string }) => e.subject === 'Sent by resend-mcp')?.id;
    const email = sent ?? (await p.resend.emails.send({ from: 'hello@example.test', to: 'x@dest.test', subject: 's', text: 't' })).data!.id;
    await ok('share-email', { id: email, expiresIn: '1 hour' });
    await ok('get-email-metrics', { dimensions: ['period'], granularity: 'hourly', metrics: ['sent', 'delivered'] });
    const withFile = (
      await p.resend.emails.send({
        from: 'hello@example.test',
        to: 'x@dest.test',
        subject: 'file',
        text: 't',
        attachments: [{ filename: 'a.txt', content: Buffer.from('a').toString('base64') }],
      })
    ).data!.id;
    const sentFile = idAfter(await ok('list-sent-email-attachments', { emailId: withFile }));
    await ok('get-sent-email-attachment', { emailId: withFile, id: sentFile });
    await p.api('POST', '/domains', { body: { name: 'inbound.test', capabilities: { receiving: 'enabled' } } });
    await mta(world.smtp!.starttls).sendMail({
      from: 'zoe@sender.test',
      to: 'support@inbound.test',
      subject: 'Question',
      text: 'Hi',
      attachments: [{ filename: 'q.txt', content: 'q' }],
    } as never);
    await inboundProcessed(p);
    const received = /\| ID: ([0-9a-f-]{36})/.exec(await ok('list-received-emails', {}))![1]!;
    await ok('get-received-email', { id: received });
    const receivedFile = idAfter(await ok('list-received-email-attachments', { emailId: received }));
    await ok('get-received-email-attachment', { emailId: received, id: receivedFile });
    // Segments, properties, topics, contacts, imports.
    const segment = idAfter(await ok('create-segment', { name: 'Customers' }));
    await ok('list-segments', {});
    await ok('get-segment', { id: segment });
    await ok('update-segment', { id: segment, name: 'Clients' });
    const property = idAfter(await ok('create-contact-property', { key: 'plan', type: 'string', fallbackValue: 'free' }));
    await ok('list-contact-properties', {});
    await ok('get-contact-property', { contactPropertyId: property });
    await ok('update-contact-property', { contactPropertyId: property, fallbackValue: 'basic' });
    const topic = idAfter(await ok('create-topic', { name: 'News', defaultSubscription: 'opt_in', description: 'Monthly' }));
    await ok('list-topics', {});
    await ok('get-topic', { id: topic });
    await ok('update-topic', { id: topic, description: 'Every month' });
    const contact = idAfter(
      await ok('create-contact', {
        email: 'dana@dest.test',
        firstName: 'Dana',
        properties: { plan: 'pro' },
        segmentIds: [segment],
        topics: [{ id: topic, subscription: 'opt_in' }],
      }),
    );
    await ok('list-contacts', { segmentId: segment });
    await ok('get-contact', { email: 'dana@dest.test' });
    await ok('update-contact', { id: contact, lastName: 'Lee', properties: { plan: 'team' } });
    await ok('list-contact-segments', { email: 'dana@dest.test' });
    await ok('remove-contact-from-segment', { contactId: contact, segmentId: segment });
    await ok('add-contact-to-segment', { email: 'dana@dest.test', segmentId: segment });
    await ok('list-contact-topics', { id: contact });
    await ok('update-contact-topics', { email: 'dana@dest.test', topics: [{ id: topic, subscription: 'opt_out' }] });
    const imported = /Import ID: ([0-9a-f-]{36})/.exec(
      await ok('create-contact-import', { content: 'email,first_name\neve@dest.test,Eve\n', filename: 'c.csv', segmentIds: [segment] }),
    )![1]!;
    await ok('get-contact-import', { id: imported });
    await ok('list-contact-imports', {});
    // Broadcasts.
    const broadcast = idAfter(
      await ok('create-broadcast', { name: 'March', segmentId: segment, subject: 'News', from: 'Acme <news@example.test>', html: '<p>Hi</p>', text: 'Hi' }),
    );
    await ok('list-broadcasts', {});
    await ok('get-broadcast', { broadcastId: broadcast });
    await ok('update-broadcast', { broadcastId: broadcast, subject: 'March news', previewText: 'What is new' });
    const copy = /New broadcast ID: ([0-9a-f-]{36})/.exec(await ok('duplicate-broadcast', { broadcastId: broadcast }))![1]!;
    await ok('remove-broadcast', { broadcastId: copy });
    await ok('send-broadcast', { broadcastId: broadcast, scheduledAt: 'in 1 hour' });
    await ok('cancel-broadcast', { broadcastId: broadcast });
    await ok('list-broadcast-clicked-links', { broadcastId: broadcast });
    await ok('list-broadcast-recipients', { broadcastId: broadcast, type: 'sent' });
    // Templates.
    const template = idAfter(
      await ok('create-template', {
        name: 'Receipt',
        html: '<p>Hi {{{NAME}}}</p>',
        subject: 'Receipt',
        variables: [{ key: 'NAME', type: 'string', fallbackValue: 'you' }],
      }),
    );
    await ok('list-templates', {});
    await ok('get-template', { id: template });
    await ok('update-template', { id: template, subject: 'Your receipt' });
    await ok('publish-template', { id: template });
    const templateCopy = /New template ID: ([0-9a-f-]{36})/.exec(await ok('duplicate-template', { id: template }))![1]!;
    await ok('remove-template', { id: templateCopy });
    // Events and automations: a run starts when the event is sent.
    await ok('manage-events', { action: 'create', name: 'user.signup', schema: { plan: 'string' } });
    await ok('manage-events', { action: 'list' });
    await ok('manage-events', { action: 'get', identifier: 'user.signup' });
    await ok('manage-events', { action: 'update', identifier: 'user.signup', schema: { plan: 'string', seats: 'number' } });
    const workflow = {
      steps: [
        { key: 'trigger', type: 'trigger', config: { eventName: 'user.signup' }, next: 'delay_1' },
        { key: 'delay_1', type: 'delay', config: { duration: '1 hour' }, next: null },
      ],
    };
    const automation = idAfter(await ok('create-automation', { name: 'Welcome', status: 'enabled', workflow }));
    await ok('send-event', { event: 'user.signup', email: 'dana@dest.test', payload: { plan: 'pro' } });
    await until(async () => (await p.api('GET', `/automations/${automation}/runs`)).body.data.length > 0, 'a run');
    await ok('get-automation', {});
    await ok('get-automation', { id: automation });
    await ok('update-automation', { id: automation, name: 'Welcome aboard' });
    const run = idAfter(await ok('get-automation-runs', { automationId: automation }));
    await ok('get-automation-runs', { automationId: automation, runId: run });
    const automationCopy = idAfter(await ok('duplicate-automation', { id: automation }));
    await ok('remove-automation', { id: automationCopy });
    await ok('remove-automation', { id: automation });
    await ok('manage-events', { action: 'remove', identifier: 'user.signup' });
    // Suppressions.
    const suppression = idAfter(await ok('add-suppression', { email: 'gone@dest.test' }));
    await ok('list-suppressions', { origin: 'manual' });
    await ok('get-suppression', { idOrEmail: 'gone@dest.test' });
    await ok('remove-suppression', { idOrEmail: suppression });
    await ok('batch-add-suppressions', { emails: ['x1@dest.test', 'x2@dest.test'] });
    await ok('batch-remove-suppressions', { emails: ['x1@dest.test', 'x2@dest.test'] });
    // Webhooks: an event delivered to the receiver, then replayed.
    const webhook = idAfter(await ok('create-webhook', { endpoint: receiver.url, events: ['email.sent'] }));
    await ok('list-webhooks', {});
    await ok('get-webhook', { webhookId: webhook });
    await ok('update-webhook', { webhookId: webhook, events: ['email.sent', 'email.delivered'] });
    await ok('rotate-webhook-signing-secret', { webhookId: webhook });
    await ok('send-email', { from: 'hello@example.test', to: ['hook@dest.test'], subject: 'For the webhook', text: 'x' });
    await until(
      async () => (await p.api('GET', `/webhooks/${webhook}/events`)).body.data.some((e: { status: string }) => e.status === 'success'),
      'a delivered event',
    );
    const event = /ID: (msg_\w+)/.exec(await ok('list-webhook-events', { webhookId: webhook }))![1]!;
    await ok('get-webhook-event', { webhookId: webhook, eventId: event });
    await until(async () => !(await call('replay-webhook-event', { webhookId: webhook, eventId: event })).isError, 'a replay');
    await ok('list-webhook-event-attempts', { webhookId: webhook, eventId: event });
    await ok('remove-webhook', { webhookId: webhook });
    // Logs and OAuth grants (Posthorn issues none: the list is empty, a revoke is Resend's 404).
    await ok('get-log', { logId: idAfter(await ok('list-logs', {})) });
    await ok('list-oauth-grants', {});
    expect(await call('revoke-oauth-grant', { id: '0195608a-51e4-70ed-a079-d3bde8e25d94' })).toEqual({
      isError: true,
      text: expect.stringContaining('OAuth grant not found'),
    });
    // The editor: Resend's dashboard API, not served.
    for (const [name, args] of [
      ['get-tiptap-json-content', { resource_type: 'broadcast', resource_id: broadcast }],
      ['connect-to-editor', { resource_type: 'template', resource_id: template }],
      ['compose-broadcast', { broadcastId: broadcast, content: { type: 'doc', content: [] } }],
      ['compose-template', { id: template, content: { type: 'doc', content: [] } }],
    ] as const) {
      expect(EDITOR_TOOLS).toContain(name);
      expect([name, await call(name, args)]).toEqual([name, { isError: true, text: expect.stringContaining('404') }]);
    }
    await ok('disconnect-from-editor', {});
    // And what is left to remove.
    await ok('remove-contact', { email: 'dana@dest.test' });
    await ok('remove-contact-property', { contactPropertyId: property });
    await ok('remove-topic', { id: topic });
    await ok('remove-segment', { id: segment });
  }, 60_000);
});

test("the README's lists are what the calls above found", () => {
  const readme = readFileSync(join(import.meta.dir, '../../README.md'), 'utf8');
  const start = readme.indexOf("### Resend's MCP server");
  const works = readme.slice(readme.indexOf('What works', start), readme.indexOf('What does not', start));
  const doesNot = readme.slice(readme.indexOf('What does not', start), readme.indexOf('\n### ', start + 1));
  const names = (text: string) => [...text.matchAll(/`([a-z]+(?:-[a-z]+)+)`/g)].map((m) => m[1]!);
  // revoke-oauth-grant answers Resend's own 404 for a grant that does not exist: Posthorn issues none.
  expect(names(works).filter((t) => !answered.has(t) && t !== 'revoke-oauth-grant')).toEqual([]);
  expect(names(works).length).toBe(Number(/(\d+) of its \d+ tools/.exec(works)![1]));
  // disconnect-from-editor answers, having no connection to end; the editor tools are refused (the
  // paragraph also names the tools to use instead).
  const unworkable = names(doesNot).filter((t) => !names(works).includes(t) && t !== 'disconnect-from-editor');
  expect(unworkable.sort()).toEqual([...EDITOR_TOOLS].sort());
  for (const t of EDITOR_TOOLS) expect([t, refused.has(t), answered.has(t)]).toEqual([t, true, false]);
});
