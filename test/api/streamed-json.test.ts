// The streamed parser of large send bodies (src/api/platform/streamed-json.ts) hands a string's
// plain characters on without the tokenizer when it can: whatever the pieces a body arrives in —
// cut inside escapes, inside \u sequences, right before or after a quote — the value is the one
// JSON.parse makes of the whole text (an attachment's plain base64 as its decoded bytes).
import { describe, test, expect } from 'bun:test';
import { randomBytes } from 'node:crypto';
import { StreamedJson } from '../../src/api/platform/streamed-json';
import { StreamedBase64 } from '../../src/schemas/streamed-base64';

/** The value with each decoded attachment given back as the base64 text it came as. */
const asParsed = (v: unknown): unknown =>
  v instanceof StreamedBase64
    ? [...v.text()].join('')
    : Array.isArray(v)
      ? v.map(asParsed)
      : v && typeof v === 'object'
        ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, asParsed(x)]))
        : v;

/**
 * `left`: what the parser is told of the characters still to come from each piece on (body.ts: the
 * declared length less the bytes before it) — nothing, the truth, or too little (a body longer than
 * it said): the value is the same whatever it is told.
 */
function parsedInPieces(text: string, cut: (at: number) => number, left: 'unknown' | 'exact' | 'short' = 'unknown'): unknown {
  let at = 0;
  const told = left === 'unknown' ? undefined : () => (left === 'exact' ? text.length - at : Math.floor((text.length - at) / 2));
  const json = new StreamedJson('email', 64, told);
  while (at < text.length) {
    const next = Math.min(text.length, at + cut(at));
    json.write(text.slice(at, next));
    at = next;
  }
  return json.end();
}

// A deterministic generator of piece lengths: 1 to `max` characters.
function cuts(seed: number, max: number): (at: number) => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return 1 + (x % max);
  };
}

describe('a body in pieces parses as JSON.parse parses it whole', () => {
  const base64 = randomBytes(300 * 1024).toString('base64');
  const body = JSON.stringify({
    from: 'A "quoted" <a@example.test>',
    to: ['b@example.test'],
    subject: 'Tab\there, newline\nthere, é, \u2028, emoji 😀, back\\slash',
    html: `<p>${'x'.repeat(70_000)}"quoted"\\${'y'.repeat(5_000)}\u0001</p>`,
    attachments: [
      { filename: 'plain.bin', content: base64 },
      { filename: 'lines.b64', content: base64.slice(0, 90_000).replace(/(.{76})/g, '$1\n') },
      { filename: 'short.txt', content: 'aGVsbG8=' },
    ],
  });

  for (const [name, cut] of [
    ['one character at a time near every boundary (pieces of 1–7)', cuts(1, 7)],
    ['pieces of 1–300 characters', cuts(2, 300)],
    ['pieces of 1–70,000 characters', cuts(3, 70_000)],
    ['the whole text at once', () => Number.MAX_SAFE_INTEGER],
  ] as const)
    for (const left of ['unknown', 'exact', 'short'] as const)
      test(`${name}, the length still to come ${left}`, () => {
        const got = parsedInPieces(body, cut, left);
        expect(asParsed(got)).toEqual(JSON.parse(body));
        // Plain base64 arrives decoded, the rest as strings.
        const files = (got as { attachments: { content: unknown }[] }).attachments.map((a) => a.content);
        expect(files[0]).toBeInstanceOf(StreamedBase64);
        expect(Buffer.from((files[0] as StreamedBase64).bytes).equals(Buffer.from(base64, 'base64'))).toBe(true);
        expect(typeof files[1]).toBe('string');
      });

  test('a control character or a bad escape inside a string is refused as JSON.parse refuses it', () => {
    for (const bad of ['{"subject":"a\u0001b"}', '{"subject":"a\\qb"}', '{"subject":"abc']) {
      expect(() => JSON.parse(bad)).toThrow();
      for (const cut of [cuts(4, 3), () => Number.MAX_SAFE_INTEGER]) expect(() => parsedInPieces(bad, cut)).toThrow();
    }
  });
});

test('with the length known, a large attachment is decoded into one buffer of about its size (held once)', () => {
  const file = randomBytes(2 * 1024 * 1024);
  const text = JSON.stringify({ to: 'b@example.test', attachments: [{ filename: 'f.bin', content: file.toString('base64') }], text: 'x'.repeat(100_000) });
  let at = 0;
  const json = new StreamedJson('email', 64, () => text.length - at);
  for (; at < text.length; at += 256 * 1024) json.write(text.slice(at, at + 256 * 1024));
  const content = (json.end() as { attachments: { content: StreamedBase64 }[] }).attachments[0]!.content;
  expect(Buffer.from(content.bytes).equals(file)).toBe(true);
  // The bytes and the room left unused beside them: at most 1 MB more than the file.
  expect(content.bytes.buffer.byteLength).toBeLessThanOrEqual(file.byteLength + 1024 * 1024);
});
