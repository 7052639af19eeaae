import { describe, expect, test } from 'bun:test';
import { simpleParser, type AddressObject, type ParsedMail } from 'mailparser';
import { composeMime, type ComposeOptions } from '../../src/sending/mime';
import { validateEmail } from '../../src/sending/validate';
import type { EmailInput, ResolvedAttachment } from '../../src/sending/types';

const DATE = new Date('2025-03-04T09:43:52.000Z');
const MESSAGE_ID = '<0195608a-51e4-70ed-a079-d3bde8e25d94@acme.test>';
// A 1×1 transparent PNG.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

async function compose(input: EmailInput, opts: Partial<ComposeOptions> = {}) {
  const email = validateEmail({ from: 'Acme <news@acme.test>', to: 'ann@example.test', subject: 'Hello', ...input });
  const raw = await composeMime(email, { messageId: MESSAGE_ID, date: DATE, attachments: [], ...opts });
  return { raw, parsed: await simpleParser(raw) };
}

const addresses = (a: AddressObject | AddressObject[] | undefined) =>
  [a ?? []].flat().flatMap((o) => o.value.map((v) => ({ name: v.name, address: v.address })));
const header = (raw: Buffer, name: string) => {
  const head = raw.toString('latin1').split('\r\n\r\n')[0];
  return head.split(/\r\n(?![ \t])/).filter((line) => line.toLowerCase().startsWith(`${name.toLowerCase()}:`));
};

