import { describe, expect, test } from 'bun:test';
import { validateEmail as validateFields, MAX_ATTACHMENTS_BASE64, type ValidateOptions } from '../../src/sending/validate';
import { validate } from '../../src/schemas/validate';
import { MAX_BUFFER_BYTES, SendEmailRequest } from '../../src/schemas/emails';
import { ApiError } from '../../src/errors';
import { parseAddress } from '../../src/mail/address';
import type { EmailInput } from '../../src/sending/types';

/** A send checked as the sending core checks it: the wire schema's types, then the rest. */
const validateEmail = (input: EmailInput, opts: ValidateOptions = {}) => validateFields(validate(SendEmailRequest, input, 'body'), opts);

const NOW = Date.parse('2025-03-04T09:00:00.000Z');
const base = { from: 'Acme <news@acme.test>', to: 'ann@example.test', subject: 'Hello', html: '<p>Hi</p>' };

/** The error validateEmail throws for `input`, as the API would send it. */
function failure(input: EmailInput) {
  try {
    validateEmail(input, { now: NOW });
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    return (e as ApiError).toJSON();
  }
  throw new Error('expected validateEmail to throw');
}

const invalid = (message: string) => ({ statusCode: 422, name: 'validation_error', message });
const badAttachment = (message: string) => ({ statusCode: 422, name: 'invalid_attachment', message });
const addressMessage = (f: string) =>
  `Invalid \`${f}\` field. The email address needs to follow the \`email@example.com\` or \`Name <email@example.com>\` format.`;

