// Canaries for the parts of mailauth Posthorn imports from its `lib/` modules (docs/ARCHITECTURE.md
// §5, "Where Posthorn reaches into a library"): src/mail/dkim.ts signs from mailauth's header
// parser, body hash, header canonicalization and header formatting (`lib/tools`, `lib/dkim/body`,
// `lib/dkim/header`: not documented, typed by src/mail/mailauth-parts.d.ts), and src/mail/mta-sts.ts
// reads MTA-STS records and policies with `lib/mta-sts` (typed by mailauth itself). Each test runs
// the library on a published vector — RFC 6376 §3.4.5 and Appendix A, RFC 8463 Appendix A,
// RFC 8461 §3 — so a bump that changes what Posthorn relies on fails here, naming what to check.
import { describe, test, expect } from 'bun:test';
import { createHash, createPrivateKey, sign } from 'node:crypto';
import { parseHeaders, getSigningHeaderLines, formatSignatureHeaderLine, toALabel } from 'mailauth/lib/tools';
import { dkimBody } from 'mailauth/lib/dkim/body';
import { generateCanonicalizedHeader } from 'mailauth/lib/dkim/header';
import { dkimVerify } from 'mailauth/lib/dkim/verify';
import { resolvePolicy, parsePolicy, validateMx } from 'mailauth/lib/mta-sts';
import { dkimSignature } from '../../src/mail/dkim';

const DKIM = 'src/mail/dkim.ts signs from mailauth/lib/{tools,dkim/body,dkim/header}';
const STS = 'src/mail/mta-sts.ts reads MTA-STS with mailauth/lib/mta-sts';
const check = (who: string, what: string) => `${who}: ${what} — re-read that module in the new mailauth and adapt the caller (docs/ARCHITECTURE.md §5)`;

const crlf = (lines: string[]) => Buffer.from(lines.join('\r\n'), 'latin1');

// RFC 8463 Appendix A: the message of RFC 6376 Appendix A, its Ed25519 key (A.2) and signature (A.3).
const HEADER = crlf([
  'From: Joe SixPack <joe@football.example.com>',
  'To: Suzie Q <suzie@shopping.example.net>',
  'Subject: Is dinner ready?',
  'Date: Fri, 11 Jul 2003 21:00:37 -0700 (PDT)',
  'Message-ID: <20030712040037.46341.5F8J@football.example.com>',
  '',
]);
const BODY = crlf(['Hi.', '', 'We lost the game. Are you hungry yet?', '', 'Joe.', '']);
const BODY_HASH = '2jUSOH9NhtVGCQWNr9BrIAPreKQjO6Sn7XIkfJVOzv8=';
const RFC8463_SIGNATURE = crlf([
  'DKIM-Signature: v=1; a=ed25519-sha256; c=relaxed/relaxed;',
  ' d=football.example.com; i=@football.example.com;',
  ' q=dns/txt; s=brisbane; t=1528637909; h=from : to :',
  ' subject : date : message-id : from : subject : date;',
  ` bh=${BODY_HASH};`,
  ' b=/gCrinpcQOoIfuHNQIbq4pgh9kyIK3AQUdt9OdqQehSwhEIug4D11Bus',
  ' Fa3bT3FY5OsU7ZbnKELq+eXdp1Q1Dw==',
]).toString('latin1');
const ED25519_SEED = 'nWGxne/9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A=';
const ED25519_RECORD = 'v=DKIM1; k=ed25519; p=11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=';
/** The seed as a PKCS#8 PEM (RFC 8410 §7: the fixed prefix, then the 32 bytes). */
const ED25519_PEM = createPrivateKey({
  key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.from(ED25519_SEED, 'base64')]),
  format: 'der',
  type: 'pkcs8',
})
  .export({ format: 'pem', type: 'pkcs8' })
  .toString();

const bodyHash = (canonicalization: 'relaxed' | 'simple', body: Buffer) => {
  const hasher = dkimBody(canonicalization, 'sha256', false);
  hasher.update(body);
  return hasher.digest('base64');
};

