// DKIM signing of outgoing mail (RFC 6376): rsa-sha256, relaxed/relaxed (§3.4.2, §3.4.4), d= the
// sender domain, s= its selector — and, for a domain with an Ed25519 key, a second signature
// ed25519-sha256 (RFC 8463) under that key's selector: receivers that know Ed25519 check it, the
// others ignore it and check the RSA one (RFC 8463 §1). Signed per attempt from the stored unsigned
// message, with mailauth (nodemailer's signer sends an ed25519-keyed message unsigned without an
// error, and dkim-signer is unmaintained). The DKIM-Signature header goes in front of the message
// (§5.6). Errors never carry the key.
//
// mailauth's own signer parses the PEM key again for every message and signs through Bun's
// node:crypto. Here a message with CRLF line ends — all that Posthorn builds, and all SMTP
// carries — is signed from mailauth's parts (its header parser, body hash, header
// canonicalization and header formatting) with keys parsed once per thread, and RSA by the system's
// OpenSSL where it loads (openssl.ts): about a third of the CPU per signature. The output is the
// same, byte for byte (test/mail/dkim.test.ts). Anything else goes through mailauth's signer.
// Those parts are mailauth's undocumented `lib/` modules (typed in mailauth-parts.d.ts): mailauth is
// pinned to an exact version, and test/dependencies/mailauth.test.ts checks them on the vectors of
// RFC 6376 and RFC 8463 (docs/ARCHITECTURE.md §5, "Where Posthorn reaches into a library").
import { createHash, createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { dkimSign } from 'mailauth/lib/dkim/sign';
import { parseHeaders, getSigningHeaderLines, formatSignatureHeaderLine, toALabel } from 'mailauth/lib/tools';
import { dkimBody } from 'mailauth/lib/dkim/body';
import { generateCanonicalizedHeader } from 'mailauth/lib/dkim/header';
import { openSsl, type OpenSslRsaKey } from './openssl';
import { hasBareLf } from './line-breaks';

/** What signing needs of a domain: its name and DKIM key. */
export interface DkimDomain {
  name: string;
  dkim: { selector: string; private_key: string };
  /** Also sign with this Ed25519 key. */
  ed25519?: { selector: string; private_key: string };
}

// The header fields signed: mailauth's default list (RFC 6376 §5.4.1's recommendation) plus
// List-Unsubscribe-Post, which RFC 8058 §4 requires the signature to cover for one-click
// unsubscribe (broadcasts), and Feedback-ID, which Gmail's feedback loop reads only from signed
// messages (`delivery.feedback_id`). Fields absent from a message are simply not signed.
const SIGNED_HEADERS = [
  'From',
  'Sender',
  'Reply-To',
  'Subject',
  'Date',
  'Message-ID',
  'To',
  'Cc',
  'MIME-Version',
  'Content-Type',
  'Content-Transfer-Encoding',
  'Content-ID',
  'Content-Description',
  'Resent-Date',
  'Resent-From',
  'Resent-Sender',
  'Resent-To',
  'Resent-Cc',
  'Resent-Message-ID',
  'In-Reply-To',
  'References',
  'List-Id',
  'List-Help',
  'List-Unsubscribe',
  'List-Unsubscribe-Post',
  'List-Subscribe',
  'List-Post',
  'List-Owner',
  'List-Archive',
  'BIMI-Selector',
  'Feedback-ID',
].join(':');

export class DkimError extends Error {}

type Algorithm = 'rsa-sha256' | 'ed25519-sha256';
interface Signature {
  selector: string;
  privateKey: string;
  algorithm: Algorithm;
}

/** The DKIM-Signature header field(s) (CRLF-terminated) to put in front of `raw`. */
export async function dkimSignature(raw: Uint8Array, d: DkimDomain, opts: { signTime?: Date } = {}): Promise<string> {
  const message = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  const all = signaturesOf(d);
  const parts = crlfParts(message);
  return parts ? signParts(parts, d.name, all, opts.signTime ?? new Date()) : signWithMailauth(message, d.name, all, opts.signTime);
}

/** The message's header section (with its last CRLF) and body, if every line ends in CRLF and a header section ends in an empty line; null otherwise. */
function crlfParts(m: Buffer): { header: Buffer; body: Buffer } | null {
  // A bare LF is made a CRLF by mailauth's parser before hashing (and by the SMTP client when
  // sending); its rules for such input are its own, so that input stays with it.
  if (hasBareLf(m)) return null;
  const end = m.indexOf('\r\n\r\n');
  // An empty first line (an empty header section) or none at all: mailauth's parser again.
  if (end <= 0) return null;
  return { header: m.subarray(0, end + 2), body: m.subarray(end + 4) };
}

// RFC 6376 §3.5: a tag value never holds a semicolon, whitespace or a control character.
const UNSAFE_TAG_VALUE = /[^\x21-\x3a\x3c-\x7e]/;

function signParts(parts: { header: Buffer; body: Buffer }, domain: string, all: Signature[], signTime: Date): string {
  const hasher = bodyHasher();
  hasher.update(parts.body);
  return signHeader(parts.header, hasher.digest('base64'), domain, all, signTime);
}

/** relaxed body canonicalization (§3.4.4), SHA-256, the whole body (no l=). */
const bodyHasher = () => dkimBody('relaxed', 'sha256', false);

const signaturesOf = (d: DkimDomain): Signature[] => [
  { selector: d.dkim.selector, privateKey: d.dkim.private_key, algorithm: 'rsa-sha256' },
  ...(d.ed25519 ? [{ selector: d.ed25519.selector, privateKey: d.ed25519.private_key, algorithm: 'ed25519-sha256' as const }] : []),
];

/**
 * dkimSignature of a message read in pieces (a large one, never held whole): the header section
 * kept, the body hashed as it passes. `signature` is null when the message is not one signParts
 * signs — a lone CR or LF anywhere (the composer converts such a message, mime.ts), no header
 * section — and the message is then signed whole.
 */
export class DkimPieces {
  private head: Buffer | null = Buffer.alloc(0);
  private header: Buffer | null = null;
  private readonly hasher = bodyHasher();
  /** The last byte of the previous piece (a CR or LF may pair across two pieces). */
  private last = -1;
  private lone = false;

  update(piece: Uint8Array): void {
    const b = Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
    if (!b.byteLength || this.lone) return;
    // An LF pairs with the CR before it, a CR with the LF after it — in the last piece, or the next.
    if (this.last === 13 && b[0] !== 10) this.lone = true;
    for (let i = b.indexOf(10); i >= 0 && !this.lone; i = b.indexOf(10, i + 1)) if ((i ? b[i - 1] : this.last) !== 13) this.lone = true;
    for (let i = b.indexOf(13); i >= 0 && !this.lone; i = b.indexOf(13, i + 1)) if (i + 1 < b.byteLength && b[i + 1] !== 10) this.lone = true;
    this.last = b[b.byteLength - 1]!;
    if (this.lone) return;
    if (this.head) {
      const head = Buffer.concat([this.head, b]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        this.head = head;
        return;
      }
      this.head = null;
      this.header = end > 0 ? head.subarray(0, end + 2) : null;
      if (!this.header) this.lone = true;
      else this.hasher.update(head.subarray(end + 4));
      return;
    }
    this.hasher.update(b);
  }

  /** The DKIM-Signature header field(s), as dkimSignature gives them for the whole message; null: sign it whole. */
  signature(d: DkimDomain, opts: { signTime?: Date } = {}): string | null {
    if (this.lone || this.last === 13 || !this.header) return null;
    return signHeader(this.header, this.hasher.digest('base64'), d.name, signaturesOf(d), opts.signTime ?? new Date());
  }
}

function signHeader(header: Buffer, bodyHash: string, domain: string, all: Signature[], signTime: Date): string {
  const lines = getSigningHeaderLines(parseHeaders(header).parsed, SIGNED_HEADERS);
  // §5.4: From MUST be signed; a signature without it fails at every verifier (§6.1.1).
  if (!lines.headers.some((h) => h.key === 'from')) throw new DkimError(`DKIM signing for ${domain} failed: ENOFROM`);
  const timestamp = Math.floor(signTime.getTime() / 1000);
  let out = '';
  for (const s of all) {
    for (const value of [domain, s.selector])
      if (!value || UNSAFE_TAG_VALUE.test(toALabel(value))) throw new DkimError(`DKIM signing for ${domain} failed: invalid d= or s= value`);
    const key = signingKey(s.privateKey, domain);
    if (key.type !== s.algorithm.split('-')[0]) throw new DkimError(`DKIM signing for ${domain} failed: EINVALIDTYPE`);
    const { canonicalizedHeader, dkimHeaderOpts } = generateCanonicalizedHeader('DKIM', lines, {
      signingDomain: domain,
      selector: s.selector,
      algorithm: s.algorithm,
      canonicalization: 'relaxed/relaxed',
      timestamp,
      expiration: false,
      bodyHash,
    });
    // rsa-sha256 signs the canonicalized header with SHA-256 (§3.3.1); ed25519-sha256 signs its
    // SHA-256 hash with PureEdDSA (RFC 8463 §3).
    dkimHeaderOpts.b = (
      key.type === 'rsa' ? key.sign(canonicalizedHeader) : sign(null, createHash('sha256').update(canonicalizedHeader).digest(), key.object)
    ).toString('base64');
    out += `${formatSignatureHeaderLine('DKIM', dkimHeaderOpts, true)}\r\n`;
  }
  return out;
}

async function signWithMailauth(message: Buffer, domain: string, all: Signature[], signTime?: Date): Promise<string> {
  const signatureData = all.map((s) => ({
    signingDomain: domain,
    selector: s.selector,
    privateKey: s.privateKey,
    algorithm: s.algorithm,
    canonicalization: 'relaxed/relaxed',
  }));
  // The signer reads its signatures from `signatureData` only; the top-level fields satisfy the type.
  const { signatures, errors } = await dkimSign(message, {
    ...signatureData[0]!,
    headerList: SIGNED_HEADERS,
    signatureData,
    ...(signTime ? { signTime } : {}),
  });
  if (!signatures) {
    const why = errors.map((e) => e.err?.code ?? e.err?.message ?? 'unknown').join('; ');
    throw new DkimError(`DKIM signing for ${domain} failed: ${why || 'no signature produced'}`);
  }
  return signatures;
}

// ---------------------------------------------------------------------------------------------
// Keys, parsed once per thread: a PEM parse costs about as much as hashing a message.
// ---------------------------------------------------------------------------------------------
interface SigningKey {
  type: 'rsa' | 'ed25519';
  object: KeyObject;
  /** RSA only: the signature of `data`, by OpenSSL where it loaded and agreed, else node:crypto. */
  sign(data: Uint8Array): Buffer;
}

/** Keys kept per thread: a team's domains and their rotations; the least recently used goes first. */
const MAX_KEYS = 256;
const keys = new Map<string, SigningKey & { native: OpenSslRsaKey | null }>();

function signingKey(pem: string, domain: string): SigningKey {
  const hit = keys.get(pem);
  if (hit) {
    keys.delete(pem);
    keys.set(pem, hit);
    return hit;
  }
  let object: KeyObject;
  try {
    object = createPrivateKey(pem);
  } catch (e) {
    throw new DkimError(`DKIM signing for ${domain} failed: the private key cannot be read (${(e as { code?: string }).code ?? 'invalid key'})`);
  }
  const type = object.asymmetricKeyType;
  if (type !== 'rsa' && type !== 'ed25519') throw new DkimError(`DKIM signing for ${domain} failed: unsupported key type ${type}`);
  const native = type === 'rsa' ? nativeRsaKey(object) : null;
  const key = { type, object, native, sign: (data: Uint8Array) => (native ? native.sign(data) : sign('sha256', data, object)) } as const;
  keys.set(pem, key);
  if (keys.size > MAX_KEYS) {
    const [oldest, old] = keys.entries().next().value!;
    keys.delete(oldest);
    old.native?.free();
  }
  return key;
}

/** The key in OpenSSL, if it loads there and signs a probe exactly as node:crypto does (PKCS#1 v1.5 is deterministic). */
function nativeRsaKey(object: KeyObject): OpenSslRsaKey | null {
  const lib = openSsl();
  if (!lib) return null;
  const native = lib.rsaKey(object.export({ format: 'der', type: 'pkcs8' }));
  if (!native) return null;
  const probe = Buffer.from('DKIM-Signature: probe');
  try {
    if (native.sign(probe).equals(sign('sha256', probe, object))) return native;
  } catch {
    // fall through: node:crypto signs with this key
  }
  native.free();
  return null;
}