describe('a valid email', () => {
  test('is normalised', () => {
    const v = validateEmail(
      {
        ...base,
        from: '"Acme, Inc." <News@Acme.TEST>',
        to: ['ann@example.test', 'Bob <bob@example.test>'],
        cc: 'cc@example.test',
        bcc: ['b1@example.test', 'b2@example.test'],
        reply_to: 'Support <help@acme.test>',
        text: 'Hi',
        headers: { 'X-Entity-Ref-ID': '123', 'List-Unsubscribe': '<https://acme.test/u>' },
        tags: [{ name: 'category', value: 'confirm_email' }],
        scheduled_at: 'in 1 hour',
        unknown_key: 'ignored',
      },
      { now: NOW },
    );
    expect(v).toEqual({
      from: { name: 'Acme, Inc.', address: 'News@acme.test', domain: 'acme.test' },
      fromText: '"Acme, Inc." <News@acme.test>',
      to: [
        { name: null, address: 'ann@example.test', domain: 'example.test' },
        { name: 'Bob', address: 'bob@example.test', domain: 'example.test' },
      ],
      cc: [{ name: null, address: 'cc@example.test', domain: 'example.test' }],
      bcc: [
        { name: null, address: 'b1@example.test', domain: 'example.test' },
        { name: null, address: 'b2@example.test', domain: 'example.test' },
      ],
      reply_to: [{ name: 'Support', address: 'help@acme.test', domain: 'acme.test' }],
      subject: 'Hello',
      html: '<p>Hi</p>',
      text: 'Hi',
      headers: { 'X-Entity-Ref-ID': '123', 'List-Unsubscribe': '<https://acme.test/u>' },
      tags: [{ name: 'category', value: 'confirm_email' }],
      scheduled_at: '2025-03-04T10:00:00.000Z',
      attachments: [],
      topic_id: null,
    });
  });

  test('fromText reads back as the same address', () => {
    for (const from of [
      'news@acme.test',
      'Acme News <news@acme.test>',
      '"Say \\"hi\\" <now>" <a@acme.test>',
      'Zoë Ä <z@acme.test>',
      '"a\\\\b" <c@acme.test>',
    ]) {
      const v = validateEmail({ ...base, from });
      expect(parseAddress(v.fromText)).toEqual(v.from);
    }
    expect(validateEmail({ ...base, from: '"Say \\"hi\\"" <a@acme.test>' }).fromText).toBe('"Say \\"hi\\"" <a@acme.test>');
  });

  test('optional fields default to empty', () => {
    const v = validateEmail({
      from: 'news@acme.test',
      to: 'ann@example.test',
      subject: '',
      text: 'plain',
      cc: null,
      bcc: [],
      reply_to: '',
      headers: null,
      tags: null,
      scheduled_at: null,
      attachments: null,
      topic_id: null,
      template: null,
    });
    expect(v).toMatchObject({
      fromText: 'news@acme.test',
      subject: '',
      html: null,
      text: 'plain',
      cc: [],
      bcc: [],
      reply_to: [],
      headers: {},
      tags: [],
      scheduled_at: null,
      attachments: [],
    });
  });

  test('text "" is kept (no text part); a past scheduled_at means now', () => {
    const v = validateEmail({ ...base, text: '', scheduled_at: '2025-03-01T00:00:00Z' }, { now: NOW });
    expect(v.text).toBe('');
    expect(v.scheduled_at).toBeNull();
  });

  test('50 recipients in `to`', () => {
    const to = Array.from({ length: 50 }, (_, i) => `r${i}@example.test`);
    expect(validateEmail({ ...base, to }).to).toHaveLength(50);
  });

  test('75 tags of 256 characters', () => {
    const tags = Array.from({ length: 75 }, (_, i) => ({ name: `t${i}`.padEnd(256, '_'), value: 'A-z_0'.padEnd(256, '-') }));
    expect(validateEmail({ ...base, tags }).tags).toHaveLength(75);
    expect(validateEmail({ ...base, tags: [{ name: 'empty', value: '' }] }).tags).toEqual([{ name: 'empty', value: '' }]);
  });

  test('attachments: content or path; content_id wins over inline_content_id', () => {
    const v = validateEmail({
      ...base,
      attachments: [
        { filename: 'a.txt', content: 'aGVsbG8=' },
        { path: 'https://files.acme.test/report.pdf', content_type: 'application/pdf' },
        { content: 'aGk', content_id: 'logo', inline_content_id: 'old' },
        { content: 'aGVs\r\nbG8=', inline_content_id: '<img-1@acme.test>' },
        { content: 'aGk=', path: 'https://files.acme.test/ignored' },
        { content: '' },
      ],
    });
    expect(v.attachments).toEqual([
      { filename: 'a.txt', content: 'aGVsbG8=', path: null, content_type: null, content_id: null },
      { filename: null, content: null, path: 'https://files.acme.test/report.pdf', content_type: 'application/pdf', content_id: null },
      { filename: null, content: 'aGk', path: null, content_type: null, content_id: 'logo' },
      { filename: null, content: 'aGVs\r\nbG8=', path: null, content_type: null, content_id: 'img-1@acme.test' },
      { filename: null, content: 'aGk=', path: null, content_type: null, content_id: null },
      { filename: null, content: '', path: null, content_type: null, content_id: null },
    ]);
  });

  test('attachments up to 40 MB of base64', () => {
    const half = 'A'.repeat(MAX_ATTACHMENTS_BASE64 / 2);
    expect(validateEmail({ ...base, attachments: [{ content: half }, { content: half }] }).attachments).toHaveLength(2);
  });
});

describe('required fields', () => {
  test.each(['from', 'to', 'subject'])('missing %p', (field) => {
    const input: EmailInput = { ...base };
    delete input[field];
    expect(failure(input)).toEqual({ statusCode: 422, name: 'missing_required_field', message: `Missing \`${field}\` field.` });
    expect(failure({ ...base, [field]: null })).toEqual({ statusCode: 422, name: 'missing_required_field', message: `Missing \`${field}\` field.` });
  });

  test('empty `from` or `to` count as missing; the first missing field is reported', () => {
    expect(failure({ ...base, from: '' }).message).toBe('Missing `from` field.');
    expect(failure({ ...base, to: [] }).message).toBe('Missing `to` field.');
    expect(failure({ ...base, to: '' }).message).toBe('Missing `to` field.');
    expect(failure({ html: '<p>x</p>' }).message).toBe('Missing `from` field.');
    expect(failure({ from: base.from, html: '<p>x</p>' }).message).toBe('Missing `to` field.');
  });

  test('neither html nor text', () => {
    expect(failure({ from: base.from, to: base.to, subject: 'x' })).toEqual(invalid('Missing `html` or `text` field.'));
    expect(failure({ ...base, html: '', text: '' })).toEqual(invalid('Missing `html` or `text` field.'));
    expect(failure({ ...base, html: null, text: null })).toEqual(invalid('Missing `html` or `text` field.'));
  });
});

