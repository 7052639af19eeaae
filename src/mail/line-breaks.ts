// RFC 5322 §2.3: a message's lines end in CRLF; CR and LF never appear alone. Checks of a message's
// bytes for a lone LF or CR, for code that must hand such a message to a slower, converting path.

/** Does `b` hold an LF not preceded by a CR? */
export function hasBareLf(b: Uint8Array): boolean {
  const buf = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  for (let i = buf.indexOf(10); i >= 0; i = buf.indexOf(10, i + 1)) if (i === 0 || buf[i - 1] !== 13) return true;
  return false;
}

/** Does `b` hold a CR not followed by an LF? */
export function hasBareCr(b: Uint8Array): boolean {
  const buf = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  for (let i = buf.indexOf(13); i >= 0; i = buf.indexOf(13, i + 1)) if (buf[i + 1] !== 10) return true;
  return false;
}
