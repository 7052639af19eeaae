// The fingerprint of an idempotent request's body (src/sending/idempotency.ts, docs/api.md §5): a
// hash of the body with its keys sorted. Its text must not change, or a stored fingerprint no longer
// matches a retry of the same request (24 h of keys are in the store across an upgrade).
import { describe, expect, test } from 'bun:test';
import { createHash } from 'node:crypto';
import { fingerprint } from '../../src/sending/idempotency';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('fingerprint', () => {
  test('keys sorted at every level, arrays in order, values as JSON', () => {
    const body = { to: ['b@x.test', 'a@x.test'], from: 'a@x.test', tags: [{ value: 'v', name: 'n' }], n: 1.5, none: null, yes: true };
    expect(fingerprint(body)).toBe(sha256('{"from":"a@x.test","n":1.5,"none":null,"tags":[{"name":"n","value":"v"}],"to":["b@x.test","a@x.test"],"yes":true}'));
  });

  test('an array of plain values — a Buffer’s bytes (§2 item 16) — hashes the same text as one walked element by element', () => {
    const bytes = Array.from({ length: 1000 }, (_, i) => (i * 37) % 256);
    const mixed = [0, -0, 'x"\n', null, true, 2 ** 53];
    expect(fingerprint({ content: { type: 'Buffer', data: bytes } })).toBe(sha256(`{"content":{"data":[${bytes.join(',')}],"type":"Buffer"}}`));
    expect(fingerprint(mixed)).toBe(sha256(`[0,0,"x\\"\\n",null,true,${2 ** 53}]`));
    expect(fingerprint([[1, 2], { a: [3] }])).toBe(sha256('[[1,2],{"a":[3]}]'));
  });
});
