// RFC 5321 §2.3.8: lines end with CRLF, and a bare CR or LF is no line ending. Servers that read a
// bare LF as one while the next hop does not can be made to see different messages in the same
// bytes (SMTP smuggling: `\n.\n` ending DATA early on one side only). Like Postfix ≥ 3.9
// (smtpd_forbid_bare_newline), Posthorn refuses them in commands and in DATA unless
// `smtp.allow_bare_newlines` is set for legacy senders.

const CR = 0x0d;
const LF = 0x0a;

export type Bare = 'LF' | 'CR';

/** Finds the first bare CR or LF in a byte stream given chunk by chunk, however it is split. */
export class LineEndingCheck {
  /** The previous chunk ended with a CR whose LF has not been seen yet. */
  private pendingCr = false;

  scan(chunk: Uint8Array): Bare | null {
    const len = chunk.length;
    if (!len) return null;
    if (this.pendingCr && chunk[0] !== LF) return 'CR';
    const buf = Buffer.from(chunk.buffer, chunk.byteOffset, len);
    // Every LF must follow a CR…
    for (let i = buf.indexOf(LF); i !== -1; i = buf.indexOf(LF, i + 1)) {
      if (i === 0 ? !this.pendingCr : buf[i - 1] !== CR) return 'LF';
    }
    // …and every CR must precede an LF (the last byte may wait for the next chunk).
    for (let i = buf.indexOf(CR); i !== -1; i = buf.indexOf(CR, i + 1)) {
      if (i === len - 1) break;
      if (buf[i + 1] !== LF) return 'CR';
    }
    this.pendingCr = buf[len - 1] === CR;
    return null;
  }
}
