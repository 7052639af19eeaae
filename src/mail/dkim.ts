// DKIM signing of outgoing mail (RFC 6376): rsa-sha256, relaxed/relaxed (§3.4.2, §3.4.4), d= the
// sender domain, s= its selector — and, for a domain with an Ed25519 key, a second signature
// ed25519-sha256 (RFC 8463) under that key's selector: receivers that know Ed25519 check it, the
// others ignore it and check the RSA one (RFC 8463 §1). Signed per attempt from the stored unsigned message, with
// mailauth (nodemailer's signer sends an ed25519-keyed message unsigned without an error, and
// dkim-signer is unmaintained). The DKIM-Signature header goes in front of the message (§5.6).
// Errors never carry the key.
import { dkimSign } from 'mailauth/lib/dkim/sign';

/** What signing needs of a domain: its name and DKIM key. */
export interface DkimDomain {
  name: string;
  dkim: { selector: string; private_key: string };
  /** Also sign with this Ed25519 key. */
  ed25519?: { selector: string; private_key: string };
}

// The header fields signed: mailauth's default list (RFC 6376 §5.4.1's recommendation) plus
// List-Unsubscribe-Post, which RFC 8058 §4 requires the signature to cover for one-click
// unsubscribe (broadcasts). Fields absent from a message are simply not signed.
const SIGNED_HEADERS = [
  'From', 'Sender', 'Reply-To', 'Subject', 'Date', 'Message-ID', 'To', 'Cc', 'MIME-Version', 'Content-Type',
  'Content-Transfer-Encoding', 'Content-ID', 'Content-Description', 'Resent-Date', 'Resent-From', 'Resent-Sender',
  'Resent-To', 'Resent-Cc', 'Resent-Message-ID', 'In-Reply-To', 'References', 'List-Id', 'List-Help',
  'List-Unsubscribe', 'List-Unsubscribe-Post', 'List-Subscribe', 'List-Post', 'List-Owner', 'List-Archive', 'BIMI-Selector',
].join(':');

export class DkimError extends Error {}

/** The signed message as its two parts — the DKIM-Signature header, then the message as stored — so a large message is never copied to put them together. */
export async function signMessage(raw: Uint8Array, d: DkimDomain): Promise<[Buffer, Buffer]> {
  return [Buffer.from(await dkimSignature(raw, d), 'latin1'), Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength)];
}

/** The DKIM-Signature header field (CRLF-terminated) to put in front of `raw`. */
export async function dkimSignature(raw: Uint8Array, d: DkimDomain): Promise<string> {
  const message = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  const signature = {
    signingDomain: d.name,
    selector: d.dkim.selector,
    privateKey: d.dkim.private_key,
    algorithm: 'rsa-sha256',
    canonicalization: 'relaxed/relaxed',
    headerList: SIGNED_HEADERS,
  };
  const all = d.ed25519 ? [signature, { ...signature, selector: d.ed25519.selector, privateKey: d.ed25519.private_key, algorithm: 'ed25519-sha256' }] : [signature];
  // The signer reads its signatures from `signatureData` only; the top-level fields satisfy the type.
  const { signatures, errors } = await dkimSign(message, { ...signature, signatureData: all });
  if (!signatures) {
    const why = errors.map((e) => e.err?.code ?? e.err?.message ?? 'unknown').join('; ');
    throw new DkimError(`DKIM signing for ${d.name} failed: ${why || 'no signature produced'}`);
  }
  return signatures;
}
