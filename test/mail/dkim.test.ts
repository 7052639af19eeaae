// DKIM signing (src/mail/dkim.ts, RFC 6376 / RFC 8463): the signer built from mailauth's parts, with
// keys parsed once and RSA by OpenSSL (src/mail/openssl.ts), gives exactly what mailauth's own
// signer gives for the same message, key and time — for the messages Posthorn builds and for
// mutated ones (those with bare LFs or no header end go to mailauth's signer itself) — and what it
// gives verifies. OpenSSL's RSA signatures equal node:crypto's (PKCS#1 v1.5 is deterministic).
import { describe, test, expect, beforeAll } from 'bun:test';
import { generateKeyPairSync, createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { dkimSign } from 'mailauth/lib/dkim/sign';
import { dkimVerify } from 'mailauth/lib/dkim/verify';
import { dkimSignature, DkimError, DkimPieces, type DkimDomain } from '../../src/mail/dkim';
import { openSsl } from '../../src/mail/openssl';
import { generateDkimKey, generateEd25519Key, keyRecord } from '../../src/domains/dkim';

type DkimKey = Awaited<ReturnType<typeof generateDkimKey>>;
import { rng, pick, int, chance, mutateText, fuzzRuns, FUZZ_TIMEOUT } from '../helpers/fuzz';

let rsa: DkimKey;
let ed: DkimKey;
const signTime = new Date('2026-11-25T10:00:00Z');
const SIGNED =
  'From:Sender:Reply-To:Subject:Date:Message-ID:To:Cc:MIME-Version:Content-Type:Content-Transfer-Encoding:Content-ID:Content-Description:Resent-Date:Resent-From:Resent-Sender:Resent-To:Resent-Cc:Resent-Message-ID:In-Reply-To:References:List-Id:List-Help:List-Unsubscribe:List-Unsubscribe-Post:List-Subscribe:List-Post:List-Owner:List-Archive:BIMI-Selector';

beforeAll(async () => {
  rsa = await generateDkimKey('posthorn');
  ed = await generateEd25519Key('posthorn-ed');
});

const domain = (withEd: boolean): DkimDomain => ({
  name: 'example.test',
  dkim: { selector: rsa.selector, private_key: rsa.private_key },
  ...(withEd ? { ed25519: { selector: ed.selector, private_key: ed.private_key } } : {}),
});

/** mailauth's own signer, as mail/dkim.ts called it before. */
async function mailauthSignature(raw: Buffer, d: DkimDomain): Promise<string> {
  const data = [
    { signingDomain: d.name, selector: d.dkim.selector, privateKey: d.dkim.private_key, algorithm: 'rsa-sha256', canonicalization: 'relaxed/relaxed' },
  ];
  if (d.ed25519) data.push({ ...data[0]!, selector: d.ed25519.selector, privateKey: d.ed25519.private_key, algorithm: 'ed25519-sha256' });
  return (await dkimSign(raw, { ...data[0]!, headerList: SIGNED, signatureData: data, signTime })).signatures;
}

/** What mailauth's verifier says of the signed message, with the domain's keys as the only DNS. */
async function verdicts(signed: Buffer): Promise<string[]> {
  const txt: Record<string, string[][]> = {
    [`${rsa.selector}._domainkey.example.test`]: [[keyRecord(rsa, 'rsa')]],
    [`${ed.selector}._domainkey.example.test`]: [[keyRecord(ed, 'ed25519')]],
  };
  const resolver = async (name: string) => {
    if (txt[name]) return txt[name];
    throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
  };
  const res = await dkimVerify(signed, { resolver, curTime: signTime } as never);
  return (res.results as { algo: string; status: { result: string } }[]).map((r) => `${r.algo} ${r.status.result}`);
}

const CRLF = (lines: string[]) => Buffer.from(lines.join('\r\n'), 'latin1');
const MESSAGES: Record<string, Buffer> = {
  'multipart, as Posthorn builds it': CRLF([
    'Content-Type: multipart/alternative; boundary="--_b-1"',
    'From: Acme <hello@example.test>',
    'To: bob@dest.test',
    'Subject: Welcome',
    'Message-ID: <0195608a-51e4-70ed-a079-d3bde8e25d94@example.test>',
    'Date: Wed, 25 Nov 2026 10:00:00 +0000',
    'MIME-Version: 1.0',
    '',
    '----_b-1',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: 7bit',
    '',
    'Hello   Bob,  ',
    '',
    '----_b-1',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<p>Hello Bob</p>',
    '----_b-1--',
    '',
  ]),
  'folded headers, repeated fields, mixed case, whitespace to relax': CRLF([
    'FROM :  Acme\t <hello@example.test>',
    'Subject: a very long subject',
    ' folded\tonce',
    '\tand twice',
    'To: a@dest.test',
    'To: b@dest.test',
    'X-Not-Signed: yes',
    'List-Unsubscribe: <https://example.test/u>',
    'List-Unsubscribe-Post: List-Unsubscribe=One-Click',
    '',
    'body  with \t spaces \t ',
    '',
    '',
    '',
  ]),
  'empty body': CRLF(['From: hello@example.test', 'Subject: nothing', '', '']),
  'no body line end, 8-bit text': Buffer.concat([
    CRLF(['From: hello@example.test', 'Subject: =?UTF-8?B?w6Q=?=', '', '']),
    Buffer.from('grüße ohne Zeilenende', 'utf8'),
  ]),
  'bare LFs (mailauth signs it)': Buffer.from('From: hello@example.test\nSubject: unix\n\nline one\nline two\n', 'latin1'),
  'no empty line (mailauth signs it)': CRLF(['From: hello@example.test', 'Subject: headers only']),
};

describe('DKIM signatures', () => {
  for (const [name, raw] of Object.entries(MESSAGES)) {
    test(`${name}: as mailauth signs it, and it verifies (RSA, and RSA + Ed25519)`, async () => {
      for (const withEd of [false, true]) {
        const ours = await dkimSignature(raw, domain(withEd), { signTime });
        expect(ours).toBe(await mailauthSignature(raw, domain(withEd)));
        expect(ours.match(/^DKIM-Signature: /gm)).toHaveLength(withEd ? 2 : 1);
        expect(await verdicts(Buffer.concat([Buffer.from(ours, 'latin1'), raw]))).toEqual(
          withEd ? ['rsa-sha256 pass', 'ed25519-sha256 pass'] : ['rsa-sha256 pass'],
        );
      }
    });
  }

  test(
    'mutated messages: the same signatures as mailauth, or the same refusal',
    async () => {
      const random = rng(20261125);
      const seeds = Object.values(MESSAGES).map((b) => b.toString('latin1'));
      for (let i = 0; i < fuzzRuns(300); i++) {
        const raw = Buffer.from(mutateText(random, pick(random, seeds), ['\r\n', '\r\n\r\n', '\r\n ', 'From: x@example.test\r\n', ':', '\n']), 'latin1');
        const d = domain(chance(random, 0.3));
        const theirs = await mailauthSignature(raw, d);
        const ours = await dkimSignature(raw, d, { signTime }).catch((e: Error) => e);
        if (theirs) expect(ours).toBe(theirs);
        else expect(ours).toBeInstanceOf(DkimError);
      }
    },
    FUZZ_TIMEOUT,
  );

  test('refusals: no From, a key of the wrong type, a key that cannot be read — never quoting the key', async () => {
    const noFrom = CRLF(['Subject: who?', '', 'body', '']);
    expect(dkimSignature(noFrom, domain(false))).rejects.toThrow(DkimError);
    const swapped: DkimDomain = { name: 'example.test', dkim: { selector: 's', private_key: ed.private_key } };
    expect(dkimSignature(MESSAGES['empty body']!, swapped)).rejects.toThrow('EINVALIDTYPE');
    const broken = rsa.private_key.replace(/[A-Za-z]{20}/, 'AAAAAAAAAAAAAAAAAAAA');
    const err = await dkimSignature(MESSAGES['empty body']!, { name: 'example.test', dkim: { selector: 's', private_key: broken } }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(DkimError);
    expect((err as Error).message).not.toContain(broken.split('\n')[1]!.slice(0, 20));
  });
});

// A large message is signed from its pieces as they are read (delivery/signers.ts signPieces):
// whatever the cuts — inside a CRLF, inside the empty line that ends the header — the signature is
// dkimSignature's of the whole; a message it would not sign so (a lone CR or LF, no header end) is
// left to be signed whole.
describe('DKIM signatures of a message in pieces', () => {
  /** The pieces of `raw`, of 1 to `max` bytes (deterministic). */
  function inPieces(raw: Buffer, seed: number, max: number): Buffer[] {
    const random = rng(seed);
    const out: Buffer[] = [];
    for (let at = 0; at < raw.byteLength; ) {
      const next = Math.min(raw.byteLength, at + 1 + int(random, max));
      out.push(raw.subarray(at, next));
      at = next;
    }
    return out;
  }
  const signedInPieces = (pieces: Buffer[], d: DkimDomain) => {
    const signer = new DkimPieces();
    for (const p of pieces) signer.update(p);
    return signer.signature(d, { signTime });
  };
  const large = Buffer.concat([
    MESSAGES['multipart, as Posthorn builds it']!.subarray(0, -2),
    CRLF(['', ...Array.from({ length: 4000 }, (_, i) => `line ${i}  with\t trailing space  `), '----_b-1--', '']),
  ]);

  for (const [name, raw] of Object.entries({ ...MESSAGES, 'a longer one': large }))
    test(`${name}: the signature of the whole, or none (to be signed whole)`, async () => {
      const whole = raw.includes('\r\n\r\n') && !/(^|[^\r])\n|\r(?!\n)/.test(raw.toString('latin1'));
      for (const [seed, max] of [
        [1, 3],
        [2, 100],
        [3, 70_000],
      ] as const) {
        const got = signedInPieces(inPieces(raw, seed, max), domain(seed === 2));
        if (!whole) expect(got).toBeNull();
        else expect(got).toBe(await dkimSignature(raw, domain(seed === 2), { signTime }));
      }
    });

  test('a lone CR or LF anywhere, across a cut or at the very end: none', () => {
    const base = MESSAGES['multipart, as Posthorn builds it']!;
    for (const bad of ['x\ry', 'x\ny', '\r', 'x\r'])
      for (const at of [base.byteLength - 4, base.byteLength])
        for (const max of [1, 2, 5, 1000]) {
          const raw = Buffer.concat([base.subarray(0, at), Buffer.from(bad, 'latin1'), base.subarray(at)]);
          expect(signedInPieces(inPieces(raw, max, max), domain(false))).toBeNull();
        }
  });
});

describe('RSA signatures by OpenSSL', () => {
  // libcrypto.so.3 (Debian's libssl3) is installed by .ci/run; the delivery path checks each key against node:crypto before use.
  test('loads, and signs exactly as node:crypto does: 1024 to 4096 bits, empty to 1 MB', () => {
    const lib = openSsl();
    expect(lib).not.toBeNull();
    const random = rng(7);
    for (const bits of [1024, 2048, 4096]) {
      const { privateKey } = generateKeyPairSync('rsa', { modulusLength: bits });
      const key = lib!.rsaKey(privateKey.export({ format: 'der', type: 'pkcs8' }))!;
      expect(key).not.toBeNull();
      for (const size of [0, 1, 300, 1 << 20]) {
        const data = Buffer.from(Array.from({ length: Math.min(size, 4096) }, () => int(random, 256))).subarray(0, size);
        const bytes = size > 4096 ? Buffer.alloc(size, 7) : data;
        const signature = key.sign(bytes);
        expect(signature.length).toBe(bits / 8);
        expect(signature.equals(sign('sha256', bytes, privateKey))).toBe(true);
        expect(verify('sha256', bytes, createPublicKey(privateKey), signature)).toBe(true);
      }
      key.free();
      expect(() => key.sign(Buffer.from('x'))).toThrow('freed');
    }
  });

  test('a key it cannot read is null, not a crash: garbage, truncated DER, an Ed25519 key, the traditional RSA form', () => {
    const lib = openSsl()!;
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const der = privateKey.export({ format: 'der', type: 'pkcs8' });
    expect(lib.rsaKey(Buffer.from('not a key'))).toBeNull();
    expect(lib.rsaKey(der.subarray(0, 100))).toBeNull();
    expect(lib.rsaKey(new Uint8Array(0))).toBeNull();
    // d2i_AutoPrivateKey reads any key type; an Ed25519 one is too small for RSA's size check and is refused or unusable.
    const edKey = lib.rsaKey(createPrivateKey(ed.private_key).export({ format: 'der', type: 'pkcs8' }));
    if (edKey) edKey.free();
    const pkcs1 = lib.rsaKey(privateKey.export({ format: 'der', type: 'pkcs1' }))!;
    expect(pkcs1.sign(Buffer.from('x')).equals(sign('sha256', Buffer.from('x'), privateKey))).toBe(true);
    pkcs1.free();
  });
});