describe('wrong types name the field', () => {
  test.each([
    [{ from: 42 }, invalid('Invalid `from` field: must be a string.')],
    [{ from: ['a@acme.test'] }, invalid('Invalid `from` field: must be a string.')],
    [{ to: 42 }, invalid('Invalid `to` field: must be a string or an array of strings.')],
    [{ to: ['a@example.test', 7] }, invalid('Invalid `to` field: must be a string or an array of strings.')],
    [{ to: { email: 'a@example.test' } }, invalid('Invalid `to` field: must be a string or an array of strings.')],
    [{ subject: 1 }, invalid('Invalid `subject` field: must be a string.')],
    [{ cc: 1 }, invalid('Invalid `cc` field: must be a string or an array of strings.')],
    [{ bcc: [null] }, invalid('Invalid `bcc` field: must be a string or an array of strings.')],
    [{ reply_to: true }, invalid('Invalid `reply_to` field: must be a string or an array of strings.')],
    [{ html: 1 }, invalid('Invalid `html` field: must be a string.')],
    [{ text: ['a'] }, invalid('Invalid `text` field: must be a string.')],
    [{ headers: 'X-A: b' }, invalid('Invalid `headers` field: must be an object of header names and string values.')],
    [{ headers: [['X-A', 'b']] }, invalid('Invalid `headers` field: must be an object of header names and string values.')],
    [{ headers: { 'X-A': 1 } }, invalid('Invalid `headers` field: the value of `X-A` must be a string.')],
    [{ tags: { name: 'a', value: 'b' } }, invalid('Invalid `tags` field: must be an array of `{ name, value }` objects.')],
    [{ tags: ['a'] }, invalid('Invalid `tags[0]` field: must be an object with `name` and `value`.')],
    [{ scheduled_at: 1741078800000 }, invalid('Invalid `scheduled_at` field: must be a string.')],
    [{ attachments: {} }, invalid('Invalid `attachments` field: must be an array.')],
    [{ attachments: ['aGk='] }, invalid('Invalid `attachments[0]` field: must be an object.')],
    [{ attachments: [{ content: 'aGk=', filename: 1 }] }, invalid('Invalid `attachments[0].filename` field: must be a string.')],
    [{ attachments: [{ content: 'aGk=', content_type: 1 }] }, invalid('Invalid `attachments[0].content_type` field: must be a string.')],
    [{ attachments: [{ content: 'aGk=', content_id: 1 }] }, invalid('Invalid `attachments[0].content_id` field: must be a string.')],
    [{ attachments: [{ content: 'aGk=', inline_content_id: 1 }] }, invalid('Invalid `attachments[0].inline_content_id` field: must be a string.')],
  ])('%p', (patch, expected) => {
    expect(failure({ ...base, ...patch })).toEqual(expected);
  });
});

describe('addresses', () => {
  test.each(['from', 'to', 'cc', 'bcc', 'reply_to'])('a malformed %p', (field) => {
    expect(failure({ ...base, [field]: 'not an address' })).toEqual(invalid(addressMessage(field)));
    expect(failure({ ...base, [field]: 'Ann <ann@localhost>' })).toEqual(invalid(addressMessage(field)));
    if (field !== 'from') expect(failure({ ...base, [field]: ['ok@example.test', 'ann@localhost'] })).toEqual(invalid(addressMessage(field)));
  });

  test('more than 50 `to`', () => {
    const to = Array.from({ length: 51 }, (_, i) => `r${i}@example.test`);
    expect(failure({ ...base, to })).toEqual(invalid('Invalid `to` field: must contain at most 50 addresses.'));
  });
});

