// Bounce classes as data (src/mail/bounce-class.ts, src/mail/bounce-classes.toml; README.md,
// "Bounce classes and incidents"): the corpus of real replies (test/fixtures/bounces/corpus.toml),
// each classified as the delivery engine reads an SMTP reply and as the inbound processor reads the
// Diagnostic-Code of a DSN arriving at a VERP address (RFC 3464, through mailparser and
// mail/reports.ts readReport); the configuration's overrides key by key; rule files and overrides
// that refuse to start, naming the line or key at fault; the links a reply names.
import { describe, test, expect } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  BOUNCE_CLASSES,
  BounceClassifier,
  BounceRuleError,
  type BounceClass,
  dsnInput,
  lineOf,
  linksIn,
  parseRules,
  replyInput,
  SHIPPED_SOURCE,
  shippedRules,
} from '../../src/mail/bounce-class';
import { localReply, parseReply } from '../../src/mail/smtp-reply';
import { parseMessage } from '../../src/mail/parse';
import { readReport } from '../../src/mail/reports';
import { loadConfig } from '../../src/config';

interface Entry {
  provider: string;
  class: BounceClass;
  text: string;
  status?: string;
  source: string;
}

const CORPUS = (Bun.TOML.parse(readFileSync(join(import.meta.dir, '..', 'fixtures', 'bounces', 'corpus.toml'), 'utf8')) as { reply: Entry[] }).reply;
const classifier = new BounceClassifier();

/** A DSN (RFC 3464) for one failed recipient whose Diagnostic-Code is `text`, folded as MTAs fold it. */
function dsn(text: string, status: string): Buffer {
  const folded = `smtp; ${text}`.replace(/(.{60,76}?) /g, '$1\n    ');
  return Buffer.from(
    [
      'From: MAILER-DAEMON@mx.dest.test',
      'To: bounces+token@send.example.test',
      'Subject: Undelivered Mail Returned to Sender',
      'MIME-Version: 1.0',
      'Content-Type: multipart/report; report-type=delivery-status; boundary="b"',
      '',
      '--b',
      'Content-Type: text/plain',
      '',
      'The mail system could not deliver your message.',
      '',
      '--b',
      'Content-Type: message/delivery-status',
      '',
      'Reporting-MTA: dns; mx.dest.test',
      '',
      'Final-Recipient: rfc822; ann@dest.test',
      'Action: failed',
      `Status: ${status}`,
      `Diagnostic-Code: ${folded}`,
      '',
      '--b--',
      '',
    ].join('\r\n'),
  );
}

/** The Status a DSN would carry: the entry's, else the enhanced code in its text, else X.0.0 by its reply code. */
const statusOf = (e: Entry) => e.status ?? /\b([245]\.\d{1,3}\.\d{1,3})\b/.exec(e.text)?.[1] ?? (/^4/.test(e.text) ? '4.0.0' : '5.0.0');

describe('the corpus of real replies', () => {
  test('has at least 150 replies from every kind of receiver the issue names, in every class', () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(150);
    const providers = new Set(CORPUS.map((e) => e.provider));
    for (const p of [
      'gmail',
      'outlook',
      'yahoo',
      'icloud',
      'gmx',
      'mailru',
      'yandex',
      'zoho',
      'proofpoint',
      'mimecast',
      'barracuda',
      'cisco',
      'dnsbl',
      'postfix',
      'exim',
      'exchange',
      'qmail',
    ])
      expect({ provider: p, present: providers.has(p) }).toEqual({ provider: p, present: true });
    expect(new Set(CORPUS.map((e) => e.class))).toEqual(new Set(BOUNCE_CLASSES));
    for (const e of CORPUS) expect(e.source.length).toBeGreaterThan(10);
  });

  const replies = CORPUS.filter((e) => /^[245]\d\d[ -]/.test(e.text));
  test.each(replies.map((e) => [e.provider, e.class, e.text] as const))('SMTP reply, %s → %s: %s', (_p, cls, text) => {
    const reply = parseReply(text)!;
    expect({ text, class: classifier.classify(replyInput(reply)), rule: classifier.ruleFor(replyInput(reply)) }).toMatchObject({ text, class: cls });
  });

  test.each(CORPUS.map((e) => [e.provider, e.class, e.text, statusOf(e)] as const))('DSN at a VERP address, %s → %s: %s', async (_p, cls, text, status) => {
    const report = readReport(await parseMessage(dsn(text, status), { keepDeliveryStatus: true, skipHtmlToText: true, skipTextToHtml: true }));
    expect(report.kind).toBe('delivery-status');
    const [r] = (report as { recipients: { status: string | null; diagnostic: string | null }[] }).recipients;
    const input = dsnInput(r.status, r.diagnostic);
    expect({ text, class: classifier.classify(input), rule: classifier.ruleFor(input) }).toMatchObject({ text, class: cls });
  });
});

