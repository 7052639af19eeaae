// rspamd's client when rspamd fails (src/insights/rspamd.ts): slow, gone, answering an error or
// nonsense — each time an `unavailable` verdict that says why, the failure counted by its reason,
// and nothing thrown. Servers on loopback stand in for rspamd: one that takes the connection and
// never answers, one that answers what the test gives. (A real rspamd: test/api/insights.test.ts.)
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createServer, type Server, type Socket } from 'node:net';
import { readAnswer, Rspamd, type SpamFailure } from '../../src/insights/rspamd';
import { freePort } from '../helpers/posthorn';

const MESSAGE = new TextEncoder().encode('From: a@example.test\r\nTo: b@dest.test\r\nSubject: Hi\r\n\r\nHello\r\n');

let silent: Server;
let silentUrl: string;
const held: Socket[] = [];
let answering: ReturnType<typeof Bun.serve>;
let answer: () => Response = () => Response.json({});

beforeAll(async () => {
  // Takes the connection and the request, and never says a word.
  silent = createServer((s) => {
    held.push(s);
    s.resume();
  });
  await new Promise<void>((ok) => silent.listen(0, '127.0.0.1', ok));
  silentUrl = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
  answering = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => answer() });
});

afterAll(async () => {
  for (const s of held) s.destroy();
  await new Promise((ok) => silent.close(ok));
  answering.stop(true);
});

function client(url: string, timeoutMs = 300) {
  const failures: SpamFailure[] = [];
  return { rspamd: new Rspamd(url, timeoutMs, (why) => failures.push(why)), failures };
}

describe('rspamd failing', () => {
  test('slow: no answer within spam.timeout → unavailable, counted as a timeout', async () => {
    const { rspamd, failures } = client(silentUrl, 300);
    const v = await rspamd.check(MESSAGE, { from: 'a@example.test', rcpt: ['b@dest.test'] });
    expect(v).toMatchObject({ scanner: 'rspamd', status: 'unavailable', score: null, action: null, symbols: [] });
    expect(v.reason).toBe('rspamd did not answer within 300 ms (spam.timeout)');
    expect(failures).toEqual(['timeout']);
  });

  test('gone: nobody listens → unavailable, counted as unreachable', async () => {
    const port = await freePort();
    const { rspamd, failures } = client(`http://127.0.0.1:${port}`);
    const v = await rspamd.check(MESSAGE);
    expect(v.status).toBe('unavailable');
    expect(v.reason).toContain(`rspamd cannot be reached at http://127.0.0.1:${port}`);
    expect(failures).toEqual(['unreachable']);
  });

  const url = () => `http://127.0.0.1:${answering.port}`;
  const cases: [string, () => Response, string][] = [
    ['an error with its message', () => Response.json({ error: 'message too large' }, { status: 500 }), 'rspamd answered 500: message too large'],
    [
      'an error page',
      () => new Response('<h1>Bad gateway</h1>', { status: 502, headers: { 'content-type': 'text/html' } }),
      'rspamd answered 502 without JSON',
    ],
    ['JSON without a score', () => Response.json({ action: 'no action' }), 'rspamd answered without a score'],
    ['a score that is no number', () => Response.json({ score: 'high', action: 'reject' }), 'rspamd answered without a score'],
  ];
  for (const [name, res, reason] of cases)
    test(`${name} → unavailable, counted as an error`, async () => {
      answer = res;
      const { rspamd, failures } = client(url());
      const v = await rspamd.check(MESSAGE);
      expect(v).toMatchObject({ status: 'unavailable', score: null, reason });
      expect(failures).toEqual(['error']);
    });

  test('a good answer is a verdict, nothing counted; the rules heaviest first either way', async () => {
    answer = () =>
      Response.json({
        score: 6.4567,
        required_score: 15,
        action: 'add header',
        symbols: {
          MIME_GOOD: { name: 'MIME_GOOD', score: -0.1, description: 'Known content-type', options: ['text/plain'] },
          SUBJ_ALL_CAPS: { name: 'SUBJ_ALL_CAPS', score: 3 },
          R_DKIM_REJECT: { score: -3.5, options: [1, 'example.test'] },
          ZERO: { name: 'ZERO', score: 0 },
        },
      });
    const { rspamd, failures } = client(url());
    const v = await rspamd.check(MESSAGE);
    expect(failures).toEqual([]);
    expect(v).toMatchObject({ status: 'scored', score: 6.457, required_score: 15, action: 'add header', reason: null });
    expect(v.symbols.map((s) => [s.name, s.score])).toEqual([
      ['R_DKIM_REJECT', -3.5],
      ['SUBJ_ALL_CAPS', 3],
      ['MIME_GOOD', -0.1],
      ['ZERO', 0],
    ]);
    expect(v.symbols[0]!.options).toEqual(['example.test']);
    expect(v.symbols[1]!.description).toBeNull();
  });
});

describe('readAnswer', () => {
  test('nothing that is not an object with a numeric score is a verdict', () => {
    for (const a of [null, 'x', 3, [], {}, { score: null }, { score: Number.NaN }, { score: '1' }]) expect(readAnswer(a)).toBeNull();
    expect(readAnswer({ score: 0 })).toMatchObject({ score: 0, required_score: null, action: null, symbols: [] });
  });
});