describe('headers', () => {
  test.each(['From', 'to', 'CC', 'Bcc', 'reply-to', 'Subject'])('%p must be set through its field', (name) => {
    const field = name.toLowerCase().replace('-', '_');
    expect(failure({ ...base, headers: { [name]: 'x' } })).toEqual(
      invalid(`Invalid \`headers\` field: the \`${name}\` header cannot be set here; use the \`${field}\` field.`),
    );
  });

  test.each(['Date', 'message-id', 'MIME-Version', 'content-type', 'Content-Transfer-Encoding', 'DKIM-Signature', 'Return-Path'])('%p is reserved', (name) => {
    expect(failure({ ...base, headers: { 'X-Ok': 'fine', [name]: 'x' } })).toEqual(
      invalid(`Invalid \`headers\` field: the \`${name}\` header is set by Posthorn and cannot be overridden.`),
    );
  });

  test.each(['Resent-To', 'resent-cc', 'RESENT-BCC', 'Resent-From', 'Resent-Date', 'Resent-Message-ID', 'Resent-Sender'])(
    '%p (a Resent-* field) is refused',
    (name) => {
      expect(failure({ ...base, headers: { 'X-Ok': 'fine', [name]: 'victim@elsewhere.test' } })).toEqual(
        invalid(`Invalid \`headers\` field: the \`${name}\` header cannot be set: Resent-* fields are for re-sending (RFC 5322 §3.6.6).`),
      );
    },
  );

  test.each(['X Space', 'X:Colon', 'Zoë', '', 'X-Tab\t', 'X-Line\r\nBcc'])('invalid name %p', (name) => {
    expect(failure({ ...base, headers: { [name]: 'x' } })).toEqual(invalid(`Invalid \`headers\` field: \`${name}\` is not a valid header name.`));
  });

  test.each(['a\r\nBcc: evil@example.test', 'a\nb', 'a\rb', 'a\0b', 'a\x1bb'])('header injection in a value %p', (value) => {
    expect(failure({ ...base, headers: { 'X-A': value } })).toEqual(
      invalid('Invalid `headers` field: the value of `X-A` must not contain line breaks or other control characters.'),
    );
  });

  test('tabs, non-ASCII text and a `__proto__` name pass through as own keys', () => {
    const headers = JSON.parse('{"X-Tab":"a\\tb","X-Name":"Zoë","__proto__":"x"}');
    const v = validateEmail({ ...base, headers });
    expect(Object.keys(v.headers)).toEqual(['X-Tab', 'X-Name', '__proto__']);
    expect(Object.getPrototypeOf(v.headers)).toBe(Object.prototype);
  });
});

describe('tags', () => {
  test('more than 75', () => {
    const tags = Array.from({ length: 76 }, (_, i) => ({ name: `t${i}`, value: 'v' }));
    expect(failure({ ...base, tags })).toEqual(invalid('Invalid `tags` field: must contain at most 75 tags.'));
  });

  const why = 'must only contain ASCII letters, numbers, underscores or dashes, at most 256 characters.';
  test.each([
    [{ name: 'has space', value: 'v' }, 'tags[0].name'],
    [{ name: 'ü', value: 'v' }, 'tags[0].name'],
    [{ name: '', value: 'v' }, 'tags[0].name'],
    [{ name: 'a'.repeat(257), value: 'v' }, 'tags[0].name'],
    [{ name: 7, value: 'v' }, 'tags[0].name'],
    [{ name: 'n', value: 'a.b' }, 'tags[0].value'],
    [{ name: 'n', value: 'b'.repeat(257) }, 'tags[0].value'],
    [{ name: 'n', value: true }, 'tags[0].value'],
  ])('%p', (tag, field) => {
    expect(failure({ ...base, tags: [tag] })).toEqual(invalid(`Invalid \`${field}\` field: ${why}`));
  });

  test('a missing name or value', () => {
    expect(failure({ ...base, tags: [{ name: 'ok', value: 'ok' }, { value: 'v' }] })).toEqual({
      statusCode: 422,
      name: 'missing_required_field',
      message: 'Missing `tags[1].name` field.',
    });
    expect(failure({ ...base, tags: [{ name: 'n' }] }).message).toBe('Missing `tags[0].value` field.');
  });
});