describe('the rules', () => {
  test('the shipped file parses, names only known classes, and every class has a rule', () => {
    const rules = shippedRules();
    const used = new Set([
      ...Object.values(rules.enhanced ?? {}),
      ...Object.values(rules.reply ?? {}),
      ...Object.values(rules.patterns ?? {}).map((p) => p.class),
    ]);
    expect([...used].every((c) => (BOUNCE_CLASSES as readonly string[]).includes(c!))).toBe(true);
    expect(new Set(used)).toEqual(new Set(BOUNCE_CLASSES));
  });

  test('precedence: a provider text, then the whole enhanced code, then class.subject, then the reply code', () => {
    const c = (raw: string) => classifier.classify(replyInput(parseReply(raw)!));
    // 5.1.1 is a recipient, but a text saying the sender sent too much is a rate.
    expect(c('550 5.1.1 <ann@x.test> - 192.0.2.1 has sent to too many recipients this hour')).toBe('rate');
    expect(c('550 5.7.26 nothing matches here')).toBe('authentication');
    expect(c('550 5.7.99 nothing matches here')).toBe('policy');
    expect(c('552 nothing matches here')).toBe('mailbox_full');
    expect(c('554 nothing matches here')).toBe('unknown');
    expect(c('250 2.0.0 ok')).toBe('unknown');
  });

  test('replies Posthorn makes up (DNS, connection, MTA-STS) have classes too', () => {
    const c = (r: ReturnType<typeof localReply>) => classifier.classify(replyInput(r));
    expect(c(localReply(556, '5.1.10', 'x.test: the domain accepts no mail (null MX)'))).toBe('recipient');
    expect(c(localReply(550, '5.1.2', 'x.test: no MX or address records'))).toBe('recipient');
    expect(c(localReply(451, '4.4.1', 'mx.x.test: connect ECONNREFUSED 192.0.2.1:25'))).toBe('routing');
    expect(c(localReply(451, '4.4.3', 'DNS lookup of x.test failed: ETIMEOUT'))).toBe('routing');
    expect(c(localReply(451, '4.7.10', 'mx.x.test: MTA-STS policy requires TLS with a valid certificate'))).toBe('routing');
    // A greeting that refused the connection is kept in the local reply's text: its class is the refusal's.
    expect(c(localReply(451, '4.4.1', 'mx.x.test: Connection closed (554-IP address is black listed.)'))).toBe('reputation');
  });

  test('the configuration overrides the shipped rules key by key, and its own rules come first', () => {
    const config = loadConfig({
      env: {},
      overrides: {
        'delivery.bounce_classes': {
          enhanced: { '5.7.1': 'reputation' },
          reply: { '554': 'policy' },
          patterns: {
            // A shipped rule, one setting changed: its texts stay, its class is another.
            rate_limits: { class: 'policy' },
            // A shipped rule switched off.
            recipient_disabled: { match: [] },
            corp_relay: { class: 'routing', match: ['corp relay says no'], codes: ['5'] },
          },
        },
      },
    });
    const c = new BounceClassifier(config.delivery.bounce_classes);
    const k = (raw: string) => c.classify(replyInput(parseReply(raw)!));
    expect(k('550 5.7.1 nothing matches here')).toBe('reputation');
    expect(k('554 nothing matches here')).toBe('policy');
    expect(k('421 4.7.0 Try again later, closing connection.')).toBe('policy');
    expect(k('550 5.2.1 The email account that you tried to reach is disabled.')).toBe('recipient'); // still: recipient_unknown's 'account that you tried to reach'
    expect(k('550 mailbox is disabled')).toBe('unknown');
    expect(k('550 corp relay says no, user unknown')).toBe('routing');
    expect(k('450 corp relay says no')).toBe('unknown'); // `codes`: permanent replies only
    // The shipped rules are as they were for everyone else.
    expect(classifier.classify(replyInput(parseReply('550 mailbox is disabled')!))).toBe('recipient');
  });

  test('a rule file that names an unknown class, or does not parse, refuses naming the line', () => {
    const text = ['[enhanced]', '"5.1.1" = "recipient"', '', '[patterns.mine]', 'class = "reputaton"', "match = ['x']", ''].join('\n');
    const source = { name: 'rules.toml', text };
    const err = (fn: () => unknown) => {
      try {
        fn();
      } catch (e) {
        expect(e).toBeInstanceOf(BounceRuleError);
        return (e as Error).message;
      }
      throw new Error('nothing thrown');
    };
    expect(err(() => parseRules(source, Bun.TOML.parse(text)))).toBe(
      'rules.toml line 5: `patterns.mine.class` names an unknown class "reputaton" (one of recipient, mailbox_full, message, reputation, authentication, policy, rate, routing, unknown)',
    );
    const badCode = ['[enhanced]', '"5.1.1" = "recipient"', '"5.x" = "policy"'].join('\n');
    expect(err(() => parseRules({ name: 'rules.toml', text: badCode }, Bun.TOML.parse(badCode)))).toStartWith(
      'rules.toml line 3: `enhanced.5.x` is not an enhanced status code',
    );
    const badRegex = ['[patterns.x]', 'class = "policy"', "match = ['(unclosed']"].join('\n');
    expect(err(() => parseRules({ name: 'rules.toml', text: badRegex }, Bun.TOML.parse(badRegex)))).toStartWith(
      'rules.toml line 3: `patterns.x.match` has a pattern that is not a regular expression',
    );
    // The shipped file's lines are found the same way.
    expect(lineOf(SHIPPED_SOURCE.text!, ['patterns', 'mailbox_full', 'class'])).toBe(
      SHIPPED_SOURCE.text!.split('\n').findIndex((l, i, all) => l.startsWith('class') && all[i - 1] === '[patterns.mailbox_full]') + 1,
    );
    expect(lineOf(SHIPPED_SOURCE.text!, ['enhanced', '5.7.26'])).toBe(SHIPPED_SOURCE.text!.split('\n').indexOf('"5.7.26" = "authentication"') + 1);
  });

  test('an override that names an unknown class or setting refuses naming the configuration key', () => {
    const key = (overrides: unknown) => {
      try {
        new BounceClassifier(overrides);
      } catch (e) {
        expect(e).toBeInstanceOf(BounceRuleError);
        expect((e as Error).message).toStartWith(`config: \`${(e as BounceRuleError).key}\``);
        return (e as BounceRuleError).key;
      }
      throw new Error('nothing thrown');
    };
    expect(key({ enhanced: { '5.7.1': 'spam' } })).toBe('delivery.bounce_classes.enhanced.5.7.1');
    expect(key({ reply: { '5xx': 'policy' } })).toBe('delivery.bounce_classes.reply.5xx');
    expect(key({ patterns: { mine: { class: 'policy', match: ['x'], weight: 2 } } })).toBe('delivery.bounce_classes.patterns.mine.weight');
    expect(key({ patterns: { mine: { class: 'policy' } } })).toBe('delivery.bounce_classes.patterns.mine.match');
    expect(key({ patterns: { mine: { match: ['x'], codes: ['55x'] } } })).toBe('delivery.bounce_classes.patterns.mine.codes');
    expect(key({ classes: {} })).toBe('delivery.bounce_classes.classes');
    // From the environment: JSON.
    expect(
      () => new BounceClassifier(loadConfig({ env: { POSTHORN_DELIVERY_BOUNCE_CLASSES: '{"reply": {"554": "nonsense"}}' } }).delivery.bounce_classes),
    ).toThrow('config: `delivery.bounce_classes.reply.554` names an unknown class "nonsense"');
  });
});

