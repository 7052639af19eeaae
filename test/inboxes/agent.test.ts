// The Inbox Agent's worker (src/inboxes/agent.ts) over a real store, asking a model through the
// real chat-completions client (src/inboxes/chat-completions.ts) of a server on loopback that
// speaks the protocol — answering what each test gives, slowly, or not at all. The inbox part is
// stood in for by `inboxes` below (the wiring to the real one: test/api/inbox-agent.test.ts).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type AgentRunRec, type Store } from '../../src/store';
import { ChatCompletions, readAnswer, type ChatMessage } from '../../src/inboxes/chat-completions';
import { InboxAgent, MAX_ATTEMPTS, queueAgentRun, type AgentDraft, type AgentInboxes } from '../../src/inboxes/agent';
import { agentPrompt, readDecision, type AgentSettings, type Proposed } from '../../src/inboxes/agent-prompt';

const TEAM = 'team-1';
let dir: string;
let store: Store;
let server: ReturnType<typeof Bun.serve>;
let url: string;
/** What the model answers (a chat-completions body), and what it was asked. */
let reply: (body: { model: string; messages: ChatMessage[] }) => Response | Promise<Response>;
const asked: { auth: string | null; body: { model: string; messages: ChatMessage[] } }[] = [];

const completion = (content: string) =>
  Response.json({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 321, completion_tokens: 54, total_tokens: 375 },
  });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'agent-'));
  store = await openStore({ dataDir: dir, retentionDays: 30, holdMs: 0 });
  server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      if (new URL(req.url).pathname !== '/v1/chat/completions') return new Response('not found', { status: 404 });
      const body = (await req.json()) as { model: string; messages: ChatMessage[] };
      asked.push({ auth: req.headers.get('authorization'), body });
      return reply(body);
    },
  });
  url = `http://127.0.0.1:${server.port}/v1`;
});