describe('composeMime', () => {
  test("the block editor's document (a trailing comment in the saved HTML) never reaches recipients", async () => {
    const doc = btoa(JSON.stringify({ type: 'doc', content: [{ type: 'paragraph' }] }));
    const { raw, parsed } = await compose({ html: `<table role="presentation"><tr><td>Hi</td></tr></table>\n<!--posthorn-blocks:${doc}-->\n` });
    expect(raw.toString()).not.toContain('posthorn-blocks');
    expect(parsed.html).toContain('<table role="presentation">');
    // Other comments (Outlook's conditional ones) are the sender's and stay.
    const kept = await compose({ html: '<!--[if mso]><table><tr><td><![endif]--><p>Hi</p>' });
    expect(kept.parsed.html).toContain('<!--[if mso]>');
  });

  test('standard headers round-trip; Bcc never appears', async () => {
    const { raw, parsed } = await compose({
      to: ['ann@example.test', 'Bob Example <bob@example.test>'],
      cc: '"Smith, Carol" <carol@example.test>',
      bcc: ['hidden@example.test', 'Secret <secret@example.test>'],
      reply_to: 'Support <help@acme.test>',
      html: '<p>Hi</p>',
      text: 'Hi',
    });
    expect(addresses(parsed.from)).toEqual([{ name: 'Acme', address: 'news@acme.test' }]);
    expect(addresses(parsed.to)).toEqual([
      { name: '', address: 'ann@example.test' },
      { name: 'Bob Example', address: 'bob@example.test' },
    ]);
    expect(addresses(parsed.cc)).toEqual([{ name: 'Smith, Carol', address: 'carol@example.test' }]);
    expect(addresses(parsed.replyTo)).toEqual([{ name: 'Support', address: 'help@acme.test' }]);
    expect(parsed.bcc).toBeUndefined();
    expect(raw.toString()).not.toContain('hidden@example.test');
    expect(raw.toString()).not.toContain('secret@example.test');
    expect(raw.toString().toLowerCase()).not.toContain('bcc');
    expect(parsed.subject).toBe('Hello');
    expect(parsed.messageId).toBe(MESSAGE_ID);
    expect(header(raw, 'Message-ID')).toEqual([`Message-ID: ${MESSAGE_ID}`]);
    expect(parsed.date?.toISOString()).toBe(DATE.toISOString());
    expect(header(raw, 'Date')).toEqual(['Date: Tue, 04 Mar 2025 09:43:52 +0000']);
    expect(header(raw, 'MIME-Version')).toEqual(['MIME-Version: 1.0']);
    expect(parsed.html).toBe('<p>Hi</p>');
    expect(parsed.text).toBe('Hi');
    expect(header(raw, 'Content-Type')[0]).toStartWith('Content-Type: multipart/alternative;');
  });

  test('CRLF line endings only, and the same inputs give the same bytes', async () => {
    const input = { html: '<p>one</p>\n<p>two</p>\r\n', text: 'line 1\nline 2\rline 3' };
    const png: ResolvedAttachment = { filename: 'logo.png', content: PNG, content_type: 'image/png', content_id: 'logo' };
    const a = await compose(input, { attachments: [png] });
    const b = await compose(input, { attachments: [png] });
    expect(a.raw.equals(b.raw)).toBe(true);
    expect(a.raw.toString('latin1')).not.toMatch(/[^\r]\n|\r[^\n]/);
    const other = await compose(input, { attachments: [png], messageId: '<other@acme.test>' });
    expect(other.raw.equals(a.raw)).toBe(false);
  });

  test('non-ASCII subject and display names are encoded words that decode back', async () => {
    const subject = 'Grüße aus Köln — 你好, a subject long enough to be folded over several header lines';
    const { raw, parsed } = await compose({
      from: 'Zoë Ärger <zoe@acme.test>',
      to: ['"Łukasz, Jr." <lukasz@example.test>', 'Ünal <unal@example.test>'],
      subject,
      text: 'Grüße 👋',
    });
    expect(parsed.subject).toBe(subject);
    expect(addresses(parsed.from)).toEqual([{ name: 'Zoë Ärger', address: 'zoe@acme.test' }]);
    expect(addresses(parsed.to)).toEqual([
      { name: 'Łukasz, Jr.', address: 'lukasz@example.test' },
      { name: 'Ünal', address: 'unal@example.test' },
    ]);
    expect(parsed.text?.trim()).toBe('Grüße 👋');
    // Headers are 7-bit on the wire (RFC 2047 encoded words).
    const head = raw.toString('latin1').split('\r\n\r\n')[0];
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the class is all of 7-bit ASCII, controls included.
    expect(head).toMatch(/^[\x00-\x7f]*$/);
    expect(header(raw, 'Subject')[0]).toContain('=?UTF-8?');
  });

  test('custom headers pass through in order, after the standard ones', async () => {
    const { raw, parsed } = await compose({
      text: 'x',
      headers: { 'X-Entity-Ref-ID': 'ref-123', 'List-Unsubscribe': '<https://acme.test/u/1>', 'In-Reply-To': '<prev@acme.test>', 'X-Note': 'Grüße' },
    });
    expect(parsed.headers.get('x-entity-ref-id')).toBe('ref-123');
    // mailparser leaves unknown headers undecoded: the value went out as an RFC 2047 encoded word.
    expect(parsed.headers.get('x-note')).toBe('=?UTF-8?Q?Gr=C3=BC=C3=9Fe?=');
    expect(parsed.inReplyTo).toBe('<prev@acme.test>');
    expect(header(raw, 'List-Unsubscribe')).toEqual(['List-Unsubscribe: <https://acme.test/u/1>']);
    const names = raw
      .toString('latin1')
      .split('\r\n\r\n')[0]
      .split(/\r\n(?![ \t])/)
      .map((l) => l.split(':')[0]);
    expect(names).toEqual([
      'From',
      'To',
      'Subject',
      'Message-ID',
      'Date',
      'X-Entity-Ref-ID',
      'List-Unsubscribe',
      'In-Reply-To',
      'X-Note',
      'Content-Transfer-Encoding',
      'MIME-Version',
      'Content-Type',
    ]);
  });

  test('text is derived from html when not given', async () => {
    const { parsed } = await compose({
      html: '<h1>Welcome</h1><p>Hello <b>Ann</b>,</p><p>Visit <a href="https://acme.test/start">our site</a>.</p><img src="cid:logo" alt="Logo">',
    });
    expect(parsed.html).toContain('<h1>Welcome</h1>');
    expect(parsed.text).toContain('WELCOME');
    expect(parsed.text).toContain('Hello Ann,');
    expect(parsed.text).toContain('our site [https://acme.test/start]');
    expect(parsed.text).not.toContain('cid:logo');
    expect(parsed.text).not.toContain('<');
  });

  test('markup too deeply nested to convert leaves the message without a text part, not unsent', async () => {
    const email = validateEmail({ from: 'news@acme.test', to: 'ann@example.test', subject: 'Deep', html: `${'<b>'.repeat(20000)}deep` });
    const raw = await composeMime(email, { messageId: MESSAGE_ID, date: DATE, attachments: [] });
    const parsed = await simpleParser(raw, { skipHtmlToText: true });
    expect(parsed.html).toContain('deep');
    expect(raw.toString()).not.toContain('text/plain');
  });

  test('a hidden preheader stays out of the derived text', async () => {
    const { parsed } = await compose({ html: '<body><div data-preheader style="display:none">Sneak peek</div><p>Hello</p></body>' });
    expect(parsed.html).toContain('Sneak peek');
    expect(parsed.text?.trim()).toBe('Hello');
  });

  test('text "" means no text part; textFromHtml false too', async () => {
    for (const { raw, parsed } of [
      await compose({ html: '<p>Only html</p>', text: '' }),
      await compose({ html: '<p>Only html</p>' }, { textFromHtml: false }),
    ]) {
      expect(header(raw, 'Content-Type')[0]).toStartWith('Content-Type: text/html');
      expect((parsed.html as string).trim()).toBe('<p>Only html</p>');
      expect(raw.toString()).not.toContain('text/plain');
    }
  });

  test('text only', async () => {
    const { raw, parsed } = await compose({ text: 'Just text' });
    expect(header(raw, 'Content-Type')[0]).toStartWith('Content-Type: text/plain');
    expect(parsed.text?.trim()).toBe('Just text');
    expect(parsed.html).toBe(false);
  });

  test('inline images by content id (multipart/related) and regular attachments', async () => {
    const attachments: ResolvedAttachment[] = [
      { filename: 'logo.png', content: PNG, content_type: 'image/png', content_id: 'logo' },
      { filename: 'Rechnung März.pdf', content: new TextEncoder().encode('%PDF-1.4 fake'), content_type: 'application/pdf', content_id: null },
      { filename: null, content: new Uint8Array([0, 1, 2, 255]), content_type: 'application/octet-stream', content_id: null },
    ];
    const { raw, parsed } = await compose({ html: '<p>Hi <img src="cid:logo"></p>' }, { attachments });
    const body = raw.toString();
    expect(body).toContain('multipart/mixed');
    expect(body).toContain('multipart/related');
    const byType = (t: string) => parsed.attachments.find((a) => a.contentType === t)!;
    const logo = byType('image/png');
    expect(logo).toMatchObject({ contentDisposition: 'inline', contentId: '<logo>', cid: 'logo', filename: 'logo.png', related: true });
    expect(Buffer.compare(logo.content, PNG)).toBe(0);
    const pdf = byType('application/pdf');
    expect(pdf).toMatchObject({ contentDisposition: 'attachment', filename: 'Rechnung März.pdf' });
    expect(pdf.related).toBeFalsy();
    expect(pdf.content.toString()).toBe('%PDF-1.4 fake');
    const bin = byType('application/octet-stream');
    expect(bin.filename).toBeUndefined();
    expect([...bin.content]).toEqual([0, 1, 2, 255]);
    expect(parsed.attachments).toHaveLength(3);
    // The html references the image by cid; mailparser resolves that reference to the part.
    expect(body).toContain('<img src="cid:logo">');
    expect(parsed.html).toContain(`data:image/png;base64,${PNG.toString('base64')}`);
  });

  test('a content id makes any part inline', async () => {
    const attachments: ResolvedAttachment[] = [
      { filename: 'terms.pdf', content: new TextEncoder().encode('pdf'), content_type: 'application/pdf', content_id: 'terms' },
    ];
    const { parsed } = await compose({ html: '<a href="cid:terms">terms</a>' }, { attachments });
    expect(parsed.attachments[0]).toMatchObject({ contentDisposition: 'inline', cid: 'terms' });
  });

  test('a long html line is transfer-encoded to fit RFC 5322 line limits', async () => {
    const html = `<p>${'word '.repeat(500)}</p>`;
    const { raw, parsed } = await compose({ html });
    expect(
      raw
        .toString('latin1')
        .split('\r\n')
        .every((l) => l.length <= 998),
    ).toBe(true);
    expect((parsed as ParsedMail).html).toBe(html);
  });

  test('text in base64 carries CRLF line breaks (RFC 2045 §6.8 canonical form)', async () => {
    // Mostly not ASCII: nodemailer picks base64 over quoted-printable.
    const { raw, parsed } = await compose({ text: '日本語\n日本語\r日本語', html: '<p>日本語</p>' });
    const text = raw.toString('latin1').split('Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n')[1]!.split('\r\n--')[0]!;
    expect(Buffer.from(text.replace(/\r\n/g, ''), 'base64').toString('utf8')).toBe('日本語\r\n日本語\r\n日本語');
    expect(parsed.text?.replace(/\r\n/g, '\n')).toBe('日本語\n日本語\n日本語');
  });

  test('a message/* attachment, copied as given, has its line ends made CRLF (RFC 2046 §5.2.1)', async () => {
    const forwarded = new TextEncoder().encode('From: a@b.test\nSubject: fwd\n\nfirst\nsecond\rthird\r\n');
    for (const content_type of ['message/rfc822', 'message/delivery-status']) {
      const { raw, parsed } = await compose(
        { text: 'see attached' },
        { attachments: [{ filename: 'fwd.eml', content: forwarded, content_type, content_id: null }] },
      );
      expect(raw.toString('latin1')).not.toMatch(/[^\r]\n|\r[^\n]/);
      expect(parsed.text?.trim()).toBe('see attached');
      expect(raw.toString('latin1')).toContain('\r\n\r\nFrom: a@b.test\r\nSubject: fwd\r\n\r\nfirst\r\nsecond\r\nthird\r\n');
    }
  });
});
