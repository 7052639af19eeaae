// The report reader (src/mail/reports.ts readReport, fieldGroups, addressOf, bounceOf,
// isAutoReply) against mangled reports: the fixtures of test/fixtures/reports with bytes flipped,
// cut short, lines and field groups shuffled, oversized fields, random report parts, another
// report-type, boundaries gone and non-UTF-8 bytes, parsed with mailparser as src/smtp/inbound.ts
// does. Whatever arrives, the answer is a well-typed Report — never an exception. A property
// checks the reading itself: a well-formed DSN for random recipients, Actions and Statuses gives
// back exactly those recipients and their bounce classification (docs/api.md §14.3). Seeded, so a
// failure repeats; POSTHORN_FUZZ_RUNS raises the count for a longer run.
import { describe, test, expect } from 'bun:test';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { simpleParser, type ParsedMail } from 'mailparser';
import { readReport, fieldGroups, addressOf, bounceOf, isAutoReply, type Report, type RecipientStatus } from '../../src/mail/reports';
import { rng, fuzzRuns, FUZZ_TIMEOUT, int, chance, pick, flipBytes, truncate, randomBytes, mutateText, randomText, TRICKY, type Random } from '../helpers/fuzz';

const RUNS = fuzzRuns(800);
const FIELD_RUNS = fuzzRuns(8000);
const DSN_RUNS = fuzzRuns(400);
const FIXTURES = join(import.meta.dir, '..', 'fixtures', 'reports');

/** The fixtures with their placeholders filled (see the fixtures' README), lines as LF. */
const fixtures = readdirSync(FIXTURES)
  .filter((f) => f.endsWith('.eml'))
  .map((f) =>
    readFileSync(join(FIXTURES, f), 'utf8')
      .replaceAll('{{VERP}}', 'bounces+0123abcd@send.example.test')
      .replaceAll('{{RCPT}}', 'Ann@dest.test')
      .replaceAll('{{MESSAGE_ID}}', '<0195608a-51e4-70ed-a079-d3bde8e25d94@example.test>')
      .replaceAll('{{FROM}}', 'Acme <hello@example.test>'),
  );

/** As src/smtp/inbound.ts reads a message arriving at a return path. */
const parse = (raw: Buffer) => simpleParser(raw, { keepDeliveryStatus: true, skipHtmlToText: true });

const ADDRESS = /^[^\s@A-Z]+@[^\s@A-Z]+$/;
const TYPES = ['Permanent', 'Transient', 'Undetermined'];
const SUBTYPES = ['General', 'NoEmail', 'MailboxFull', 'MessageTooLarge', 'ContentRejected', 'AttachmentRejected', 'Undetermined'];