describe('DSNs and links', () => {
  test('a DSN reads as its Diagnostic-Code, with the Status — or the code in the text when the Status says X.0.0', () => {
    expect(dsnInput('5.1.1', 'smtp; 550 5.1.1 <a@x.test>: user unknown')).toEqual({ code: 550, enhanced: '5.1.1', text: '550 5.1.1 <a@x.test>: user unknown' });
    expect(dsnInput('5.0.0', 'smtp; 550 5.7.26 unauthenticated')).toEqual({ code: 550, enhanced: '5.7.26', text: '550 5.7.26 unauthenticated' });
    expect(dsnInput('5.0.0', 'X-Postfix; Host or domain name not found')).toEqual({ code: null, enhanced: '5.0.0', text: 'Host or domain name not found' });
    expect(dsnInput('4.4.1', null)).toEqual({ code: null, enhanced: '4.4.1', text: '4.4.1' });
  });

  test('the links a reply names: delisting forms, postmaster pages', () => {
    expect(
      linksIn(
        '550 5.7.606 Access denied, banned sending IP [192.0.2.1]. To request removal from this list please visit https://sender.office.com/ and follow the directions. For more information please go to http://go.microsoft.com/fwlink/?LinkID=526655 (AS16012609)',
      ),
    ).toEqual(['https://sender.office.com/', 'http://go.microsoft.com/fwlink/?LinkID=526655']);
    expect(linksIn('553 5.7.1 [BL21] see http://postmaster.yahoo.com/550-bl23.html; and www.spamhaus.org/query/bl?ip=192.0.2.1.')).toEqual([
      'http://postmaster.yahoo.com/550-bl23.html',
      'http://www.spamhaus.org/query/bl?ip=192.0.2.1',
    ]);
    expect(linksIn('550 5.1.1 user unknown')).toEqual([]);
  });
});