describe('scheduled_at', () => {
  test('bad and too far ahead', () => {
    expect(failure({ ...base, scheduled_at: 'someday' })).toMatchObject({ statusCode: 422, name: 'validation_error' });
    expect(failure({ ...base, scheduled_at: 'someday' }).message).toStartWith('Invalid `scheduled_at` field: it must be an ISO 8601');
    expect(failure({ ...base, scheduled_at: '2025-04-04T09:00:00Z' })).toEqual(
      invalid('Invalid `scheduled_at` field: it must be at most 30 days in the future.'),
    );
  });
});

describe('attachments', () => {
  test('neither content nor path', () => {
    expect(failure({ ...base, attachments: [{ content: 'aGk=' }, { filename: 'a.txt' }] })).toEqual(
      badAttachment('Invalid `attachments[1]` field: an attachment needs `content` or `path`.'),
    );
    expect(failure({ ...base, attachments: [{ content: null, path: null }] }).name).toBe('invalid_attachment');
  });

  test.each(['not base64!', 'aGk=aGk=', 'aGk==x', 'a', 'aGkx=', 'aGk===', 'aGk_', 'aGk-'])('content %p is not base64', (content) => {
    expect(failure({ ...base, attachments: [{ content }] })).toEqual(badAttachment('Invalid `attachments[0].content` field: it is not valid base64.'));
  });

  test('content must be a base64 string or a Buffer', () => {
    for (const content of [42, true, [104, 105]])
      expect(failure({ ...base, attachments: [{ content }] })).toEqual(
        badAttachment('Invalid `attachments[0].content` field: it must be a base64 string or a Buffer (`{"type":"Buffer","data":[…]}`).'),
      );
  });

  test.each(['ftp://files.acme.test/a', 'file:///etc/passwd', 'not a url', '/relative/path'])('path %p', (path) => {
    expect(failure({ ...base, attachments: [{ path }] })).toEqual(badAttachment('Invalid `attachments[0].path` field: it must be an http or https URL.'));
  });

  test('content_type must be a MIME type', () => {
    for (const content_type of ['pdf', 'application/pdf\r\nX-Evil: 1', 'text/ plain', '']) {
      expect(failure({ ...base, attachments: [{ content: 'aGk=', content_type }] })).toEqual(
        invalid('Invalid `attachments[0].content_type` field: must be a MIME type such as `application/pdf`.'),
      );
    }
    expect(validateEmail({ ...base, attachments: [{ content: 'aGk=', content_type: 'text/plain; charset=utf-8' }] }).attachments[0].content_type).toBe(
      'text/plain; charset=utf-8',
    );
  });

  test('content_id: fewer than 128 printable characters', () => {
    const message = (f: string) => `Invalid \`attachments[0].${f}\` field: must be 1 to 127 printable ASCII characters without spaces or angle brackets.`;
    expect(validateEmail({ ...base, attachments: [{ content: 'aGk=', content_id: 'c'.repeat(127) }] }).attachments[0].content_id).toHaveLength(127);
    expect(failure({ ...base, attachments: [{ content: 'aGk=', content_id: 'c'.repeat(128) }] })).toEqual(invalid(message('content_id')));
    expect(failure({ ...base, attachments: [{ content: 'aGk=', inline_content_id: 'two words' }] })).toEqual(invalid(message('inline_content_id')));
    expect(failure({ ...base, attachments: [{ content: 'aGk=', content_id: 'a\r\nb' }] })).toEqual(invalid(message('content_id')));
    expect(failure({ ...base, attachments: [{ content: 'aGk=', content_id: '' }] })).toEqual(invalid(message('content_id')));
  });

  test('more than 40 MB of base64', () => {
    const half = 'A'.repeat(MAX_ATTACHMENTS_BASE64 / 2);
    expect(failure({ ...base, attachments: [{ content: half }, { content: `${half}AAAA` }] })).toEqual(
      invalid('Invalid `attachments` field: attachments may total at most 40 MB after base64 encoding.'),
    );
  });
});