/** A Report as readReport promises it: one of three kinds, every field of the right type and form. */
function wellTyped(r: Report): Report['kind'] {
  if (r.kind === 'delivery-status') {
    expect(Object.keys(r).sort()).toEqual(['kind', 'recipients']);
    expect(r.recipients.length).toBeGreaterThan(0);
    for (const s of r.recipients) {
      expect(Object.keys(s).sort()).toEqual(['action', 'diagnostic', 'original', 'recipient', 'status']);
      expect(s.recipient).toMatch(ADDRESS);
      if (s.original !== null) expect(s.original).toMatch(ADDRESS);
      expect(s.action).toMatch(/^[^\s(A-Z]+$/);
      if (s.status !== null) expect(s.status).toMatch(/^[245]\.\d{1,3}\.\d{1,3}$/);
      if (s.diagnostic !== null) expect(typeof s.diagnostic).toBe('string');
      const b = bounceOf(s);
      expect(TYPES).toContain(b.type);
      expect(SUBTYPES).toContain(b.subType);
      expect(typeof b.message).toBe('string');
      expect(b.type).toBe(s.status?.[0] === '5' ? 'Permanent' : s.status?.[0] === '4' ? 'Transient' : 'Undetermined');
    }
  } else if (r.kind === 'feedback') {
    expect(Object.keys(r).sort()).toEqual(['complaint', 'feedbackType', 'kind', 'recipients']);
    expect(r.feedbackType).toMatch(/^[^A-Z]+$/);
    expect(r.complaint).toBe(['abuse', 'fraud', 'virus'].includes(r.feedbackType));
    for (const a of r.recipients) expect(a).toMatch(ADDRESS);
  } else {
    expect(r.kind).toBe('none');
    expect(Object.keys(r).sort()).toEqual(['kind', 'reason']);
    expect(['auto-reply', 'not-a-report', 'malformed-report']).toContain(r.reason);
  }
  return r.kind;
}

const FIELD_NAMES = [
  'Final-Recipient',
  'Original-Recipient',
  'Action',
  'Status',
  'Diagnostic-Code',
  'Reporting-MTA',
  'Remote-MTA',
  'Feedback-Type',
  'Original-Rcpt-To',
  'Auto-Submitted',
  'X-Junk',
];
const FIELD_VALUES = [
  'rfc822; ann@dest.test',
  'rfc822;<Bob@Dest.test>',
  'utf-8; zoë@dest.test',
  'x400; c=us',
  'failed',
  'delayed',
  'FAILED (permanent)',
  '5.1.1',
  '4.4.7',
  '2.0.0',
  '9.9.9',
  '5.0.0 (see diagnostic)',
  'smtp; 550 5.1.1 unknown',
  'abuse',
  'not-spam',
  'auth-failure',
  'dns; mx.dest.test',
];

/** Random field groups, as a report part's body. */
function randomFields(random: Random): string {
  const groups = Array.from({ length: 1 + int(random, 5) }, () =>
    Array.from({ length: 1 + int(random, 6) }, () => {
      const name = chance(random, 0.9) ? pick(random, FIELD_NAMES) : randomText(random, 12);
      const value = chance(random, 0.7) ? pick(random, FIELD_VALUES) : randomText(random, 40);
      return `${chance(random, 0.2) ? name.toUpperCase() : name}:${chance(random, 0.8) ? ' ' : ''}${value}${chance(random, 0.1) ? `\n\t${randomText(random, 20)}` : ''}`;
    }).join('\n'),
  );
  return groups.join(pick(random, ['\n\n', '\n \n', '\r\n\r\n']));
}

/** One way of mangling a report (text with LF line ends); the result as bytes with CRLF, as it arrives. */
function mangle(random: Random, eml: string): Buffer {
  const crlf = (s: string) => Buffer.from(s.replace(/\r?\n/g, '\r\n'));
  const lines = eml.split('\n');
  const at = int(random, lines.length);
  switch (int(random, 10)) {
    case 0:
      return flipBytes(random, crlf(eml), 20);
    case 1:
      return truncate(random, crlf(eml));
    case 2: {
      // Shuffle a window of lines (header fields, report fields, boundaries alike).
      const window = lines.splice(at, 2 + int(random, 8));
      window.sort(() => random() - 0.5);
      lines.splice(at, 0, ...window);
      return crlf(lines.join('\n'));
    }
    case 3: {
      // Shuffle the blank-line separated blocks: field groups move between parts.
      const blocks = eml.split('\n\n');
      for (let i = blocks.length - 1; i > 0; i--) {
        const j = int(random, i + 1);
        [blocks[i], blocks[j]] = [blocks[j]!, blocks[i]!];
      }
      return crlf(blocks.join('\n\n'));
    }
    case 4: {
      // An oversized field: one huge value, or one field repeated thousands of times.
      const field = pick(random, FIELD_NAMES);
      const huge = chance(random, 0.5)
        ? `${field}: ${'x'.repeat(20_000 + int(random, 100_000))}`
        : Array(500 + int(random, 2000))
            .fill(`${field}: ${pick(random, FIELD_VALUES)}`)
            .join('\n');
      lines.splice(at, 0, huge);
      return crlf(lines.join('\n'));
    }
    case 5: {
      // The report part's fields replaced by random ones.
      const start = lines.findIndex((l) => /^Content-Type: message\/(delivery-status|feedback-report)/i.test(l));
      if (start < 0) return crlf(randomFields(random));
      const body = lines.indexOf('', start);
      const end = lines.findIndex((l, i) => i > body && l.startsWith('--'));
      lines.splice(body + 1, (end < 0 ? lines.length : end) - body - 1, randomFields(random), '');
      return crlf(lines.join('\n'));
    }
    case 6: {
      // Another report-type, or none, or another top-level type; or a part whose Content-Type is empty.
      if (chance(random, 0.2)) {
        const types = lines.map((l, i) => (/^content-type:/i.test(l) && i > lines.indexOf('') ? i : -1)).filter((i) => i >= 0);
        if (types.length) lines[pick(random, types)] = pick(random, ['Content-Type:', 'Content-Type: ', 'Content-Type: ;']);
        return crlf(lines.join('\n'));
      }
      const type = pick(random, [
        'feedback-report',
        'delivery-status',
        'DELIVERY-STATUS',
        '"delivery-status"',
        'disposition-notification',
        '',
        ';;',
        randomText(random, 12),
      ]);
      return crlf(
        chance(random, 0.8)
          ? eml.replace(/report-type=[^;\s]*/i, `report-type=${type}`)
          : eml.replace(/multipart\/report/i, pick(random, ['multipart/mixed', 'text/plain', 'multipart/report;;', 'message/rfc822'])),
      );
    }
    case 7: {
      // Boundaries: one or all delimiter lines gone, or the parameter naming another one.
      if (chance(random, 0.3)) return crlf(eml.replace(/boundary="?[^"\s;]+"?/i, `boundary="${randomText(random, 10)}"`));
      const delimiters = lines.map((l, i) => (l.startsWith('--') ? i : -1)).filter((i) => i >= 0);
      const drop = chance(random, 0.5) ? delimiters : delimiters.length ? [pick(random, delimiters)] : [];
      return crlf(lines.filter((_, i) => !drop.includes(i)).join('\n'));
    }
    case 8: {
      // Bytes that are not UTF-8, or a charset that does not match them.
      const bytes = crlf(
        chance(random, 0.3) ? eml.replace(/(Content-Type: [^\n]*)/i, `$1; charset=${pick(random, ['iso-8859-1', 'utf-16', 'x-unknown', 'shift_jis'])}`) : eml,
      );
      const pos = int(random, bytes.length);
      const junk = Buffer.from(Array.from({ length: 1 + int(random, 12) }, () => 0x80 + int(random, 128)));
      return Buffer.concat([bytes.subarray(0, pos), junk, bytes.subarray(pos)]);
    }
    default: {
      for (let n = 1 + int(random, 4); n > 0; n--) {
        const i = int(random, lines.length);
        lines[i] = mutateText(random, lines[i]!, [':', ';', '<', '>', '\n\n', '\n ', '--', 'rfc822;']);
      }
      return crlf(lines.join('\n'));
    }
  }
}

describe('report reading', () => {
  test('the fixtures read as their README says', async () => {
    const kinds = await Promise.all(fixtures.map(async (eml) => wellTyped(readReport(await parse(Buffer.from(eml.replace(/\n/g, '\r\n')))))));
    expect(kinds.sort()).toEqual([
      'delivery-status',
      'delivery-status',
      'delivery-status',
      'delivery-status',
      'delivery-status',
      'feedback',
      'feedback',
      'none',
      'none',
    ]);
  });

  test(
    `${RUNS} mangled reports: a well-typed Report, never an exception`,
    async () => {
      const random = rng(20261207);
      const seen: Record<string, number> = { 'delivery-status': 0, feedback: 0, none: 0, unparsed: 0 };
      for (let i = 0; i < RUNS; i++) {
        let raw = mangle(random, pick(random, fixtures));
        if (chance(random, 0.3)) raw = mangle(random, raw.toString('latin1').replace(/\r\n/g, '\n'));
        let mail: ParsedMail;
        try {
          mail = await parse(raw);
        } catch {
          // mailparser gave up: src/smtp/inbound.ts reads that as a malformed report.
          seen.unparsed!++;
          continue;
        }
        seen[wellTyped(readReport(mail))]!++;
        expect(typeof isAutoReply(mail)).toBe('boolean');
      }
      // Every kind occurs: the mangling reached the reader, and some reports still read.
      expect(seen['delivery-status']).toBeGreaterThan(RUNS / 20);
      expect(seen.feedback).toBeGreaterThan(RUNS / 50);
      expect(seen.none).toBeGreaterThan(RUNS / 20);
    },
    FUZZ_TIMEOUT,
  );

  test(
    `${FIELD_RUNS} random field blocks and addresses: fieldGroups and addressOf never throw`,
    () => {
      const random = rng(20261208);
      for (let i = 0; i < FIELD_RUNS; i++) {
        const text = chance(random, 0.5)
          ? randomFields(random)
          : chance(random, 0.5)
            ? mutateText(random, randomFields(random), ['\n', '\r', ':'])
            : randomBytes(random, 200).toString('latin1');
        for (const group of fieldGroups(text)) {
          expect(group.size).toBeGreaterThan(0);
          for (const [name, values] of group) {
            expect(name).toMatch(/^[!-9;-~]+$/);
            expect(name).toBe(name.toLowerCase());
            for (const v of values) expect(typeof v).toBe('string');
          }
        }
        const value = chance(random, 0.5)
          ? mutateText(random, pick(random, FIELD_VALUES))
          : randomText(random, 40, [...TRICKY, 'a', 'b', '@', 'rfc822', ';', '<', '>']);
        const a = addressOf(value);
        if (a !== null) expect(a).toMatch(ADDRESS);
      }
    },
    FUZZ_TIMEOUT,
  );
});

/** Expected classification (docs/api.md §14.3): class 5 Permanent, 4 Transient, else Undetermined; sub-type from the code. */
function classification(status: string): { type: string; subType: string } {
  const [cls, subject, detail] = status.split('.');
  if (cls !== '5' && cls !== '4') return { type: 'Undetermined', subType: 'Undetermined' };
  const subType =
    subject === '2' && detail === '2'
      ? 'MailboxFull'
      : subject === '3' && detail === '4'
        ? 'MessageTooLarge'
        : cls === '5' && subject === '1'
          ? 'NoEmail'
          : cls === '5' && subject === '7'
            ? 'ContentRejected'
            : 'General';
  return { type: cls === '5' ? 'Permanent' : 'Transient', subType };
}

const casing = (random: Random, name: string) => pick(random, [name, name.toLowerCase(), name.toUpperCase()]);

/** A well-formed DSN (RFC 3464 in RFC 6522's multipart/report) for random recipients, and what it says. */
function generatedDsn(random: Random): { raw: Buffer; expected: RecipientStatus[] } {
  const expected: RecipientStatus[] = [];
  const groups: string[] = [];
  for (let n = 1 + int(random, 12); n > 0; n--) {
    const local = randomText(random, 12, [...'abcXYZ019._+-']).replace(/^\.|\.$/g, '') || 'u';
    const address = `${local}${expected.length}@${pick(random, ['dest.test', 'Dest.TEST', 'mail.example.test'])}`;
    const original = chance(random, 0.4) ? `orig${expected.length}@dest.test` : null;
    const action = pick(random, ['failed', 'delayed', 'delivered', 'relayed', 'expanded']);
    const status = `${pick(random, ['2', '4', '5'])}.${int(random, 8)}.${int(random, 12)}`;
    const words = Array.from({ length: 1 + int(random, 8) }, () => randomText(random, 10, [...'abcdefXYZ0189<>@.']) || 'w');
    const diagnostic = chance(random, 0.7)
      ? `smtp; ${status[0]}${int(random, 10)}${int(random, 10)} ${chance(random, 0.5) ? `${status} ` : ''}${words.join(' ')}`
      : null;
    const fields = [
      `${casing(random, 'Final-Recipient')}: ${pick(random, ['rfc822; ', 'rfc822;', 'RFC822; ', 'rfc822; Someone <'])}${address}`.replace(/<(.*)$/, '<$1>'),
      ...(original ? [`${casing(random, 'Original-Recipient')}: rfc822;${original}`] : []),
      `${casing(random, 'Action')}:${pick(random, [' ', '  ', ''])}${chance(random, 0.3) ? action.toUpperCase() : action}${chance(random, 0.2) ? ' (a comment)' : ''}`,
      `${casing(random, 'Status')}: ${status}${chance(random, 0.2) ? ' (explained)' : ''}`,
      ...(chance(random, 0.3) ? ['Remote-MTA: dns; mx.dest.test', 'X-Vendor-Field: 1'] : []),
      ...(diagnostic ? [`${casing(random, 'Diagnostic-Code')}: ${diagnostic.replace(/ /g, () => (chance(random, 0.15) ? '\n    ' : ' '))}`] : []),
    ];
    // Field order within a group is free (RFC 3464 §2.3).
    fields.sort(() => random() - 0.5);
    groups.push(fields.join('\n'));
    expected.push({ recipient: address.toLowerCase(), original, action, status, diagnostic });
  }
  const boundary = `=_${randomText(random, 20, [...'abcXYZ0189'])}`;
  const eml = [
    'From: MAILER-DAEMON@mx.dest.test (Mail Delivery System)',
    'To: bounces+0123abcd@send.example.test',
    'Subject: Undelivered Mail Returned to Sender',
    'MIME-Version: 1.0',
    `Content-Type: multipart/report; report-type=${pick(random, ['delivery-status', 'Delivery-Status', '"delivery-status"'])};`,
    `\tboundary="${boundary}"`,
    '',
    'This is a MIME-encapsulated message.',
    '',
    `--${boundary}`,
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Your message could not be delivered to some recipients.',
    '',
    `--${boundary}`,
    `Content-Type: ${pick(random, ['message/delivery-status', 'message/global-delivery-status', 'Message/Delivery-Status'])}`,
    '',
    `Reporting-MTA: dns; mx.dest.test\nArrival-Date: Tue, 4 Mar 2025 09:44:00 +0000`,
    '',
    groups.join('\n\n'),
    '',
    `--${boundary}`,
    'Content-Type: text/rfc822-headers',
    '',
    'Message-ID: <0195608a-51e4-70ed-a079-d3bde8e25d94@example.test>',
    '',
    `--${boundary}--`,
    '',
  ].join('\n');
  return { raw: Buffer.from(eml.replace(/\n/g, '\r\n')), expected };
}

describe('a well-formed DSN', () => {
  test(
    `${DSN_RUNS} DSNs for random recipients, Actions and Statuses: exactly those recipients and their classification`,
    async () => {
      const random = rng(20261209);
      for (let i = 0; i < DSN_RUNS; i++) {
        const { raw, expected } = generatedDsn(random);
        const report = readReport(await parse(raw));
        expect(report).toEqual({ kind: 'delivery-status', recipients: expected });
        for (const r of (report as Extract<Report, { kind: 'delivery-status' }>).recipients) {
          const b = bounceOf(r);
          expect({ type: b.type as string, subType: b.subType as string }).toEqual(classification(r.status!));
          expect(b.diagnosticCode).toEqual(r.diagnostic ? [r.diagnostic] : undefined);
        }
      }
    },
    FUZZ_TIMEOUT,
  );
});