describe(`mailauth: ${DKIM}`, () => {
  test('the four modules export what dkim.ts calls', () => {
    for (const [name, fn] of Object.entries({
      parseHeaders,
      getSigningHeaderLines,
      formatSignatureHeaderLine,
      toALabel,
      dkimBody,
      generateCanonicalizedHeader,
    }))
      expect(typeof fn, check(DKIM, `${name} is no longer a function`)).toBe('function');
  });

  test('dkimBody(c, "sha256", false): the body hash of RFC 6376 Appendix A, simple and relaxed', () => {
    expect(bodyHash('simple', BODY), check(DKIM, 'dkimBody simple')).toBe(BODY_HASH);
    expect(bodyHash('relaxed', BODY), check(DKIM, 'dkimBody relaxed')).toBe(BODY_HASH);
  });

  test('RFC 6376 §3.4.5: relaxed header and body canonicalization of its example', () => {
    const header = crlf(['A: X', 'B : Y\t', '\tZ  ', '']);
    const body = crlf([' C ', 'D \t E', '', '', '']);
    const lines = getSigningHeaderLines(parseHeaders(header).parsed, 'a:b');
    expect(
      lines.headers.map((h) => h.key),
      check(DKIM, 'parseHeaders/getSigningHeaderLines: keys lower-cased, signed bottom-up'),
    ).toEqual(['b', 'a']);
    const { canonicalizedHeader } = generateCanonicalizedHeader('DKIM', lines, {
      signingDomain: 'example.com',
      selector: 's',
      algorithm: 'rsa-sha256',
      canonicalization: 'relaxed/relaxed',
      timestamp: 0,
      expiration: false,
      bodyHash: 'x',
    });
    expect(canonicalizedHeader.toString('latin1'), check(DKIM, 'generateCanonicalizedHeader relaxed')).toStartWith(
      'b:Y Z\r\na:X\r\ndkim-signature:v=1; a=rsa-sha256;',
    );
    expect(canonicalizedHeader.toString('latin1'), check(DKIM, 'the header ends with an empty b= and no line break')).toEndWith('b=');
    expect(bodyHash('relaxed', body), check(DKIM, 'dkimBody relaxed')).toBe(createHash('sha256').update(' C\r\nD E\r\n').digest('base64'));
  });

  test('RFC 8463 Appendix A: the header parser and relaxed canonicalization give the exact bytes its Ed25519 signature covers', () => {
    const parsed = parseHeaders(HEADER).parsed;
    expect(
      parsed.map((h) => [h.key, h.casedKey]),
      check(DKIM, 'parseHeaders: { key, casedKey, line } per field'),
    ).toEqual([
      ['from', 'From'],
      ['to', 'To'],
      ['subject', 'Subject'],
      ['date', 'Date'],
      ['message-id', 'Message-ID'],
    ]);
    // Its h= as a verifier reads it (the third argument), and the signature header as published.
    const lines = (getSigningHeaderLines as (p: typeof parsed, f: string, verify: boolean) => ReturnType<typeof getSigningHeaderLines>)(
      parsed,
      'from:to:subject:date:message-id:from:subject:date',
      true,
    );
    const { canonicalizedHeader } = (generateCanonicalizedHeader as (t: 'DKIM', l: typeof lines, o: object) => { canonicalizedHeader: Buffer })('DKIM', lines, {
      canonicalization: 'relaxed/relaxed',
      signatureHeaderLine: RFC8463_SIGNATURE,
    });
    // Ed25519 is deterministic: the RFC's own b= only if every canonicalized byte is the same.
    const b = sign(null, createHash('sha256').update(canonicalizedHeader).digest(), createPrivateKey(ED25519_PEM)).toString('base64');
    expect(b, check(DKIM, 'parseHeaders/getSigningHeaderLines/generateCanonicalizedHeader no longer reproduce RFC 8463 A.3')).toBe(
      '/gCrinpcQOoIfuHNQIbq4pgh9kyIK3AQUdt9OdqQehSwhEIug4D11BusFa3bT3FY5OsU7ZbnKELq+eXdp1Q1Dw==',
    );
  });

  test('RFC 8463 Appendix A: dkim.ts signs the message with its Ed25519 key, and mailauth verifies it against the published record', async () => {
    // An RSA key is required beside the Ed25519 one (dkim.ts signs both); the RFC's is 1024 bits, so a fresh one.
    const { generateKeyPairSync } = await import('node:crypto');
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const rsaPem = rsa.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const rsaRecord = `v=DKIM1; k=rsa; p=${rsa.publicKey.export({ format: 'der', type: 'spki' }).toString('base64')}`;
    const signTime = new Date(1528637909 * 1000);
    const header = await dkimSignature(
      Buffer.concat([HEADER, Buffer.from('\r\n'), BODY]),
      {
        name: 'football.example.com',
        dkim: { selector: 'test', private_key: rsaPem },
        ed25519: { selector: 'brisbane', private_key: ED25519_PEM },
      },
      { signTime },
    );
    const signatures = header.match(/^DKIM-Signature: [\s\S]*?(?=^DKIM-Signature: |(?![\s\S]))/gm) ?? [];
    expect(signatures, check(DKIM, 'formatSignatureHeaderLine: one folded DKIM-Signature field per key')).toHaveLength(2);
    for (const s of signatures) expect(s.replace(/\s+/g, ''), check(DKIM, 'dkimBody inside the signer')).toContain(`bh=${BODY_HASH};`);
    const records: Record<string, string[][]> = {
      'brisbane._domainkey.football.example.com': [[ED25519_RECORD]],
      'test._domainkey.football.example.com': [[rsaRecord]],
    };
    const resolver = async (name: string) => {
      if (records[name]) return records[name];
      throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    const signed = Buffer.concat([Buffer.from(header, 'latin1'), HEADER, Buffer.from('\r\n'), BODY]);
    const res = await dkimVerify(signed, { resolver, curTime: signTime } as never);
    const verdicts = (res.results as { algo: string; status: { result: string } }[]).map((r) => `${r.algo} ${r.status.result}`);
    expect(verdicts, check(DKIM, 'what dkim.ts composes no longer verifies')).toEqual(['rsa-sha256 pass', 'ed25519-sha256 pass']);
  });

  test('toALabel: IDNA of a signing domain (the d= and s= check)', () => {
    expect(toALabel('bücher.example'), check(DKIM, 'toALabel')).toBe('xn--bcher-kva.example');
    expect(toALabel('example.com'), check(DKIM, 'toALabel')).toBe('example.com');
  });
});

describe(`mailauth: ${STS}`, () => {
  test('resolvePolicy: the id of RFC 8461 §3.1 from `_mta-sts.<domain>` TXT; none → false; two → multi_sts_records', async () => {
    const asked: string[] = [];
    const resolver = (answers: string[][]) => async (name: string, type: string) => {
      asked.push(`${name} ${type}`);
      return answers;
    };
    expect(
      await resolvePolicy('example.com', { strict: true, resolver: resolver([['v=STSv1; id=20160831085700Z;']]) as never }),
      check(STS, 'resolvePolicy'),
    ).toBe('20160831085700Z');
    expect(asked, check(STS, 'resolvePolicy asks the resolver for TXT at _mta-sts.<domain>')).toEqual(['_mta-sts.example.com TXT']);
    expect(await resolvePolicy('example.com', { strict: true, resolver: resolver([['v=spf1 -all']]) as never }), check(STS, 'no STS record')).toBe(false);
    const notFound = async () => {
      throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    expect(await resolvePolicy('example.com', { strict: true, resolver: notFound as never }), check(STS, 'NXDOMAIN')).toBe(false);
    const two = resolver([['v=STSv1; id=a;'], ['v=STSv1; id=b;']]);
    await expect(resolvePolicy('example.com', { strict: true, resolver: two as never }), check(STS, 'two records')).rejects.toMatchObject({
      code: 'multi_sts_records',
    });
  });

  test('parsePolicy (strict): the policy of RFC 8461 §3.2; a malformed one throws', () => {
    const policy = parsePolicy(
      'version: STSv1\r\nmode: enforce\r\nmx: mail.example.com\r\nmx: *.example.net\r\nmx: backupmx.example.com\r\nmax_age: 604800\r\n',
      {
        strict: true,
      },
    );
    expect({ mode: policy.mode, mx: policy.mx, maxAge: policy.maxAge }, check(STS, 'parsePolicy result: { mode, mx, maxAge }')).toEqual({
      mode: 'enforce',
      mx: ['mail.example.com', '*.example.net', 'backupmx.example.com'],
      maxAge: 604800,
    });
    expect(() => parsePolicy('version: STSv1\r\nmode: Enforce\r\nmx: a.example\r\nmax_age: 1\r\n', { strict: true }), check(STS, 'strict mode')).toThrow();
  });

  test('validateMx: RFC 8461 §4.1, a wildcard matches one left-most label', () => {
    const policy = { mode: 'enforce' as const, mx: ['mail.example.com', '*.example.net'] };
    const valid = (mx: string) => validateMx(mx, policy as never).valid;
    expect([valid('mail.example.com'), valid('mx1.example.net')], check(STS, 'validateMx')).toEqual([true, true]);
    expect([valid('example.net'), valid('a.b.example.net'), valid('other.example.com')], check(STS, 'validateMx')).toEqual([false, false, false]);
  });
});