describe('attachments as a Node Buffer (docs/api.md §2 item 16)', () => {
  const buffer = (data: unknown) => ({ type: 'Buffer', data });
  const badBytes = (i = 0) =>
    badAttachment(
      `Invalid \`attachments[${i}].content.data\` field: a Buffer's \`data\` must be an array of bytes (integers from 0 to 255), at most ${MAX_BUFFER_BYTES} of them (40 MB after base64 encoding).`,
    );

  test('what JSON.stringify makes of a Buffer is its bytes', () => {
    const bytes = Buffer.from([0, 1, 104, 105, 127, 128, 254, 255]);
    const wire = JSON.parse(JSON.stringify({ ...base, attachments: [{ filename: 'b.bin', content: bytes }, { content: Buffer.alloc(0) }] }));
    expect(wire.attachments[0].content).toEqual({ type: 'Buffer', data: [0, 1, 104, 105, 127, 128, 254, 255] });
    const [one, empty] = validateEmail(wire).attachments;
    expect(one).toMatchObject({ filename: 'b.bin', path: null });
    expect(Buffer.from(one!.content as Uint8Array).equals(bytes)).toBe(true);
    expect((empty!.content as Uint8Array).byteLength).toBe(0);
  });

  test.each([[[1, 256]], [[-1]], [[1.5]], [['1']], [[null]], [[[1]]], ['aGk='], [{ 0: 1 }], [null], [7]])('data %p is refused', (data) => {
    expect(failure({ ...base, attachments: [{ content: 'aGk=' }, { filename: 'x', content: buffer(data) }] })).toEqual(badBytes(1));
  });

  test('the type must be "Buffer"; type and data are required', () => {
    for (const type of ['buffer', 'Uint8Array', 1, null])
      expect(failure({ ...base, attachments: [{ content: { type, data: [1] } }] })).toEqual(
        badAttachment('Invalid `attachments[0].content.type` field: a Buffer attachment has `"type": "Buffer"`.'),
      );
    const missing = (f: string) => ({ statusCode: 422, name: 'missing_required_field', message: `Missing \`attachments[0].content.${f}\` field.` });
    expect(failure({ ...base, attachments: [{ content: { type: 'Buffer' } }] })).toEqual(missing('data'));
    // What JSON.stringify makes of a Uint8Array: an object of numbered keys, no Buffer.
    expect(failure({ ...base, attachments: [{ content: { 0: 104, 1: 105 } }] })).toEqual(missing('type'));
  });

  test('at most 40 MB after base64 encoding: one Buffer, and all attachments together', () => {
    // A holey array: its length is checked before any byte (and costs no memory here).
    const huge: number[] = [];
    huge.length = MAX_BUFFER_BYTES + 1;
    expect(failure({ ...base, attachments: [{ content: buffer(huge) }] })).toEqual(badBytes());
    // 6 bytes are 8 characters of base64, counted with the base64 attachments.
    const rest = 'A'.repeat(MAX_ATTACHMENTS_BASE64 - 8);
    expect(validateEmail({ ...base, attachments: [{ content: rest }, { content: buffer([1, 2, 3, 4, 5, 6]) }] }).attachments).toHaveLength(2);
    expect(failure({ ...base, attachments: [{ content: rest }, { content: buffer([1, 2, 3, 4, 5, 6, 7]) }] })).toEqual(
      invalid('Invalid `attachments` field: attachments may total at most 40 MB after base64 encoding.'),
    );
  });
});

describe('topic_id', () => {
  test('a topic id is kept (lowercased); null or absent is none; anything else is refused', () => {
    expect(validateEmail({ ...base, topic_id: '0195608A-51E4-70ED-A079-D3BDE8E25D94' }).topic_id).toBe('0195608a-51e4-70ed-a079-d3bde8e25d94');
    expect(validateEmail({ ...base, topic_id: null }).topic_id).toBeNull();
    for (const topic_id of ['weekly', 7, { id: 'x' }])
      expect(failure({ ...base, topic_id })).toEqual(invalid('Invalid `topic_id` field: must be the id of a topic.'));
  });
});
