// validate() skips TypeBox's Clean when it would change nothing (keepsAsIs): whenever keepsAsIs
// says so, Clean must indeed leave the value as it is; where a key must go, Clean still runs.
import { describe, expect, test } from 'bun:test';
import { Type, type TSchema } from '@sinclair/typebox';
import { Clean } from '@sinclair/typebox/value';
import { keepsAsIs, validate } from '../../src/schemas/validate';
import { SendEmailRequest } from '../../src/schemas/emails';

const Tag = Type.Object({ name: Type.String(), value: Type.String() });
const Shapes = Type.Union([Type.Object({ kind: Type.Literal('a'), a: Type.Number() }), Type.Object({ kind: Type.Literal('b'), b: Type.Array(Tag) })]);
const Loose = Type.Object({ known: Type.String() }, { additionalProperties: Type.String() });
const Table = Type.Record(Type.String({ pattern: '^x' }), Tag);
const Ref = Type.Ref('Tag');

const send = { from: 'a@acme.test', to: ['b@example.test', 'C <c@example.test>'], subject: 'Hi', html: '<p>Hi</p>' };
const cases: [name: string, schema: TSchema, value: unknown, kept: boolean][] = [
  ['a plain send', SendEmailRequest, send, true],
  [
    'a send with tags, headers and an attachment',
    SendEmailRequest,
    { ...send, tags: [{ name: 'n', value: 'v' }], headers: { 'X-A': 'b' }, attachments: [{ filename: 'a.txt', content: 'aGk=' }] },
    true,
  ],
  ['a send with an unknown field', SendEmailRequest, { ...send, extra: 1 }, false],
  // Tags are checked by hand (src/sending/validate.ts): the schema keeps their keys.
  ['a send whose tag has a key more', SendEmailRequest, { ...send, tags: [{ name: 'n', value: 'v', colour: 'red' }] }, true],
  [
    'a send with an attachment as a Buffer',
    SendEmailRequest,
    { ...send, attachments: [{ filename: 'a', content: { type: 'Buffer', data: [104, 105] } }] },
    true,
  ],
  ['a send whose attachment has an unknown field', SendEmailRequest, { ...send, attachments: [{ filename: 'a.txt', content: 'aGk=', x: 1 }] }, false],
  ['a send with an inherited name as a key', SendEmailRequest, { ...send, constructor: 'x' }, false],
  ['a union whose every variant keeps it', Type.Union([Tag, Type.String()]), { name: 'n', value: 'v' }, true],
  // Not told apart without checking each variant, as Clean does: Clean runs.
  ['a union variant another variant would clean', Shapes, { kind: 'b', b: [{ name: 'n', value: 'v' }] }, false],
  ['a union variant with more', Shapes, { kind: 'a', a: 1, b: 2 }, false],
  ['a union variant nested deeper', Shapes, { kind: 'b', b: [{ name: 'n', value: 'v', x: 1 }] }, false],
  ['additional properties', Loose, { known: 'k', other: 'o' }, false],
  ['a record as it is', Table, { x1: { name: 'n', value: 'v' } }, true],
  ['a record key off the pattern', Table, { y1: { name: 'n', value: 'v' } }, false],
  ['a record value with more', Table, { x1: { name: 'n', value: 'v', z: 1 } }, false],
  ['a reference', Ref, { name: 'n', value: 'v' }, false],
  ['a primitive', Tag, 'text', true],
  ['an array where an object is expected', Tag, [1, 2], true],
];

describe('keepsAsIs', () => {
  test.each(cases)('%s', (_name, schema, value, kept) => {
    expect(keepsAsIs(schema, value)).toBe(kept);
    // Sound: when it says nothing goes, Clean (on a copy) agrees.
    if (kept) expect(Clean(schema, structuredClone(value))).toEqual(value);
  });

  test('validate still drops what the schema does not name', () => {
    const out = validate(SendEmailRequest, { ...send, extra: 1, attachments: [{ filename: 'a.txt', content: 'aGk=', x: 1 }] }, 'body') as Record<
      string,
      unknown
    >;
    expect(out.extra).toBeUndefined();
    expect(out.attachments).toEqual([{ filename: 'a.txt', content: 'aGk=' }]);
  });
});
