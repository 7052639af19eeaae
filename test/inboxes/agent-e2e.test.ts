// The Inbox Agent in a running Posthorn (docs/api.md §25.10): mail delivered over SMTP to an inbox
// whose agent has instructions ends as a reply draft the model wrote — never a send — with its run
// listed by GET /inboxes/{inbox}/agent/runs; a model that never answers holds up no intake (the
// message is stored and listed while its run waits) and its run times out. The model is a server
// on loopback speaking chat-completions. Inbox search answers from the index (docs/api.md §25.9).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mta, inboundProcessed, type RunningSmtp } from '../helpers/smtp';
import { markVerified } from '../helpers/emails';
import { startMailWorld, type MailWorld } from '../helpers/world';
import { until } from '../helpers/wait';

let w: MailWorld;
let s: RunningSmtp;
let model: ReturnType<typeof Bun.serve>;
let answer: () => Response | Promise<Response> = () => new Response('{}');
let inboxId: string;
const prompts: string[] = [];

beforeAll(async () => {
  model = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const body = (await req.json()) as { messages: { content: string }[] };
      prompts.push(body.messages.map((m) => m.content).join('\n'));
      return answer();
    },
  });
  w = await startMailWorld({ 'agent.url': `http://127.0.0.1:${model.port}/v1`, 'agent.model': 'test-model', 'agent.timeout_ms': 1000 }, { smtp: true });
  s = w.smtp!;
  const d = await s.p.api('POST', '/domains', { body: { name: 'help.test', capabilities: { receiving: 'enabled' } } });
  await markVerified(s.p, s.p.creds.team_id, d.body.id);
  inboxId = (await s.p.resend.inboxes.create({ emailAddress: 'support@help.test' })).data!.id;
});

afterAll(async () => {
  await w.stop();
  model.stop(true);
});

async function deliver(subject: string, text: string): Promise<void> {
  const t = mta(s.starttls);
  try {
    await t.sendMail({ envelope: { from: 'ann@dest.test', to: ['support@help.test'] }, from: 'Ann <ann@dest.test>', to: 'support@help.test', subject, text });
    await inboundProcessed(s.p);
  } finally {
    t.close();
  }
}

const runs = async () => (await s.p.api('GET', `/inboxes/${inboxId}/agent/runs`)).body as { data: Record<string, unknown>[] };

describe('inbox agent, end to end', () => {
  test('no instructions: no run', async () => {
    await deliver('Hello', 'Just saying hi.');
    expect((await runs()).data).toEqual([]);
    expect(prompts).toEqual([]);
  });

  test('a received message becomes a reply draft the model wrote, and its run is listed', async () => {
    const set = await s.p.resend.inboxes.agent.update({ inboxId, instructions: 'Answer questions about orders.', actions: ['draft_reply'] });
    expect(set.error).toBeNull();
    answer = () =>
      Response.json({
        choices: [{ message: { role: 'assistant', content: '{"actions":[{"type":"draft_reply","text":"Your order left today."}]}' } }],
        usage: { prompt_tokens: 500, completion_tokens: 20 },
      });
    const sent = w.sink.messages.length;
    await deliver('Where is order 77?', 'Order 77 has not arrived yet.');
    const run = await until(async () => (await runs()).data.find((r) => r.status !== 'queued' && r.status !== 'running'), 'the run to finish');
    // Read before toMatchObject, which leaves its matchers in the object it was given (Bun).
    const draftId = run.draft_id as string;
    expect(typeof draftId).toBe('string');
    expect(run).toMatchObject({ object: 'inbox_agent_run', status: 'drafted', prompt_tokens: 500, completion_tokens: 20, error: null });
    expect(run.prompt_chars as number).toBeGreaterThan(50);
    expect(prompts.at(-1)).toContain('Order 77 has not arrived yet.');
    const draft = await s.p.resend.inboxes.drafts.get({ inboxId, draftId });
    expect(draft.error).toBeNull();
    expect(draft.data).toMatchObject({ type: 'reply', text: 'Your order left today.', to: ['ann@dest.test'], subject: 'Re: Where is order 77?' });
    // Never sent: nothing more reached the sink.
    expect(w.sink.messages.length).toBe(sent);

    // Search finds the thread by a word of the body and by the sender.
    const found = await s.p.api('GET', `/inboxes/${inboxId}/threads/search?query=arrived`);
    expect(found.body.data.map((t: { subject: string }) => t.subject)).toEqual(['Where is order 77?']);
  });

  test('a model that never answers holds up no intake; its run times out', async () => {
    answer = () => new Promise(() => {});
    await deliver('Refund please', 'I want my money back.');
    // Stored and listed at once, while the model has not answered.
    const threads = await s.p.resend.inboxes.threads.list({ inboxId });
    expect(threads.data?.data.map((t) => t.subject)).toContain('Refund please');
    const run = await until(async () => (await runs()).data.find((r) => r.status === 'timeout'), 'the run to time out');
    expect(run.error).toContain('1000 ms');
    expect(run.draft_id).toBeNull();
  });

  test('runs of another team’s inbox are a 404', async () => {
    const b = await s.p.newTeam();
    const res = await s.p.api('GET', `/inboxes/${inboxId}/agent/runs`, { key: b.api_key });
    expect(res.status).toBe(404);
  });
});
