// Canary for what src/mail/headers.ts reaches into mailparser for (docs/ARCHITECTURE.md §5,
// "Where Posthorn reaches into a library"): a MailParser's `libmime` instance, the RFC 2047 decoder
// (with mailparser's charset tables) it applies to the fields it interprets itself, used to decode
// every header field of a received or submitted message the same way. mailparser runs here unpatched.
import { describe, test, expect } from 'bun:test';
import { MailParser } from 'mailparser';

const check = (what: string) =>
  `mailparser changed under src/mail/headers.ts: ${what} — read lib/mail-parser.js of the new version and adapt libmime() (docs/ARCHITECTURE.md §5)`;

describe('mailparser: MailParser#libmime (headers.ts libmime)', () => {
  const libmime = (new MailParser() as unknown as { libmime?: { decodeWords?: (s: string) => string } }).libmime;

  test('a MailParser has a `libmime` with decodeWords', () => {
    expect(typeof libmime?.decodeWords, check('MailParser#libmime.decodeWords is gone')).toBe('function');
  });

  test('decodeWords: the examples of RFC 2047 §8, and a charset beyond Latin-1', () => {
    const decode = (s: string) => libmime?.decodeWords?.(s);
    expect(decode('=?US-ASCII?Q?Keith_Moore?= <moore@cs.utk.edu>'), check('Q encoding')).toBe('Keith Moore <moore@cs.utk.edu>');
    expect(decode('=?ISO-8859-1?Q?Keld_J=F8rn_Simonsen?='), check('ISO-8859-1')).toBe('Keld Jørn Simonsen');
    expect(decode('=?ISO-8859-1?Q?Andr=E9?= Pirard'), check('text after an encoded-word')).toBe('André Pirard');
    expect(decode('(=?ISO-8859-1?Q?a?= =?ISO-8859-1?Q?b?=)'), check('white space between adjacent encoded-words is dropped')).toBe('(ab)');
    expect(decode('(=?ISO-8859-1?Q?a?= b)'), check('white space before text is kept')).toBe('(a b)');
    expect(decode('=?UTF-8?B?w6Q=?='), check('B encoding')).toBe('ä');
    expect(decode('=?ISO-2022-JP?B?GyRCJEYkOSRIGyhC?='), check('charset conversion (ISO-2022-JP)')).toBe('てすと');
  });
});
