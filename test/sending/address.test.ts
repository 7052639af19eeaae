import { describe, expect, test } from 'bun:test';
import { parseAddress, parseEmail, formatAddress } from '../../src/mail/address';
import { addressField, addressList, invalidAddressMessage } from '../../src/sending/address';
import { ApiError } from '../../src/errors';

describe('parseAddress', () => {
  test('bare addresses', () => {
    expect(parseAddress('ann@example.test')).toEqual({ name: null, address: 'ann@example.test', domain: 'example.test' });
    expect(parseAddress('  a.b+tag@Mail.Example.TEST ')).toEqual({ name: null, address: 'a.b+tag@mail.example.test', domain: 'mail.example.test' });
    expect(parseAddress("o'brien_{x}@sub-1.example.test")?.domain).toBe('sub-1.example.test');
  });

  test('named addresses', () => {
    expect(parseAddress('Acme <news@acme.test>')).toEqual({ name: 'Acme', address: 'news@acme.test', domain: 'acme.test' });
    expect(parseAddress('Acme News<news@acme.test>')?.name).toBe('Acme News');
    expect(parseAddress('Ann Example (Sales) <ann@acme.test>')?.name).toBe('Ann Example (Sales)');
    expect(parseAddress('Zoë Ä <z@acme.test>')?.name).toBe('Zoë Ä');
    expect(parseAddress('<news@acme.test>')).toEqual({ name: null, address: 'news@acme.test', domain: 'acme.test' });
  });

  test('quoted display names', () => {
    expect(parseAddress('"Acme, Inc." <news@acme.test>')?.name).toBe('Acme, Inc.');
    expect(parseAddress('"Say \\"hi\\" <now>" <a@acme.test>')?.name).toBe('Say "hi" <now>');
    expect(parseAddress('"" <a@acme.test>')?.name).toBeNull();
  });

  test('internationalised domains become lowercase ASCII', () => {
    expect(parseAddress('info@Bücher.test')).toEqual({ name: null, address: 'info@xn--bcher-kva.test', domain: 'xn--bcher-kva.test' });
  });

  test.each([
    'a@b',
    'ann@localhost',
    'ann',
    '@example.test',
    'ann@',
    'ann@@example.test',
    'ann smith@example.test',
    'ann@exa mple.test',
    'ann@example.test.',
    'ann@.example.test',
    'ann@example..test',
    'ann@-example.test',
    'ann@example.123',
    'ann@[127.0.0.1]',
    'ann@1.2.3.4',
    '.ann@example.test',
    'ann.@example.test',
    'a..nn@example.test',
    '"ann"@example.test',
    'zoë@example.test',
    'ann@exam_ple.test',
    'Ann <ann@example.test',
    'Ann ann@example.test>',
    'Ann <ann@example.test> trailing',
    'Ann < ann@example.test>',
    'Ann <ann@b>',
    'Ann "Q" <ann@example.test>',
    '"Unclosed <ann@example.test>',
    'Ann <<ann@example.test>>',
    'a@example.test, b@example.test',
    `${'x'.repeat(65)}@example.test`,
    `ann@${'a'.repeat(64)}.test`,
    `ann@${Array(60).fill('abcd').join('.')}.test`,
    '',
    '   ',
  ])('rejects %p', (text) => {
    expect(parseAddress(text)).toBeNull();
  });
});

describe('formatAddress', () => {
  test('quotes names with specials; plain names stay plain', () => {
    expect(formatAddress({ name: 'Acme, Inc.', address: 'a@acme.test', domain: 'acme.test' })).toBe('"Acme, Inc." <a@acme.test>');
    expect(formatAddress({ name: 'Ann Example', address: 'a@acme.test', domain: 'acme.test' })).toBe('Ann Example <a@acme.test>');
    expect(formatAddress({ name: null, address: 'a@acme.test', domain: 'acme.test' })).toBe('a@acme.test');
  });

  // Found by test/mail/address-fuzz.test.ts: a quoted name keeps a tab, a control character or
  // edge spaces, which were written back unquoted — text that parseAddress refused or read as
  // another name (the API's `from` of a stored email, an SMTP submission's From).
  test.each(['"Ann\tExample" <a@acme.test>', '"Ann\u0000" <a@acme.test>', '"  Ann " <a@acme.test>', '" " <a@acme.test>'])(
    '%p formats back to itself',
    (text) => {
      const a = parseAddress(text)!;
      expect(a.name).toBe(text.slice(1, text.lastIndexOf('"')));
      expect(parseAddress(formatAddress(a))).toEqual(a);
    },
  );
});

describe('parseEmail', () => {
  test('takes bare addresses only', () => {
    expect(parseEmail('gone@example.test')?.address).toBe('gone@example.test');
    expect(parseEmail('Gone <gone@example.test>')).toBeNull();
    expect(parseEmail(' gone@example.test')).toBeNull();
  });
});

describe('field helpers', () => {
  test('the message names the field', () => {
    expect(invalidAddressMessage('from')).toBe(
      'Invalid `from` field. The email address needs to follow the `email@example.com` or `Name <email@example.com>` format.',
    );
  });

  test('addressField throws a 422 validation_error naming the field', () => {
    expect(addressField('from', 'Acme <a@acme.test>').address).toBe('a@acme.test');
    try {
      addressField('cc', 'nope');
      throw new Error('not thrown');
    } catch (e) {
      expect(e).toBeInstanceOf(ApiError);
      expect((e as ApiError).toJSON()).toEqual({ statusCode: 422, name: 'validation_error', message: invalidAddressMessage('cc') });
    }
  });

  test('addressList takes a string or an array', () => {
    expect(addressList('to', 'a@x.test').map((a) => a.address)).toEqual(['a@x.test']);
    expect(addressList('to', ['a@x.test', 'B <b@x.test>']).map((a) => a.name)).toEqual([null, 'B']);
    expect(() => addressList('reply_to', ['a@x.test', 'bad'])).toThrow(invalidAddressMessage('reply_to'));
  });
});