afterAll(async () => {
  server.stop(true);
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const SETTINGS: AgentSettings = {
  instructions: 'Answer questions about orders politely. Archive newsletters.',
  tone: 'concise_professional',
  actions: ['draft_reply', 'archive'],
  address: 'support@acme.test',
  name: 'Acme Support',
};

/** The inbox part, stood in: one inbox, one thread, drafts and actions recorded. */
function standIn(settings: AgentSettings | null = SETTINGS, folder = 'inbox') {
  const drafts: AgentDraft[] = [];
  const applied: Proposed[] = [];
  const inboxes: AgentInboxes = {
    settings: async () => settings,
    thread: async () => ({
      folder,
      subject: 'Where is my order?',
      messages: [
        {
          id: 'msg-1',
          from: 'Dana <dana@client.test>',
          to: ['support@acme.test'],
          cc: [],
          subject: 'Where is my order?',
          text: 'Order 1234 has not arrived.',
          created_at: '2026-11-27T10:00:00.000Z',
          direction: 'inbound',
        },
      ],
    }),
    async createDraft(_team: string, d: AgentDraft) {
      drafts.push(d);
      return `draft-${drafts.length}`;
    },
    async applyAction(_tx, _team, _thread, a) {
      applied.push(a);
      return true;
    },
  };
  return { inboxes, drafts, applied };
}

async function run(opts: { inboxes: AgentInboxes; budget?: number; timeoutMs?: number; model?: 'none' }, count = 1): Promise<AgentRunRec[]> {
  const model = opts.model === 'none' ? null : new ChatCompletions({ url, model: 'local-model', apiKey: 'sk-test', timeoutMs: opts.timeoutMs ?? 5000 });
  const agent = new InboxAgent({ store, inboxes: opts.inboxes, model, config: { timeout_ms: opts.timeoutMs ?? 5000, daily_budget: opts.budget ?? 0 } });
  const queued: AgentRunRec[] = [];
  await store.write(async (tx) => {
    for (let i = 0; i < count; i++) queued.push(queueAgentRun(tx, { team: TEAM, inbox_id: 'inbox-1', thread_id: 'thread-1', email_id: 'msg-1' }));
  });
  agent.start();
  agent.kick();
  await agent.idle();
  await agent.stop();
  return Promise.all(queued.map(async (r) => (await store.agentRuns.get(TEAM, r.id))!));
}

describe('inbox agent', () => {
  test('a reply the model writes becomes a draft of the new message, never a send; the run records its size and tokens', async () => {
    asked.length = 0;
    reply = () => completion('```json\n{"actions": [{"type": "draft_reply", "text": "Hello Dana, order 1234 left today."}]}\n```');
    const { inboxes, drafts } = standIn();
    const [r] = await run({ inboxes });
    expect(r).toMatchObject({ status: 'drafted', draft_id: 'draft-1', attempts: 1, prompt_tokens: 321, completion_tokens: 54, due: null, error: null });
    expect(r!.actions).toEqual([{ type: 'draft_reply', applied: true, detail: null }]);
    expect(r!.prompt_chars).toBeGreaterThan(SETTINGS.instructions!.length);
    expect(r!.duration_ms).toBeGreaterThanOrEqual(0);
    expect(drafts).toEqual([
      { inbox_id: 'inbox-1', thread_id: 'thread-1', reply_to_email_id: 'msg-1', to: null, subject: null, text: 'Hello Dana, order 1234 left today.' },
    ]);
    // What the model was asked: the operator's model and key, the instructions and tone, the thread.
    expect(asked).toHaveLength(1);
    expect(asked[0]!.auth).toBe('Bearer sk-test');
    expect(asked[0]!.body.model).toBe('local-model');
    const [system, user] = asked[0]!.body.messages;
    expect(system!.role).toBe('system');
    expect(system!.content).toContain(SETTINGS.instructions!);
    expect(system!.content).toContain('concise and professional');
    expect(system!.content).toContain('"type": "draft_reply"');
    expect(system!.content).not.toContain('forward_thread');
    expect(user!.content).toContain('Order 1234 has not arrived.');
    expect(user!.content).toContain('(NEW)');
  });

  test('actions the inbox does not allow are dropped; other allowed ones are carried out through the inbox part', async () => {
    reply = () => completion('{"actions": [{"type": "forward_thread", "to": "boss@acme.test", "text": "fyi"}, {"type": "archive"}]}');
    const { inboxes, drafts, applied } = standIn();
    const [r] = await run({ inboxes });
    expect(r).toMatchObject({ status: 'no_action', draft_id: null, actions: [{ type: 'archive', applied: true, detail: null }] });
    expect(r!.error).toContain('1 action of the answer dropped');
    expect(drafts).toEqual([]);
    expect(applied).toEqual([{ type: 'archive' }]);
  });

  test('a model that does not answer in time: the run is recorded as timed out, nothing made', async () => {
    reply = () => new Promise(() => {});
    const { inboxes, drafts } = standIn();
    const [r] = await run({ inboxes, timeoutMs: 300 });
    expect(r).toMatchObject({ status: 'timeout', draft_id: null, due: null });
    expect(r!.error).toContain('300 ms');
    expect(drafts).toEqual([]);
  });

  test('a model answering an error, or not JSON, or unreachable: failed, and said why', async () => {
    reply = () => new Response('{"error": "model not found"}', { status: 404 });
    let [r] = await run({ inboxes: standIn().inboxes });
    expect(r).toMatchObject({ status: 'failed' });
    expect(r!.error).toContain('404');
    reply = () => completion('I would reply politely.');
    [r] = await run({ inboxes: standIn().inboxes });
    expect(r!.status).toBe('failed');
    expect(r!.error).toContain('not {"actions"');
    const gone = url;
    url = 'http://127.0.0.1:9/v1';
    [r] = await run({ inboxes: standIn().inboxes });
    url = gone;
    expect(r).toMatchObject({ status: 'failed' });
    expect(r!.error).toContain('cannot be reached');
  });

  test("the team's daily budget: runs past it are recorded over budget and the model is not asked", async () => {
    // Runs of earlier tests today count too: a budget of what they spent plus two.
    const spent = (await store.agentRuns.page(TEAM, {}, null)).data.filter((x) => ['drafted', 'no_action', 'timeout', 'failed'].includes(x.status)).length;
    asked.length = 0;
    reply = () => completion('{"actions": []}');
    const runs = await run({ inboxes: standIn().inboxes, budget: spent + 2 }, 3);
    expect(runs.map((x) => x.status).sort()).toEqual(['no_action', 'no_action', 'over_budget']);
    expect(asked).toHaveLength(2);
    expect(runs.find((x) => x.status === 'over_budget')!.error).toContain('agent.daily_budget');
  });

  test('nothing to ask about: the agent off, no instructions, a thread in spam', async () => {
    asked.length = 0;
    expect((await run({ inboxes: standIn().inboxes, model: 'none' }))[0]).toMatchObject({ status: 'skipped', error: 'the agent is off (agent.url is unset)' });
    expect((await run({ inboxes: standIn({ ...SETTINGS, instructions: null }).inboxes }))[0]!.status).toBe('skipped');
    expect((await run({ inboxes: standIn(SETTINGS, 'spam').inboxes }))[0]).toMatchObject({ status: 'skipped', error: 'the thread is in spam' });
    expect((await run({ inboxes: standIn(null).inboxes }))[0]).toMatchObject({ status: 'skipped', error: 'the inbox is gone' });
    expect(asked).toHaveLength(0);
  });

  test('a run a crash cut short is taken again when its lease ends, and failed after the last attempt', async () => {
    reply = () => completion('{"actions": []}');
    let id = '';
    await store.write(async (tx) => {
      const r = queueAgentRun(tx, { team: TEAM, inbox_id: 'inbox-1', thread_id: 'thread-1', email_id: 'msg-1' });
      // As a claim left it, MAX_ATTEMPTS times over, before a crash: running, its lease over.
      tx.agentDue.remove(r.due!, TEAM, r.id);
      tx.agentRuns.put({ ...r, status: 'running', attempts: MAX_ATTEMPTS, due: 1000 });
      tx.agentDue.add(1000, TEAM, r.id);
      id = r.id;
    });
    const agent = new InboxAgent({ store, inboxes: standIn().inboxes, model: null, config: { timeout_ms: 5000, daily_budget: 0 } });
    agent.start();
    await agent.idle();
    await agent.stop();
    expect(await store.agentRuns.get(TEAM, id)).toMatchObject({ status: 'failed', due: null });
    expect(await store.agentDue.nextDue()).toBeNull();
  });
});

describe('prompt and answer', () => {
  test('the newest messages that fit, oldest first, the new one always', () => {
    const long = 'x'.repeat(7000);
    const messages = Array.from({ length: 8 }, (_, i) => ({
      id: `m${i}`,
      from: 'a@client.test',
      to: ['support@acme.test'],
      cc: [],
      subject: 'Re: help',
      text: `message ${i} ${long}`,
      created_at: `2026-11-2${i}T00:00:00.000Z`,
      direction: 'inbound' as const,
    }));
    const [, user] = agentPrompt(SETTINGS, { subject: 'help', messages }, 'm7');
    expect(user!.content).toContain('message 7');
    expect(user!.content).toContain('[… cut]');
    expect(user!.content).not.toContain('message 0 ');
    expect(user!.content).toMatch(/\(\d older messages not shown\)/);
    expect(user!.content.indexOf('message 5')).toBeLessThan(user!.content.indexOf('message 7'));
  });

  test('an answer is read as data: fields checked, one action of each type, only allowed ones', () => {
    const allowed = ['draft_reply', 'forward_thread', 'add_labels', 'assign_thread'] as const;
    expect(
      readDecision(
        JSON.stringify({
          actions: [
            { type: 'draft_reply', text: '  Hi  ' },
            { type: 'draft_reply', text: 'second' },
            { type: 'forward_thread', to: 'not an address' },
            { type: 'add_labels', labels: ['Billing', 'billing', 3, 'Billing'] },
            { type: 'assign_thread', to: 'ann@acme.test' },
            { type: 'move_to_trash' },
            null,
          ],
        }),
        allowed,
      ),
    ).toEqual({
      actions: [
        { type: 'draft_reply', text: 'Hi' },
        { type: 'add_labels', labels: ['Billing', 'billing'] },
        { type: 'assign_thread', to: 'ann@acme.test' },
      ],
      dropped: 4,
    });
    expect(readDecision('{"actions": "none"}', allowed)).toHaveProperty('error');
  });

  test('a chat-completions answer: the first choice, token counts when given', () => {
    expect(readAnswer(JSON.stringify({ choices: [{ message: { content: 'x' } }] }))).toEqual({
      ok: true,
      content: 'x',
      prompt_tokens: null,
      completion_tokens: null,
    });
    expect(readAnswer('<html>')).toMatchObject({ ok: false, failure: 'error' });
    expect(readAnswer('{"choices": []}')).toMatchObject({ ok: false, failure: 'error' });
  });
});
