// The dashboard's live stream (docs/api.md §19.15): a signed-in session hears its team's changes —
// an email's events as delivery records them (on the back office's thread), domains, broadcasts —
// and nothing of another team's; it is a session route like the others (cookie and CSRF header);
// a client that does not read is told to resync once its bounded buffer is full.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startPosthorn, type Running } from '../helpers/posthorn';
import { verifiedDomain } from '../helpers/emails';
import { openLive, signIn, type LiveEvent } from '../helpers/live';
import { until } from '../helpers/wait';
import { BUFFER, LiveFeed } from '../../src/events/live';
import type { Change } from '../../src/store';

const FROM = 'Acme <hello@example.test>';
const isChange = (topic: string, id?: string) => (e: LiveEvent) => e.event === 'change' && e.data.topic === topic && (id === undefined || e.data.id === id);

describe('GET /auth/session/events', () => {
  let p: Running;
  beforeAll(async () => {
    p = await startPosthorn();
    await verifiedDomain(p, 'example.test');
  });
  afterAll(() => p.stop());

  test('is a session route: no CSRF header, no stream; an API key cannot open it', async () => {
    const s = await signIn(p);
    const bare = await fetch(`${p.url}/auth/session/events`, { headers: { cookie: s.cookie } });
    expect(bare.status).toBe(401);
    const keyed = await fetch(`${p.url}/auth/session/events`, { headers: { authorization: `Bearer ${p.apiKey}` } });
    expect(keyed.status).not.toBe(200);
  });

  test("a session hears its email go from queued to delivered (recorded on the back office's thread), and another team hears none of it", async () => {
    const mine = await openLive(p.url, await signIn(p));
    const other = await p.newTeam();
    const theirs = await openLive(p.url, await signIn(p, other));
    try {
      expect(mine.events[0]?.event ?? 'ready').toBe('ready');
      const { data } = await p.resend.emails.send({ from: FROM, to: 'delivered@resend.dev', subject: 'Live', html: '<p>Hi</p>' });
      const id = data!.id;
      await mine.seen(isChange('email', id), 'the email change');
      await until(async () => (await p.resend.emails.get(id)).data?.last_event === 'delivered', 'delivery');
      // Tenancy: the other team's stream, which hears its own team's domain created after the
      // email, heard nothing of the first team.
      const r = await p.api('POST', '/domains', { body: { name: 'other.test' }, key: other.api_key });
      expect(r.status).toBe(201);
      await theirs.seen(isChange('domain', r.body.id), "the other team's domain");
      expect(theirs.events.some((e) => e.data.id === id)).toBe(false);
      expect(mine.events.some((e) => e.data.id === r.body.id)).toBe(false);
    } finally {
      mine.close();
      theirs.close();
    }
  });

  test("every state change of the email reaches the stream: sent and delivered (the back office's thread) after queued", async () => {
    const mine = await openLive(p.url, await signIn(p));
    try {
      const { data } = await p.resend.emails.send({ from: FROM, to: 'delivered@resend.dev', subject: 'Live 2', html: '<p>Hi</p>' });
      const id = data!.id;
      // queued (this thread), sent and delivered (the back office's): each a change of the email.
      await until(() => mine.events.filter(isChange('email', id)).length >= 2, 'changes from both threads');
      await until(async () => (await p.resend.emails.get(id)).data?.last_event === 'delivered', 'delivery');
    } finally {
      mine.close();
    }
  });
});

describe('LiveFeed', () => {
  const change = (team: string, i: number): Change => ({ team, topic: 'email', id: `e${i}` });
  const session = (team: string, id: string) => ({ team, id, live: async () => true });

  async function readAll(body: ReadableStream<Uint8Array>): Promise<string> {
    let text = '';
    const decoder = new TextDecoder();
    for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) text += decoder.decode(chunk);
    return text;
  }

  test('a client that reads nothing holds at most BUFFER changes, is told to resync, and its stream ends', async () => {
    const feed = new LiveFeed();
    const slow = feed.open(session('t1', 's1'));
    for (let i = 0; i < BUFFER * 10; i++) {
      feed.publish([change('t1', i)]);
      expect(slow.waiting).toBeLessThanOrEqual(BUFFER);
    }
    expect(feed.streams).toBe(0);
    const text = await readAll(slow.body);
    expect(text).toContain('event: ready');
    expect(text).toContain('event: resync\ndata: {"reason":"buffer_full"}');
    // What the stream's own queue held before the buffer filled: a few frames, no more.
    expect(text.split('event: change').length - 1).toBeLessThanOrEqual(8);
    feed.close();
  });

  test('changes go only to their team; the same record changed twice before the client reads is one change', async () => {
    const feed = new LiveFeed();
    const a = feed.open(session('ta', 'sa'));
    const b = feed.open(session('tb', 'sb'));
    for (let i = 0; i < 20; i++) feed.publish([change('ta', 1), change('ta', 2)]);
    feed.publish([change('tb', 3)]);
    feed.close();
    const [ta, tb] = await Promise.all([readAll(a.body), readAll(b.body)]);
    expect(ta).toContain('"id":"e1"');
    expect(ta).toContain('"id":"e2"');
    expect(ta).not.toContain('"id":"e3"');
    expect(tb).toContain('"id":"e3"');
    expect(tb).not.toContain('"id":"e1"');
  });

  test('a session holds a few streams at most: the oldest is replaced', async () => {
    const feed = new LiveFeed();
    const streams = Array.from({ length: 7 }, () => feed.open(session('t', 's')));
    expect(feed.streams).toBe(6);
    expect(streams[0]!.closed).toBe(true);
    feed.close();
  });
});
